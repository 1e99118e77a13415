// Perform.swift: the async counterpart of postAndWait. The caller suspends
// on a continuation instead of blocking a thread; cancellation or a timeout
// before the work starts withdraws it (see Waiting/Completion.swift).

extension EventLoop {
    /// Runs `work` on the loop and returns its value, suspending the calling
    /// task (not blocking a thread) until it has run; rethrows its error.
    ///
    /// Posted through the mailbox in order with this thread's other posts.
    /// Never waits for room: a bounded mailbox admits it (Swift concurrency
    /// must not block a thread). `work` is `@Sendable` and its result
    /// `Sendable`: a suspended task can resume on any thread, so nothing it
    /// hands over or gets back may be shared with the loop's state.
    /// - Parameters:
    ///   - timeout: bounds the wait for the loop to *start* the work, as in
    ///     ``postAndWait(timeout:file:line:_:)``: if it has not started by
    ///     then, it is withdrawn (it never runs) and
    ///     ``EventLoopError/timedOut`` is thrown. `nil` waits as long as it
    ///     takes; `.zero` or a negative duration withdraws it at once unless
    ///     the loop has already started it; a duration past the monotonic
    ///     clock's range (about 292 years) is the same as `nil`. The timeout
    ///     is a task sleeping on Swift's global executor, made only when a
    ///     timeout is given.
    ///   - file: the caller's file (a default argument): names the job in
    ///     slow-job and stall reports.
    ///   - line: the caller's line, likewise.
    ///   - work: what runs on the loop's thread.
    /// - Throws: what `work` throws; `CancellationError` if the task is
    ///   cancelled before the work starts (it is then withdrawn and never
    ///   runs); ``EventLoopError/timedOut``; ``EventLoopError/shutDown`` once
    ///   the loop is stopped.
    public func perform<T: Sendable>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let call = Completion(suspending: work)
        let expiry = Self.expiry(of: call, after: timeout)
        defer { expiry?.cancel() }
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

    /// The task that withdraws `call` when `timeout` passes before the loop
    /// started it; nil for no timeout (or one too long to ever pass).
    private static func expiry<T>(of call: Completion<T>, after timeout: Duration?) -> Task<Void, Never>? {
        guard let timeout else { return nil }
        let nanoseconds = timeout.clampedNanoseconds
        guard nanoseconds <= UInt64.max / 2 else { return nil }
        return Task {
            if nanoseconds > 0 { try? await Task.sleep(nanoseconds: nanoseconds) }
            if !Task.isCancelled { call.expire() }
        }
    }
}
