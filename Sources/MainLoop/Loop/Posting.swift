// Posting.swift: fire-and-forget posts. Each is a `Job.work` handed to
// `enqueue` (Mailbox/Mailbox.swift), which wakes the loop when it sleeps and
// applies the post's policy when a bounded mailbox is full. Every post takes
// its call site (`#fileID`, `#line`) as default arguments: compile-time
// constants, stored only when somebody asked for slow jobs or stalls by name.

extension EventLoop {
    /// Hands `work` to the loop, which runs it on its thread; returns at once
    /// (with a bounded mailbox that is full: once the loop has made room).
    ///
    /// Posts from one thread run in the order they were made. Posting from
    /// the loop's own thread is allowed: the work runs in a later turn, after
    /// I/O and timers were served.
    /// - Throws: ``EventLoopError/shutDown`` once ``stop()`` has been called
    ///   (also while waiting for room); the work was not accepted and will never run.
    ///
    /// Inlinable: the call site's `#fileID` and `#line` are constants there,
    /// so the post site costs the caller a couple of instructions.
    @inlinable @inline(__always)
    public func post(
        file: StaticString = #fileID, line: UInt = #line, _ work: consuming @escaping @Sendable () -> Void
    ) throws {
        try enqueue(.work(consume work), site: PostSite(file: file, line: line))
    }

    /// As ``post(file:line:_:)-16vnh``, but waits at most `timeout` for room in a full
    /// bounded mailbox.
    /// - Throws: ``EventLoopError/timedOut`` when no room came in time (the
    ///   work was not accepted and will never run); ``EventLoopError/shutDown``.
    public func post(
        timeout: Duration, file: StaticString = #fileID, line: UInt = #line,
        _ work: consuming @escaping @Sendable () -> Void
    ) throws {
        try enqueue(
            .work(consume work), site: PostSite(file: file, line: line),
            policy: .wait(until: monotonicDeadline(after: timeout)))
    }

    /// As ``post(file:line:_:)-16vnh``, but never waits: a full bounded mailbox refuses the work.
    /// - Throws: ``EventLoopError/full`` (nothing was enqueued); ``EventLoopError/shutDown``.
    public func tryPost(
        file: StaticString = #fileID, line: UInt = #line, _ work: consuming @escaping @Sendable () -> Void
    ) throws {
        try enqueue(.work(consume work), site: PostSite(file: file, line: line), policy: .refuse)
    }

    /// Hands `work` to the loop's urgent lane: it runs before every
    /// non-urgent job still pending, the rest of the batch the loop is
    /// running included, and after the urgent posts made before it (FIFO).
    ///
    /// For what must not wait behind a queue: a health check, a shutdown
    /// request, a heartbeat. Urgent posts are admitted even when a bounded
    /// mailbox is full (they never wait for room), and are refused once
    /// ``stop()`` was called, like any post. The lane has no bound of its
    /// own (what is urgent must be rare): its posts take no room from the
    /// others and do not count toward ``EventLoopStats/highWaterMark``. They cannot starve I/O and
    /// timers: those still get their turn between the loop's batches.
    /// - Throws: ``EventLoopError/shutDown`` once ``stop()`` has been called.
    public func postUrgent(
        file: StaticString = #fileID, line: UInt = #line, _ work: consuming @escaping @Sendable () -> Void
    ) throws {
        try enqueueUrgent(.work(consume work), site: PostSite(file: file, line: line))
    }
}
