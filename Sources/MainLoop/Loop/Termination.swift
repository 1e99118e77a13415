// Termination.swift: the latch behind `join` and `terminated()`, opened once
// when a loop has finished for good (its `run()` returned after `stop()`,
// its spawned thread is exiting, or it was stopped before it ever ran).

/// `@unchecked Sendable`: `ended` and `continuations` are guarded by the
/// parker's lock.
final class Termination: @unchecked Sendable {
    private let parker = Parker()
    private var ended = false
    private var continuations: [CheckedContinuation<Void, Never>] = []

    /// Opens the latch (idempotent) and releases every waiter.
    func open() {
        parker.lock()
        if ended {
            parker.unlock()
            return
        }
        ended = true
        let waiting = continuations
        continuations = []
        parker.unlock()
        if FaultInjection.dropsReleases { return }
        parker.broadcast()
        for continuation in waiting { continuation.resume() }
    }

    /// Child of fork() only, for a loop left behind in the parent: opens
    /// the latch without waking anybody (its waiters were the parent's
    /// threads and tasks, and did not survive the fork).
    func openInForkedChild() {
        parker.remakeInForkedChild()
        ended = true
        continuations = []
    }

    var isOpen: Bool {
        parker.lock()
        defer { parker.unlock() }
        return ended
    }

    /// Blocks until open or until `deadline` (monotonic ns; nil: no bound).
    /// Returns false when the deadline passed first.
    func wait(until deadline: UInt64?) -> Bool {
        parker.lock()
        defer { parker.unlock() }
        while !ended {
            if !parker.wait(until: deadline) { return ended }
        }
        return true
    }

    /// Suspends until open.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            parker.lock()
            if ended {
                parker.unlock()
                continuation.resume()
            } else {
                continuations.append(continuation)
                parker.unlock()
            }
        }
    }
}
