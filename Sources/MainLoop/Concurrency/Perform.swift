// Perform.swift: the async counterpart of postAndWait. The caller suspends
// on a continuation instead of blocking a thread; cancellation before the
// work starts withdraws it (see Waiting/Completion.swift).

extension EventLoop {
    /// Runs `work` on the loop and returns its value, suspending the calling
    /// task (not blocking a thread) until it has run; rethrows its error.
    ///
    /// Posted through the mailbox in order with this thread's other posts.
    /// Never waits for room: a bounded mailbox admits it (Swift concurrency
    /// must not block a thread).
    /// - Throws: what `work` throws; `CancellationError` if the task is
    ///   cancelled before the work starts (it is then withdrawn and never
    ///   runs); ``EventLoopError/shutDown`` once the loop is stopped.
    public func perform<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let call = Completion(suspending: work)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.arm(continuation) else { return }
                do throws(EventLoopError) {
                    try enqueue(.record(call), site: PostSite(file: file, line: line), policy: .admit)
                } catch {
                    call.abandon(error)  // not accepted: resume with the refusal
                }
            }
        } onCancel: {
            call.cancel()
        }
    }
}
