// Posting.swift: fire-and-forget posts. Each is a `Job.work` handed to
// `enqueue` (Waiting/RoomWait.swift), which wakes the loop when it sleeps and
// applies the post's policy when a bounded mailbox is full.

extension EventLoop {
    /// Hands `work` to the loop, which runs it on its thread; returns at once
    /// (with a bounded mailbox that is full: once the loop has made room).
    ///
    /// Posts from one thread run in the order they were made. Posting from
    /// the loop's own thread is allowed: the work runs in a later turn, after
    /// I/O and timers were served.
    /// - Throws: ``EventLoopError/shutDown`` once ``stop()`` has been called
    ///   (also while waiting for room); the work was not accepted and will never run.
    @inline(__always)
    public func post(_ work: @escaping @Sendable () -> Void) throws {
        try enqueue(.work(work))
    }

    /// As ``post(_:)``, but waits at most `timeout` for room in a full
    /// bounded mailbox.
    /// - Throws: ``EventLoopError/timedOut`` when no room came in time (the
    ///   work was not accepted and will never run); ``EventLoopError/shutDown``.
    public func post(timeout: Duration, _ work: @escaping @Sendable () -> Void) throws {
        try enqueue(.work(work), policy: .wait(until: monotonicDeadline(after: timeout)))
    }

    /// As ``post(_:)``, but never waits: a full bounded mailbox refuses the work.
    /// - Throws: ``EventLoopError/full`` (nothing was enqueued); ``EventLoopError/shutDown``.
    public func tryPost(_ work: @escaping @Sendable () -> Void) throws {
        try enqueue(.work(work), policy: .refuse)
    }
}
