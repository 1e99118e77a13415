// Waiter.swift: blocking posts. The record a blocked caller sleeps on, its
// timeout withdrawal, and the wait-for graph that turns a cycle of loops
// waiting on each other into `.deadlock` instead of a hang.

/// A `postAndWait` in flight. The caller sleeps on `parker` while the loop
/// runs the work; exactly one side moves the record out of `.pending`:
/// the loop (`run`, to `.running`), the caller (timeout, to `.withdrawn`) or
/// the loop's shutdown (`abandon`, to `.abandoned`).
///
/// `@unchecked Sendable`: `work` and the result cross threads, but every
/// access to `state` is under the parker's lock, and the caller is blocked
/// while the loop thread uses the work, which is what makes a non-`Sendable`
/// closure and result safe to hand over (as with `DispatchQueue.sync`).
final class BlockingCall<T>: WaitingRecord, @unchecked Sendable {
    private enum State {
        case pending(() throws -> T)
        case running
        case finished(Result<T, any Error>)
        case withdrawn
        case abandoned(EventLoopError)
    }

    private let parker = Parker()
    // Guarded by `parker`'s lock.
    private var state: State

    init(_ work: @escaping () throws -> T) {
        state = .pending(work)
    }

    /// Loop thread.
    func run() {
        let result: Result<T, any Error>
        do {
            parker.lock()
            guard case .pending(let work) = state else {
                parker.unlock()
                return   // withdrawn by a timed-out caller: never runs
            }
            state = .running
            parker.unlock()
            result = Result(catching: work)
        }
        // `work` is out of scope: the caller's closure is no longer
        // referenced once the caller wakes (withoutActuallyEscaping checks).
        if FaultInjection.dropsReleases { return }
        parker.lock()
        state = .finished(result)
        parker.unlock()
        parker.signal()
    }

    func abandon(_ error: EventLoopError) {
        parker.lock()
        if case .pending = state {
            state = .abandoned(error)
        }
        parker.unlock()
        parker.signal()
    }

    /// Caller thread: sleeps until the work has run (returning its result or
    /// rethrowing its error) or was abandoned, or until `deadline` passes
    /// before the loop started it, in which case the work is withdrawn and
    /// `.timedOut` is thrown. Once the loop has started the work, the caller
    /// waits for it whatever the deadline.
    func wait(until deadline: UInt64?) throws -> T {
        parker.lock()
        defer { parker.unlock() }
        while true {
            switch state {
            case .finished(let result):
                state = .withdrawn   // drop the result; nothing refers to `work`
                return try result.get()
            case .abandoned(let error):
                throw error
            case .withdrawn:
                preconditionFailure("BlockingCall waited on twice")
            case .running:
                _ = parker.wait(until: nil)
            case .pending:
                if !parker.wait(until: deadline), case .pending = state {
                    state = .withdrawn
                    throw EventLoopError.timedOut
                }
            }
        }
    }
}

/// Which loop's thread is blocked waiting on which loop: the edges of the
/// wait-for graph. A loop thread can block on one loop at a time, so each
/// loop has at most one outgoing edge and a cycle check is a walk along a
/// chain. Guarded by one process-wide lock: edges only change when a loop
/// thread blocks on another loop, which is rare and slow anyway.
enum WaitForGraph {
    private static let lock = Lock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var edges: [ObjectIdentifier: EventLoop] = [:]

    /// Records that `waiter`'s thread is about to block on `target`, or
    /// throws `.deadlock` if `target` is (through any chain) blocked on `waiter`.
    static func block(_ waiter: EventLoop, on target: EventLoop) throws(EventLoopError) {
        lock.lock()
        defer { lock.unlock() }
        var next: EventLoop? = target
        while let loop = next {
            if loop === waiter { throw .deadlock }
            next = edges[ObjectIdentifier(loop)]
        }
        edges[ObjectIdentifier(waiter)] = target
    }

    static func unblock(_ waiter: EventLoop) {
        lock.withLock { _ = edges.removeValue(forKey: ObjectIdentifier(waiter)) }
    }

    /// The loop `loop`'s thread is blocked on right now, if any.
    static func target(of loop: EventLoop) -> EventLoop? {
        lock.withLock { edges[ObjectIdentifier(loop)] }
    }
}
