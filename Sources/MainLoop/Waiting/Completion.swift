// Completion.swift: the one state machine behind every wait in MainLoop: a
// blocked `postAndWait`, a suspended `perform`, a producer waiting for room
// in a bounded mailbox.
//
//            arm (async only)
//   unarmed ─────────────────> pending ──start──> running ──finish──> finished
//      │                          │
//      ├──> withdrawn <── withdraw┤ (timeout of a blocked caller, cancellation)
//      └──> expired   <── expire ─┤ (timeout of a suspended task)
//                                 └──abandon──> abandoned
//
// The phase is one atomic word, and every move out of `pending` (or
// `unarmed`) is a compare-and-swap, so exactly one party wins the record:
// the loop (`start`, or `admit` for a room wait), the waiter (`withdraw`, on
// timeout or cancellation) or the shutdown (`abandon`). Invariants:
// - Only the winner of a move out of `pending` touches `work` and
//   `outcome`, and it writes them before it resumes the waiter; the waiter
//   reads them only after it was resumed. The resume (semaphore post or
//   continuation) orders those accesses.
// - A record is resumed exactly once, unless its waiter withdrew it, in
//   which case it is never resumed. This is what lets a blocked thread reuse
//   its semaphore (ThreadSemaphore.swift).
// - Once `running`, the work is never withdrawn: the waiter waits for it.
import CLibevent
import Synchronization

/// How a waiter is woken: a blocked thread's semaphore, or a suspended
/// task's continuation (set by `arm`).
enum Resumer<T> {
    case semaphore(UnsafeMutablePointer<sem_t>)
    case continuation(CheckedContinuation<T, any Error>)
    case unset
}

/// One wait for one result (`T`), whoever the waiter is.
///
/// `@unchecked Sendable`: `phase` is atomic; `work`, `outcome` and `resumer`
/// are handed from one thread to another by the phase moves and the resume,
/// as the invariants above say. The work closure need not be `Sendable` for
/// a blocked caller: the caller is blocked while the loop uses it (as with
/// `DispatchQueue.sync`).
final class Completion<T>: @unchecked Sendable {
    enum Phase: UInt8, AtomicRepresentable {
        /// Made for a task that has not suspended yet (no continuation).
        case unarmed
        /// Waiting for the loop (or for room).
        case pending
        /// The loop is running the work; the waiter waits for it.
        case running
        /// Over: `outcome` holds the result.
        case finished
        /// The waiter gave up before the work started (timeout, cancellation): it never runs.
        case withdrawn
        /// A suspended task's timeout passed before the work started: it
        /// never runs, and the task gets `.timedOut` (a phase of its own, so
        /// that `arm` knows which error to resume with).
        case expired
        /// The loop will never run it (stopped): `outcome` holds the error.
        case abandoned
    }

    private let phase: Atomic<Phase>
    private var work: (() throws -> T)?
    private var outcome: Result<T, any Error>?
    private var resumer: Resumer<T>

    /// A record a blocked thread waits on with its semaphore.
    init(blocking work: (() throws -> T)?) {
        phase = Atomic(.pending)
        self.work = work
        resumer = .semaphore(ThreadSemaphore.current)
    }

    /// A record a task will wait on, once `arm` has given it a continuation.
    init(suspending work: @escaping () throws -> T) {
        phase = Atomic(.unarmed)
        self.work = work
        resumer = .unset
    }

    // MARK: The loop's side

    /// Loop thread: runs the work unless the waiter withdrew it, and resumes the waiter.
    func run() {
        guard phase.compareExchange(expected: .pending, desired: .running, ordering: .acquiringAndReleasing).exchanged
        else { return }  // withdrawn: it never runs
        outcome = runWork()
        phase.store(.finished, ordering: .releasing)
        if FaultInjection.dropsReleases { return }
        resume()
    }

    /// The loop will never run this record: the waiter gets `error`.
    func abandon(_ error: EventLoopError) {
        guard phase.compareExchange(expected: .pending, desired: .abandoned, ordering: .acquiringAndReleasing).exchanged
        else { return }
        work = nil
        outcome = .failure(error)
        if FaultInjection.dropsReleases { return }
        resume()
    }

    /// Runs the work and lets go of it before returning: the caller's
    /// closure must not be referenced once the caller wakes (a blocking post
    /// hands it over with `withoutActuallyEscaping`, which checks that).
    @inline(never)
    private func runWork() -> Result<T, any Error> {
        let work = self.work.unsafelyUnwrapped
        self.work = nil
        return Result(catching: work)
    }

    private func resume() {
        switch resumer {
        case .semaphore(let semaphore): ThreadSemaphore.post(semaphore)
        case .continuation(let continuation):
            resumer = .unset
            continuation.resume(with: outcome.unsafelyUnwrapped)
        case .unset: preconditionFailure("MainLoop: a wait was resumed before it was armed")
        }
    }

    // MARK: The waiter's side

    /// Blocked thread: gives up unless the work has started (or the wait ended).
    /// Returns true when this call withdrew it: it will never run or resume.
    @discardableResult
    func withdraw() -> Bool {
        if phase.compareExchange(expected: .pending, desired: .withdrawn, ordering: .acquiringAndReleasing).exchanged {
            work = nil
            return true
        }
        return false
    }

    /// Blocked thread: sleeps until resumed, or until `deadline` passes
    /// before the work started (then withdraws it with `withdrawal`, by
    /// default `withdraw()`, and throws `.timedOut`). Once started, it waits
    /// for the result whatever the deadline.
    func wait(until deadline: UInt64?, withdrawal: (() -> Bool)? = nil) throws -> T {
        guard case .semaphore(let semaphore) = resumer else { preconditionFailure("MainLoop: not a blocking wait") }
        if !ThreadSemaphore.wait(semaphore, until: deadline) {
            if withdrawal?() ?? withdraw() { throw EventLoopError.timedOut }
            // Started or over: its one post is coming; take it.
            _ = ThreadSemaphore.wait(semaphore, until: nil)
        }
        return try outcome.unsafelyUnwrapped.get()
    }

    /// Task: hands over the continuation. Returns false (having resumed it
    /// with `CancellationError` or `.timedOut`) when the task was cancelled,
    /// or its timeout passed, first.
    func arm(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        resumer = .continuation(continuation)
        let (exchanged, found) = phase.compareExchange(
            expected: .unarmed, desired: .pending, ordering: .acquiringAndReleasing)
        guard exchanged else {
            resumer = .unset
            continuation.resume(throwing: found == .expired ? EventLoopError.timedOut : CancellationError())
            return false
        }
        return true
    }

    /// Task cancelled: withdraws the work unless it has started, and resumes
    /// the task with `CancellationError` if it was suspended on it (if not,
    /// `arm` does that when it finds the record withdrawn).
    func cancel() {
        giveUp(as: .withdrawn, CancellationError())
    }

    /// A suspended task's timeout: as `cancel`, resuming with `.timedOut`.
    func expire() {
        giveUp(as: .expired, EventLoopError.timedOut)
    }

    private func giveUp(as final: Phase, _ error: any Error) {
        if phase.compareExchange(expected: .unarmed, desired: final, ordering: .acquiringAndReleasing).exchanged {
            work = nil
            return
        }
        guard phase.compareExchange(expected: .pending, desired: final, ordering: .acquiringAndReleasing).exchanged
        else { return }
        work = nil
        guard case .continuation(let continuation) = resumer else { return }
        resumer = .unset
        continuation.resume(throwing: error)
    }
}

extension Completion where T == Void {
    /// A room wait: the blocked producer's record (no work of its own).
    convenience init() {
        self.init(blocking: nil)
    }

    /// Blocked producer: waits for room (see `wait(until:withdrawal:)`).
    func waitForRoom(until deadline: UInt64?, withdrawal: () -> Bool) throws(EventLoopError) {
        do {
            try withoutActuallyEscaping(withdrawal) { try wait(until: deadline, withdrawal: $0) }
        } catch let error as EventLoopError {
            throw error
        } catch {
            preconditionFailure("MainLoop: a room wait ended with \(error), which only the mailbox sets")
        }
    }

    /// Room granted (mailbox lock held): the room wait ends admitted.
    /// Returns false when the waiter had withdrawn already.
    func admit() -> Bool {
        guard phase.compareExchange(expected: .pending, desired: .finished, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        outcome = .success(())
        if !FaultInjection.dropsReleases { resume() }
        return true
    }
}
