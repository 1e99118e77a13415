// Timers.swift: work the loop runs later, once or periodically.

/// A timer on an ``EventLoop``, as returned by ``EventLoop/schedule(after:_:)``
/// and ``EventLoop/schedule(every:_:)``.
public struct Scheduled: Sendable, Hashable {
    let registration: LoopEvent

    /// Cancels the timer. Callable from any thread, any number of times.
    ///
    /// After `cancel()` returns the handler never starts again. Called from
    /// another thread while the handler runs, it waits for the handler to
    /// return (so do not call it from a thread the handler itself waits on).
    public func cancel() {
        registration.cancel()
    }

    /// True until the timer is cancelled, a one-shot timer has fired, or its loop stopped.
    public var isPending: Bool { registration.isActive }
}

extension EventLoop {
    /// Runs `work` on the loop once, no earlier than `delay` from now.
    ///
    /// The delay is measured on `CLOCK_MONOTONIC`. Timers one thread schedules
    /// with the same delay run in the order it scheduled them. A negative or zero
    /// delay runs it as soon as the loop gets to it, never inside the job or
    /// handler that scheduled it. Stopping the loop cancels the timer if it
    /// has not fired.
    /// - Throws: ``EventLoopError/shutDown`` once ``stop()`` has been called.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) throws -> Scheduled {
        try schedule(after: delay, work, onEnd: nil)
    }

    /// As ``schedule(after:_:)``; `onEnd` runs once when the timer ends,
    /// whether it fired, was cancelled, or its loop stopped.
    func schedule(
        after delay: Duration, _ work: @escaping @Sendable () -> Void, onEnd: (@Sendable () -> Void)?
    ) throws(EventLoopError) -> Scheduled {
        Scheduled(
            registration: try LoopEvent.startTimer(on: self, after: delay, every: nil, handler: work, onEnd: onEnd))
    }

    /// Runs `work` on the loop every `interval`, first after one interval,
    /// until the timer is cancelled or the loop stops.
    ///
    /// The k-th run is never before k intervals. After the loop was busy
    /// for longer than an interval, the timer runs once and then one
    /// interval later, not once for each period missed.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` for an interval that
    ///   is not positive; ``EventLoopError/shutDown`` once ``stop()`` has been called.
    @discardableResult
    public func schedule(every interval: Duration, _ work: @escaping @Sendable () -> Void) throws -> Scheduled {
        guard interval > .zero else {
            throw EventLoopError.invalidArgument("schedule(every:) needs a positive interval, got \(interval)")
        }
        return Scheduled(
            registration: try LoopEvent.startTimer(
                on: self, after: interval, every: interval, handler: work, onEnd: nil))
    }
}
