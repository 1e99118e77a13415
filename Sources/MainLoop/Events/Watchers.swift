// Watchers.swift: file descriptors and signals the loop reacts to.
import CLibevent

/// Readiness of a file descriptor.
public struct IOEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The descriptor is readable (or at end of file, or in error).
    public static let read = IOEvents(rawValue: 1 << 0)
    /// The descriptor is writable.
    public static let write = IOEvents(rawValue: 1 << 1)

    init(libeventFlags flags: Int16) {
        var events: IOEvents = []
        if Int32(flags) & EV_READ != 0 { events.insert(.read) }
        if Int32(flags) & EV_WRITE != 0 { events.insert(.write) }
        self = events
    }

    var libeventFlags: Int32 {
        (contains(.read) ? EV_READ : 0) | (contains(.write) ? EV_WRITE : 0)
    }
}

/// A watched file descriptor or signal, as returned by
/// ``EventLoop/watch(fd:for:_:)`` and ``EventLoop/onSignal(_:_:)``.
public struct Watch: Sendable, Hashable {
    let registration: LoopEvent

    /// Stops watching. Callable from any thread, any number of times.
    ///
    /// After `cancel()` returns the handler never starts again and a watched
    /// fd may be closed. Called from another thread while the handler runs,
    /// it waits for the handler to return.
    public func cancel() {
        registration.cancel()
    }

    /// True until cancelled or the loop stopped.
    public var isActive: Bool { registration.isActive }
}

extension EventLoop {
    /// Calls `handler` on the loop whenever `fd` is ready for any of `events`
    /// (level-triggered), passing the events that are ready.
    ///
    /// The loop does not own `fd`: cancel the watch before closing it.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` for a negative fd or
    ///   an empty event set; ``EventLoopError/shutDown`` once ``stop()`` has
    ///   been called; ``EventLoopError/system(call:errno:)`` if libevent
    ///   refuses the fd (for example one that cannot be polled).
    public func watch(fd: Int32, for events: IOEvents, _ handler: @escaping @Sendable (IOEvents) -> Void) throws
        -> Watch
    {
        guard fd >= 0 else { throw EventLoopError.invalidArgument("watch(fd:) needs a file descriptor, got \(fd)") }
        guard !events.isEmpty else { throw EventLoopError.invalidArgument("watch(fd: \(fd), for: []) watches nothing") }
        return Watch(
            registration: try LoopEvent.start(
                on: self, fd: fd, flags: events.libeventFlags | EV_PERSIST,
                handler: .io(handler)))
    }

    /// Calls `handler` on the loop each time the process receives `signal`.
    ///
    /// libevent delivers signals to one loop at a time: handle all signals on
    /// one loop, ``EventLoop/main`` in a program whose main loop runs only
    /// short jobs, or a loop of their own in a daemon whose core is on the
    /// main loop (a handler waits for its loop's turn). The signal must be unblocked in
    /// at least one thread; a process started with it blocked (children of
    /// libdispatch threads inherit such a mask) should unblock it with
    /// `pthread_sigmask` before it starts threads.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` for a number that is
    ///   not a signal; ``EventLoopError/shutDown`` once ``stop()`` has been
    ///   called; ``EventLoopError/system(call:errno:)`` for a signal that
    ///   cannot be caught (SIGKILL, SIGSTOP).
    public func onSignal(_ signal: Int32, _ handler: @escaping @Sendable () -> Void) throws -> Watch {
        guard signal > 0 && signal < 65 else {
            throw EventLoopError.invalidArgument("onSignal(\(signal)): not a signal number")
        }
        return Watch(
            registration: try LoopEvent.start(
                on: self, fd: signal, flags: EV_SIGNAL | EV_PERSIST,
                handler: .timer(handler)))
    }
}
