// BlockingPost.swift: `postAndWait`, a post whose caller blocks on its
// thread's semaphore until the loop has run the work (see Completion.swift).

extension EventLoop {
    /// Runs `work` on the loop and blocks the calling thread until it has
    /// run, returning its value or rethrowing its error.
    ///
    /// Called on the loop's own thread, `work` runs inline at once (it never
    /// waits for itself).
    ///
    /// - Parameters:
    ///   - timeout: bounds the wait for the loop to *start* the work
    ///     (including any wait for room in a full bounded mailbox). If it has
    ///     not started by then, it is withdrawn (it will never run) and
    ///     ``EventLoopError/timedOut`` is thrown. Once it has started, the
    ///     caller waits for its result. `nil` waits as long as it takes.
    ///   - file: the caller's file (a default argument): names the job in
    ///     slow-job and stall reports.
    ///   - line: the caller's line, likewise.
    ///   - work: what runs on the loop's thread; it need not be `Sendable`,
    ///     since the caller is blocked while it runs.
    /// - Throws: what `work` throws; ``EventLoopError/shutDown`` if the loop
    ///   is stopped (or is stopped before it ever ran);
    ///   ``EventLoopError/timedOut``; ``EventLoopError/deadlock`` when the
    ///   caller is a loop thread and this loop is, directly or through a
    ///   chain of loops, blocked waiting on the caller's loop, or when the
    ///   caller is the main thread outside ``run()`` and this loop is
    ///   ``main`` (only that thread could run it).
    public func postAndWait<T>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line, _ work: () throws -> T
    ) throws -> T {
        if inLoop {
            if mailbox.isClosed { throw EventLoopError.shutDown }
            return try work()
        }
        // The main thread, before `run()`, waiting for the main loop: only
        // this thread can ever run it, so the wait could never end. (Once
        // the main loop has run, a caller outside it is another thread:
        // checked first, so that callers pay no system call for the thread id.)
        if isMain && isIdle && EventLoop.isMainThread {
            throw EventLoopError.deadlock
        }
        let deadline = monotonicDeadline(after: timeout)
        let caller = EventLoop.current
        if let caller { try WaitForGraph.block(caller, on: self) }
        defer { if let caller { WaitForGraph.unblock(caller) } }
        return try withoutActuallyEscaping(work) { work in
            let call = Completion(blocking: work)
            do {
                try enqueue(.record(call), site: PostSite(file: file, line: line), policy: .wait(until: deadline))
            } catch {
                call.withdraw()  // never queued: let go of the caller's closure
                throw error
            }
            return try call.wait(until: deadline)
        }
    }
}
