// LoopEvent.swift: one event owned by a loop (a timer, a watched fd or a
// signal), and the cancellation rule the public handles promise. Watched
// fds and signals are libevent events; timers live in the loop's
// `TimerQueue` (see there why not libevent's).
//
// Cancellation rule: the event's source is taken (set to nil) under `lock`
// exactly once, by whoever ends the event: `cancel()` from any thread, the
// loop after a one-shot timer fired, or the loop's shutdown. That party then
// ends it *outside* the lock: `event_free`, which (threading enabled, no
// EV_FINALIZE) waits for a callback running on the loop thread to return,
// or `TimerQueue.remove`, which waits the same way. The loop checks the
// source before it calls the handler. Together: once `cancel()` returns,
// the handler is not running and never starts again, so a watched fd may be
// closed. (On the loop thread itself, inside the handler, neither waits.)
import CLibevent
import Glibc

final class LoopEvent: @unchecked Sendable, Hashable {
    // `@unchecked Sendable`: `source` is guarded by `lock`; `place` by its
    // queue's lock; the handler is `@Sendable` and only ever called by the
    // loop thread.

    enum Handler {
        case timer(@Sendable () -> Void)
        case io(@Sendable (IOEvents) -> Void)
    }

    private enum Source {
        case libevent(OpaquePointer)
        case timer(TimerQueue)
    }

    private let lock = Lock()
    // Guarded by `lock`. nil once the event has ended.
    private var source: Source?
    private let handler: Handler
    private let loop: EventLoop
    /// Called once when the event ends, whatever ended it.
    private let onEnd: (@Sendable () -> Void)?

    /// A timer's place in its queue, guarded by the queue's lock.
    var place = TimerQueue.Place()
    /// A periodic timer's interval in nanoseconds; nil for a one-shot timer
    /// (and for a libevent event, which is never one-shot).
    let timerInterval: UInt64?

    private init(loop: EventLoop, handler: Handler, interval: UInt64? = nil, onEnd: (@Sendable () -> Void)?) {
        self.loop = loop
        self.handler = handler
        self.timerInterval = interval
        self.onEnd = onEnd
    }

    /// Makes a timer, registers it with `loop` (so stop() cancels it) and
    /// adds it to the loop's timers: once after `delay`, or, with an
    /// `interval`, every interval from then on.
    /// `now` (tests only): the clock's reading the delay counts from.
    static func startTimer(
        on loop: EventLoop, after delay: Duration, every interval: Duration?, handler: @escaping @Sendable () -> Void,
        onEnd: (@Sendable () -> Void)?, now: UInt64? = nil
    ) throws(EventLoopError) -> LoopEvent {
        let queue = try loop.core().timers
        let registration = LoopEvent(
            loop: loop, handler: .timer(handler), interval: interval.map { nanoseconds(of: $0) }, onEnd: onEnd)
        // One reference until the timer ends (released by `cancel`), as a
        // libevent event's context holds one.
        _ = Unmanaged.passRetained(registration)
        try registration.begin(.timer(queue))
        // A concurrent cancel() marked it removed, and then `add` does nothing.
        queue.add(registration, after: delay, onLoopThread: loop.inLoop, now: now)
        return registration
    }

    /// Makes a libevent event (a watched fd or a signal), registers it with
    /// `loop` (so stop() cancels it) and adds it.
    static func start(
        on loop: EventLoop, fd: Int32, flags: Int32, handler: Handler
    ) throws(EventLoopError) -> LoopEvent {
        let core = try loop.core()
        let registration = LoopEvent(loop: loop, handler: handler, onEnd: nil)
        // The event holds one reference to its registration until it is freed.
        let context = Unmanaged.passRetained(registration).toOpaque()
        guard
            let event = event_new(
                core.base, fd, Int16(flags),
                { _, what, context in
                    let registration = Unmanaged<LoopEvent>.fromOpaque(context!)
                    // Keep it alive across a handler that cancels it.
                    _ = registration.retain()
                    registration.takeUnretainedValue().fire(what)
                    registration.release()
                }, context)
        else {
            Unmanaged<LoopEvent>.fromOpaque(context).release()
            throw .system(call: "event_new", errno: ENOMEM)
        }
        try registration.begin(.libevent(event))
        // Added under the lock, so a concurrent cancel() cannot free it in between.
        var failure: Int32 = 0
        registration.lock.withLock {
            guard case .libevent(let event) = registration.source else { return }
            if event_add(event, nil) != 0 { failure = errno == 0 ? EINVAL : errno }
        }
        if failure != 0 {
            registration.cancel()
            throw .system(call: "event_add", errno: failure)
        }
        return registration
    }

    /// Takes `source` and registers with the loop (so stop() cancels it);
    /// if the loop refuses, ends it (which releases its reference) first.
    private func begin(_ source: Source) throws(EventLoopError) {
        lock.withLock { self.source = source }
        do {
            try loop.register(self)
        } catch {
            cancel()
            throw error
        }
    }

    /// Loop thread, from the timer queue (which holds it while it runs). A
    /// one-shot timer ends once it ran.
    func fireTimer() {
        fire(0)
        if timerInterval == nil { cancel() }
    }

    /// Loop thread, from libevent's callback or the timer queue.
    private func fire(_ what: Int16) {
        guard isActive else { return }
        // The watchdog sees a callback as the loop being busy, like a job.
        let monitor = try? loop.core().monitor
        switch handler {
        case .timer(let body):
            monitor?.beginCallback(.timer)
            body()
        case .io(let body):
            monitor?.beginCallback(.watch)
            body(IOEvents(libeventFlags: what))
        }
        monitor?.end()
        if loop.leftBehindByFork { LoopCore.returnedAfterFork() }
    }

    /// Ends the event (see the cancellation rule at the top of this file). Idempotent.
    func cancel() {
        // In a child of fork(), a parent's event is left alone: freeing it
        // would take libevent's lock (which a vanished thread may hold) and
        // remove the parent's fd from the epoll set both processes share.
        if loop.leftBehindByFork { return }
        let ended = lock.withLock { () -> Source? in
            defer { source = nil }
            return source
        }
        guard let ended else { return }
        loop.unregister(self)
        switch ended {
        case .libevent(let event): event_free(event)
        case .timer(let queue): queue.remove(self)
        }
        onEnd?()
        Unmanaged.passUnretained(self).release()
    }

    var isActive: Bool { lock.withLock { source != nil } }

    static func == (lhs: LoopEvent, rhs: LoopEvent) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
