// WaitForGraph.swift: the wait-for graph that turns a cycle of loops
// waiting on each other into `.deadlock` instead of a hang.

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
