// BlockingPost.swift: `postAndWait`, a post whose caller blocks on its
// thread's semaphore until the loop has run the work (see Completion.swift).

extension EventLoop {
    /// Runs `work` on the loop and blocks the calling thread until it has
    /// run, returning its value or rethrowing its error.
    ///
    /// Called on the loop's own thread, `work` runs inline at once (it never
    /// waits for itself).
    ///
    /// What crosses threads is checked by the compiler:
    /// - `work` is `sending`, not `@Sendable`: it may capture what the
    ///   caller hands over and never touches again (a fresh object the loop's
    ///   state keeps, as `DispatchQueue.sync` users expect), and `Sendable`
    ///   values, but not a non-`Sendable` object the caller goes on using
    ///   (that would be two threads on one object). `@Sendable` would refuse
    ///   the hand-over too; `sending` refuses only the sharing.
    /// - The result is `Sendable`: nothing of the loop's state (a
    ///   ``LoopBound`` value, a child object it keeps) can come back to the
    ///   caller's thread.
    ///
    /// - Parameters:
    ///   - timeout: bounds the wait for the loop to *start* the work
    ///     (including any wait for room in a full bounded mailbox). If it has
    ///     not started by then, it is withdrawn (it will never run) and
    ///     ``EventLoopError/timedOut`` is thrown. Once it has started, the
    ///     caller waits for its result. `nil` waits as long as it takes;
    ///     `.zero` or a negative duration withdraws the work at once unless
    ///     the loop has already started it; a duration past the monotonic
    ///     clock's range (about 292 years) is the same as `nil`. On the
    ///     loop's own thread the work runs inline whatever the timeout.
    ///   - file: the caller's file (a default argument): names the job in
    ///     slow-job and stall reports.
    ///   - line: the caller's line, likewise.
    ///   - work: what runs on the loop's thread.
    /// - Throws: what `work` throws; ``EventLoopError/shutDown`` if the loop
    ///   is stopped (or is stopped before it ever ran);
    ///   ``EventLoopError/timedOut``; ``EventLoopError/deadlock`` when the
    ///   caller is a loop thread and this loop is, directly or through a
    ///   chain of loops, blocked waiting on the caller's loop;
    ///   ``EventLoopError/mainLoopNotRunning`` when the caller is the main
    ///   thread, this loop is ``main`` and `run()` has not been called (only
    ///   the main thread can run it, so the wait could never end).
    public func postAndWait<T: Sendable>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ work: sending () throws -> T
    ) throws -> T {
        try postAndWait(timeout: timeout, site: PostSite(file: file, line: line), work)
    }

    /// `postAndWait`, with the job's name given as a post site (a waiting
    /// invocation names itself `Type.selector`).
    func postAndWait<T: Sendable>(timeout: Duration?, site: PostSite, _ work: () throws -> T) throws -> T {
        if inLoop {
            if mailbox.isClosed { throw EventLoopError.shutDown }
            return try work()
        }
        // The main thread, before `run()`, waiting for the main loop: only
        // this thread can ever run it, so the wait could never end. (Once
        // the main loop has run, a caller outside it is another thread:
        // checked first, so that callers pay no system call for the thread id.)
        if isMain && isIdle && EventLoop.isMainThread {
            throw EventLoopError.mainLoopNotRunning
        }
        let deadline = monotonicDeadline(after: timeout)
        let caller = EventLoop.current
        if let caller { try WaitForGraph.block(caller, on: self) }
        defer { if let caller { WaitForGraph.unblock(caller) } }
        return try withoutActuallyEscaping(work) { work in
            let call = Completion(blocking: work)
            do {
                try enqueue(.record(call), site: site, policy: .wait(until: deadline))
            } catch {
                call.withdraw()  // never queued: let go of the caller's closure
                throw error
            }
            return try call.wait(until: deadline)
        }
    }
}
