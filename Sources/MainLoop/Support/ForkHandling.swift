// ForkHandling.swift: what happens to MainLoop's state when a process with
// live loops calls fork().
//
// Only the forking thread exists in the child. Every loop made before the
// fork belongs to the parent: its thread (if it had one) is gone, and its
// libevent base and eventfd are shared with the parent (an epoll set
// survives fork as one object in both processes), so the child must never
// run, wake or even free them. The child handler therefore marks each such
// loop as left behind: it refuses every later call with
// `EventLoopError.forked`, `join` returns at once, cancelling its timers
// and watchers does nothing, and it is retained for good, so that its
// `deinit` (which would remove the parent's fds from the shared epoll set)
// never runs in the child. Loops the child makes afterwards are its own.
//
// Locks. A lock that another thread held at the fork stays locked in the
// child forever. The registry and the process-wide tables (the wait-for
// graph, the delayed performs) are taken by the prepare handler, so the
// child inherits them unlocked and consistent; they are leaf locks (nothing
// is locked inside them), so taking them cannot deadlock. A left-behind
// loop's own locks are re-made in the child instead: the child only ever
// overwrites what they guard (its lifecycle, its mailbox's phase, its
// termination latch), so a half-finished update by a vanished thread does
// not matter. What the vanished threads waited for (room in a mailbox, a
// result) is dropped without a wake-up: there is nobody left to wake.
//
// Swift's runtime has locks of its own that no handler can take: a generic
// type that another thread was setting up (its metadata) at the moment of
// the fork stays half made, and the child hangs when it first uses that
// type. So a refusal touches nothing generic (`postAndWait` checks
// `leftBehindByFork` before it makes its completion record, which is not
// generic either; `perform` makes its generic result box before the check,
// as it made its generic record before), and the child's own loops use the
// types the parent's loops already set up.
import CLibevent

enum ForkHandling {
    /// One registered loop; weak, so that registration never keeps a loop alive.
    private struct Entry {
        weak var loop: EventLoop?
    }

    private static let lock = Lock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var loops: [Entry] = []
    /// What the child keeps alive for good (see the top of this file).
    /// Written only by the child handler, while the child has one thread.
    nonisolated(unsafe) private static var keptForever: [EventLoop] = []

    /// Installs the handlers once, before the first loop is registered.
    private static let installed: Void = {
        let rc = pthread_atfork(
            { ForkHandling.prepare() }, { ForkHandling.resumeParent() }, { ForkHandling.resumeChild() })
        precondition(rc == 0, "MainLoop: pthread_atfork failed with errno \(rc)")
    }()

    /// Any thread: records a new loop, so that a child process can tell it
    /// was made by its parent.
    static func register(_ loop: EventLoop) {
        installed
        lock.withLock {
            loops.removeAll { $0.loop == nil }
            loops.append(Entry(loop: loop))
        }
    }

    private static func prepare() {
        lock.lock()
        WaitForGraph.prepareForFork()
        DelayedPerformRequests.prepareForFork()
    }

    private static func resumeParent() {
        DelayedPerformRequests.resumeParentAfterFork()
        WaitForGraph.resumeParentAfterFork()
        lock.unlock()
    }

    private static func resumeChild() {
        // The loops first: once kept, clearing the tables below (which hold
        // loops and their timers) can release nothing of the parent's.
        for entry in loops {
            guard let loop = entry.loop else { continue }
            loop.leaveBehindInForkedChild()
            keptForever.append(loop)
        }
        loops = []
        // The forking thread runs no loop in the child, even if it ran one
        // in the parent: `EventLoop.current` is nil, and a call on that loop
        // is refused like anybody's.
        pthread_setspecific(currentLoopKey, nil)
        DelayedPerformRequests.resumeChildAfterFork()
        WaitForGraph.resumeChildAfterFork()
        lock.unlock()
    }
}
