// Perform.swift: the async counterpart of postAndWait. The caller suspends
// instead of blocking a thread; cancellation before the work starts
// withdraws it.

/// A `perform` in flight. Exactly one party moves it out of `.pending`: the
/// loop (`run`), the task's cancellation (`cancel`) or the loop's shutdown
/// (`abandon`); whoever does resumes the continuation, exactly once.
///
/// `@unchecked Sendable`: `state` is guarded by `lock`.
final class AsyncCall<T: Sendable>: WaitingRecord, @unchecked Sendable {
    private enum State {
        /// Made; the continuation does not exist yet.
        case initial(@Sendable () throws -> T)
        /// Posted; the task is suspended on the continuation.
        case pending(@Sendable () throws -> T, CheckedContinuation<T, any Error>)
        /// Cancelled before the continuation existed: `start` resumes at once.
        case cancelledEarly
        /// Started, or over.
        case done
    }

    private let lock = Lock()
    private var state: State

    init(_ work: @escaping @Sendable () throws -> T) {
        state = .initial(work)
    }

    /// Takes the continuation. Returns true when the call is to be posted;
    /// false when it was cancelled already (the continuation has been resumed).
    func start(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        lock.lock()
        switch state {
        case .initial(let work):
            state = .pending(work, continuation)
            lock.unlock()
            return true
        default:
            state = .done
            lock.unlock()
            continuation.resume(throwing: CancellationError())
            return false
        }
    }

    /// The continuation, if the call is still pending, moving it to `.done`.
    private func claim() -> (@Sendable () throws -> T, CheckedContinuation<T, any Error>)? {
        lock.lock()
        defer { lock.unlock() }
        guard case .pending(let work, let continuation) = state else { return nil }
        state = .done
        return (work, continuation)
    }

    /// Loop thread.
    func run() {
        guard let (work, continuation) = claim() else { return }
        let result = Result(catching: work)
        if FaultInjection.dropsReleases { return }
        continuation.resume(with: result)
    }

    func abandon(_ error: EventLoopError) {
        claim()?.1.resume(throwing: error)
    }

    /// The task was cancelled: withdraw the work unless it has started.
    func cancel() {
        lock.lock()
        if case .initial = state {
            state = .cancelledEarly
            lock.unlock()
            return
        }
        lock.unlock()
        claim()?.1.resume(throwing: CancellationError())
    }
}

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
    public func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let call = AsyncCall(work)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.start(continuation) else { return }
                do throws(EventLoopError) {
                    try mailbox.enqueue(.waiting(call), policy: .admit)
                } catch {
                    call.abandon(error)   // not accepted: resume with the refusal
                }
            }
        } onCancel: {
            call.cancel()
        }
    }
}
