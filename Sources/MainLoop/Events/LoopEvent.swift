// LoopEvent.swift: one libevent event (a timer, a watched fd or a signal)
// owned by a loop, and the cancellation rule the public handles promise.
//
// Cancellation rule: `event` is taken (set to nil) under `lock` exactly once,
// by whoever ends the event: `cancel()` from any thread, the loop after a
// one-shot timer fired, or the loop's shutdown. That party then frees it
// *outside* the lock with `event_free`, which (threading enabled, no
// EV_FINALIZE) waits for a callback running on the loop thread to return.
// The callback checks `event` before it calls the handler. Together: once
// `cancel()` returns, the handler is not running and never starts again, so
// a watched fd may be closed. (On the loop thread itself, inside the handler,
// `event_free` does not wait.)
import CLibevent
import Glibc

final class LoopEvent: @unchecked Sendable, Hashable {
    // `@unchecked Sendable`: `event` is guarded by `lock`; the handler is
    // `@Sendable` and only ever called by the loop thread.

    enum Handler {
        case timer(@Sendable () -> Void)
        case io(@Sendable (IOEvents) -> Void)
    }

    private let lock = Lock()
    // Guarded by `lock`. nil once the event has ended.
    private var event: OpaquePointer?
    private let handler: Handler
    private let oneShot: Bool
    private let loop: EventLoop
    /// Called once when the event ends, whatever ended it.
    private let onEnd: (@Sendable () -> Void)?

    private init(loop: EventLoop, handler: Handler, oneShot: Bool, onEnd: (@Sendable () -> Void)?) {
        self.loop = loop
        self.handler = handler
        self.oneShot = oneShot
        self.onEnd = onEnd
    }

    /// Makes the event, registers it with `loop` (so stop() cancels it) and adds it.
    static func start(
        on loop: EventLoop, fd: Int32, flags: Int32, timeout: Duration?, oneShot: Bool, handler: Handler,
        onEnd: (@Sendable () -> Void)? = nil
    ) throws(EventLoopError) -> LoopEvent {
        let core = try loop.core()
        let registration = LoopEvent(loop: loop, handler: handler, oneShot: oneShot, onEnd: onEnd)
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
            onEnd?()
            throw .system(call: "event_new", errno: ENOMEM)
        }
        registration.lock.withLock { registration.event = event }
        do {
            try loop.register(registration)
        } catch {
            registration.cancel()
            throw error
        }
        // Added under the lock, so a concurrent cancel() cannot free it in between.
        var failure: Int32 = 0
        registration.lock.withLock {
            guard let event = registration.event else { return }
            let rc: Int32
            if let timeout {
                var interval = timeval(timeout)
                rc = event_add(event, &interval)
            } else {
                rc = event_add(event, nil)
            }
            if rc != 0 { failure = errno == 0 ? EINVAL : errno }
        }
        if failure != 0 {
            registration.cancel()
            throw .system(call: "event_add", errno: failure)
        }
        return registration
    }

    /// Loop thread, from libevent's callback.
    private func fire(_ what: Int16) {
        guard lock.withLock({ event != nil }) else { return }
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
        if oneShot { cancel() }
    }

    /// Ends the event (see the cancellation rule at the top of this file). Idempotent.
    func cancel() {
        // In a child of fork(), a parent's event is left alone: freeing it
        // would take libevent's lock (which a vanished thread may hold) and
        // remove the parent's fd from the epoll set both processes share.
        if loop.leftBehindByFork { return }
        let ended = lock.withLock { () -> OpaquePointer? in
            defer { event = nil }
            return event
        }
        guard let ended else { return }
        loop.unregister(self)
        event_free(ended)
        onEnd?()
        Unmanaged.passUnretained(self).release()
    }

    var isActive: Bool { lock.withLock { event != nil } }

    static func == (lhs: LoopEvent, rhs: LoopEvent) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension timeval {
    /// A libevent timeout from a Duration; negative durations become zero.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds < 0) {
            self.init(tv_sec: 0, tv_usec: 0)
        } else {
            let microseconds = attoseconds / 1_000_000_000_000
            self.init(tv_sec: Int(clamping: seconds), tv_usec: Int(microseconds))
        }
    }
}
