// Completion.swift: the caller's side of every wait, top to bottom:
// `postAndWait` (a thread blocks) and `perform` (a task suspends) wrap their
// work in a `Completion`, hand it to the mailbox (Mailbox.swift) and wait on
// it; the loop runs it (LoopCore.swift) and resumes the waiter here. The
// blocked thread sleeps on its own reused semaphore, until a deadline on
// CLOCK_MONOTONIC at most. A loop thread that waits on another loop is an
// edge of the wait-for graph (the last section), which refuses a cycle.
import CLibevent
import Glibc
import Synchronization

// MARK: - BlockingPost

// `postAndWait`, a post whose caller blocks on its thread's semaphore until
// the loop has run the work (the Completion section below).
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
    ///
    /// Inlinable, so that the caller's module specialises it for `T`.
    @inlinable
    public func postAndWait<T: Sendable>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ work: sending () throws -> T
    ) throws -> T {
        try postAndWait(timeout: timeout, site: PostSite(file: file, line: line), work)
    }

    /// `postAndWait`, with the job's name given as a post site (a waiting
    /// invocation names itself `Type.selector`).
    ///
    /// The only generic part of a blocking post: the result goes straight
    /// into the caller's frame, and the wait and its record are not generic.
    /// A generic record, unspecialised in the caller's module, looked up the
    /// metadata of its own, result and resumer types at run time on every
    /// call, on both threads (`swift_getGenericMetadata` and the generic
    /// enum and value-witness calls around it: 16% of a round trip's
    /// samples). Stack storage of `T` needs no type made at run time, so the
    /// fork check below still comes before anything generic.
    @inlinable
    func postAndWait<T: Sendable>(timeout: Duration?, site: PostSite, _ work: () throws -> T) throws -> T {
        try withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot in
            let result = slot.baseAddress.unsafelyUnwrapped
            // Returns normally only when `work` returned: the slot is filled.
            try postAndWait(timeout: timeout, site: site, running: { result.initialize(to: try work()) })
            return result.move()
        }
    }

    /// Loop thread or any other: runs `work` on the loop and waits for it to
    /// finish, rethrowing what it throws.
    @usableFromInline
    func postAndWait(timeout: Duration?, site: PostSite, running work: () throws -> Void) throws {
        if inLoop {
            if mailbox.isClosed { throw leftBehindByFork ? EventLoopError.forked : EventLoopError.shutDown }
            return try work()
        }
        // The main thread, before `run()`, waiting for the main loop: only
        // this thread can ever run it, so the wait could never end. (Once
        // the main loop has run, a caller outside it is another thread:
        // checked first, so that callers pay no system call for the thread id.)
        if isMain && isIdle && EventLoop.isMainThread {
            throw EventLoopError.mainLoopNotRunning
        }
        // Refused before anything generic is touched: in a child of fork(),
        // a generic type that another thread of the parent was setting up
        // at the fork would hang it (Support/ForkHandling.swift).
        if leftBehindByFork { throw EventLoopError.forked }
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

// MARK: - Perform

// The async counterpart of postAndWait. The caller suspends on a
// continuation instead of blocking a thread; cancellation or a timeout
// before the work starts withdraws it (the Completion section below).
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
        // The result goes to a box of its own: the record is not generic
        // (see `postAndWait`). The box and the closure that runs it are two
        // allocations more than the generic record made (6 a call, not 4,
        // counted with the allocation counter): the price of a call that
        // suspends a task, not of a blocking post.
        let result = PendingResult(work)
        let call = Completion(suspending: result.run)
        let expiry = Self.expiry(of: call, after: timeout)
        defer { expiry?.cancel() }
        try await withTaskCancellationHandler {
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
        return result.take()
    }

    /// The task that withdraws `call` when `timeout` passes before the loop
    /// started it; nil for no timeout (or one too long to ever pass).
    private static func expiry(of call: Completion, after timeout: Duration?) -> Task<Void, Never>? {
        guard let timeout else { return nil }
        let nanoseconds = timeout.clampedNanoseconds
        guard nanoseconds <= UInt64.max / 2 else { return nil }
        return Task {
            if nanoseconds > 0 { try? await Task.sleep(nanoseconds: nanoseconds) }
            if !Task.isCancelled { call.expire() }
        }
    }
}

/// A suspended `perform`'s work and, once the loop has run it, its value.
/// `@unchecked Sendable`: `value` is written on the loop's thread before
/// the task is resumed and read by the task after; the resume orders them.
final class PendingResult<T: Sendable>: @unchecked Sendable {
    private let work: @Sendable () throws -> T
    private var value: T?
    /// Set with release once `value` is: the continuation's resume orders
    /// the two threads already, but inside the concurrency runtime, where
    /// the thread sanitizer cannot see it (an object the work made, read by
    /// the task, was reported as a race). This hand-off it can see, for a
    /// plain store and load on x86.
    private let stored = Atomic(false)

    init(_ work: @escaping @Sendable () throws -> T) { self.work = work }

    /// Loop thread: runs the work and keeps its value.
    func run() throws {
        value = try work()
        stored.store(true, ordering: .releasing)
    }

    /// The task, resumed without an error: the value `run` kept.
    func take() -> T {
        _ = stored.load(ordering: .acquiring)
        return value.unsafelyUnwrapped
    }
}

// MARK: - Completion

// The one state machine behind every wait in MainLoop: a
// blocked `postAndWait`, a suspended `perform`, a producer waiting for room
// in a bounded mailbox.
//
//            arm (async only)
//   unarmed ─────────────────> pending ──run──> running ──finish──> finished
//      │                          │                                   ^
//      │                          ├──grantRoom (a room wait) ─────────┘
//      ├──> withdrawn <── withdraw┤ (timeout of a blocked caller, cancellation)
//      └──> expired   <── expire ─┤ (timeout of a suspended task)
//                                 ├──abandon──> abandoned
//                                 └──refuseRoom (a room wait, on close) ──> abandoned
//
// The phase is one atomic word, and every move out of `pending` (or
// `unarmed`) is a compare-and-swap, so exactly one party wins the record:
// the loop (`run`, or `grantRoom` for a room wait), the waiter
// (`withdraw`, `cancel` or `expire`, on timeout or cancellation) or the
// shutdown (`abandon`, `refuseRoom`). Invariants:
// - Only the winner of a move out of `pending` touches `work` and
//   `failure`, and it writes them before it resumes the waiter; the waiter
//   reads them only after it was resumed. The resume (semaphore post or
//   continuation) orders those accesses.
// - A record is resumed exactly once, unless its waiter withdrew it, in
//   which case it is never resumed. This is what lets a blocked thread reuse
//   its semaphore (the ThreadSemaphore section below).
// - Once `running`, the work is never withdrawn: the waiter waits for it.
/// How a waiter is woken: a blocked thread's semaphore, or a suspended
/// task's continuation (set by `arm`).
enum Resumer {
    case semaphore(UnsafeMutablePointer<sem_t>)
    case continuation(CheckedContinuation<Void, any Error>)
    case unset
}

/// One wait for one piece of work to be over, whoever the waiter is. Not
/// generic: the work hands its value to the waiter itself (into the blocked
/// caller's frame, or a ``PendingResult``); the record only says how it ended.
///
/// `@unchecked Sendable`: `phase` is atomic; `work`, `failure` and `resumer`
/// are handed from one thread to another by the phase moves and the resume,
/// as the invariants above say. The work closure need not be `Sendable` for
/// a blocked caller: the caller is blocked while the loop uses it (as with
/// `DispatchQueue.sync`).
final class Completion: @unchecked Sendable {
    enum Phase: UInt8, AtomicRepresentable {
        /// Made for a task that has not suspended yet (no continuation).
        case unarmed
        /// Waiting for the loop (or for room).
        case pending
        /// The loop is running the work; the waiter waits for it.
        case running
        /// Over: `failure` holds the error, if it ended with one.
        case finished
        /// The waiter gave up before the work started (timeout, cancellation): it never runs.
        case withdrawn
        /// A suspended task's timeout passed before the work started: it
        /// never runs, and the task gets `.timedOut` (a phase of its own, so
        /// that `arm` knows which error to resume with).
        case expired
        /// The loop will never run it (stopped): `failure` holds the error.
        case abandoned
    }

    private let phase: Atomic<Phase>
    private var work: (() throws -> Void)?
    /// What the work threw, or why it never ran; nil when it returned.
    private var failure: (any Error)?
    private var resumer: Resumer

    /// A record a blocked thread waits on with its semaphore.
    init(blocking work: (() throws -> Void)?) {
        phase = Atomic(.pending)
        self.work = work
        resumer = .semaphore(ThreadSemaphore.current)
    }

    /// A record a task will wait on, once `arm` has given it a continuation.
    init(suspending work: @escaping () throws -> Void) {
        phase = Atomic(.unarmed)
        self.work = work
        resumer = .unset
    }

    // MARK: The loop's side

    /// Loop thread: runs the work unless the waiter withdrew it, and resumes
    /// the waiter. The job keeps its reference (false).
    func run() -> Bool {
        guard phase.compareExchange(expected: .pending, desired: .running, ordering: .acquiringAndReleasing).exchanged
        else { return false }  // withdrawn: it never runs
        failure = runWork()
        phase.store(.finished, ordering: .releasing)
        if FaultInjection.dropsReleases { return false }
        resume()
        return false
    }

    /// The loop will never run this record: the waiter gets `error`.
    func abandon(_ error: EventLoopError) {
        guard phase.compareExchange(expected: .pending, desired: .abandoned, ordering: .acquiringAndReleasing).exchanged
        else { return }
        work = nil
        failure = error
        phase.store(.abandoned, ordering: .releasing)  // publishes `failure` (see `wait`)
        if FaultInjection.dropsReleases { return }
        resume()
    }

    /// Runs the work and lets go of it before returning: the caller's
    /// closure must not be referenced once the caller wakes (a blocking post
    /// hands it over with `withoutActuallyEscaping`, which checks that).
    /// Returns what it threw.
    @inline(never)
    private func runWork() -> (any Error)? {
        let work = self.work.unsafelyUnwrapped
        self.work = nil
        do {
            try work()
            return nil
        } catch {
            return error
        }
    }

    private func resume() {
        switch resumer {
        case .semaphore(let semaphore): ThreadSemaphore.post(semaphore)
        case .continuation(let continuation):
            resumer = .unset
            if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
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
    func wait(until deadline: UInt64?, withdrawal: (() -> Bool)? = nil) throws {
        guard case .semaphore(let semaphore) = resumer else { preconditionFailure("MainLoop: not a blocking wait") }
        if !ThreadSemaphore.wait(semaphore, until: deadline) {
            if withdrawal?() ?? withdraw() { throw EventLoopError.timedOut }
            // Started or over: its one post is coming; take it.
            _ = ThreadSemaphore.wait(semaphore, until: nil)
        }
        // The post orders the completer's writes before this read, but the
        // thread sanitizer does not see a wait with a deadline
        // (`sem_clockwait` has no interceptor), so the order is made plain:
        // every completer stores its final phase with release after it set
        // `failure`, and this load acquires it (a plain load on x86).
        _ = phase.load(ordering: .acquiring)
        if let failure { throw failure }
    }

    /// Task: hands over the continuation. Returns false (having resumed it
    /// with `CancellationError` or `.timedOut`) when the task was cancelled,
    /// or its timeout passed, first.
    func arm(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
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

extension Completion {
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

    /// Room granted (mailbox lock held): the room wait ends admitted. The
    /// mailbox only decides; whoever acted on its answer wakes the producer
    /// (`wakeProducer`) once the lock is released. Returns false when the
    /// waiter had withdrawn already.
    func grantRoom() -> Bool {
        // Only a room wait ends finished without running work: a blocking
        // post's caller would read a result nobody wrote.
        assert(work == nil, "MainLoop: room granted to a record that carries work")
        guard phase.compareExchange(expected: .pending, desired: .finished, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        return true
    }

    /// The mailbox closed (its lock held): the room wait ends refused with
    /// `error`; woken later by `wakeProducer`, as for `grantRoom`. Returns
    /// false when the waiter had withdrawn already.
    func refuseRoom(_ error: EventLoopError) -> Bool {
        guard phase.compareExchange(expected: .pending, desired: .abandoned, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        failure = error
        phase.store(.abandoned, ordering: .releasing)  // publishes `failure` (see `wait`)
        return true
    }

    /// After the mailbox's lock: wakes a producer whose room wait was
    /// granted or refused.
    func wakeProducer() {
        if !FaultInjection.dropsReleases { resume() }
    }
}

// MARK: - ThreadSemaphore

// The semaphore a blocked thread sleeps on, one per
// thread, made on the thread's first blocking wait and reused for every
// later one (freed when the thread exits).
//
// Reuse is safe because of the rule `Completion` keeps: a wait that took a
// thread's semaphore ends with its count back at zero. The completer posts
// exactly once, and the waiter does not leave until it has taken that post,
// unless it withdrew the wait first, in which case nobody posts. A thread
// blocks in one wait at a time, so no two waits share a count.
//
// A completer's `sem_post` may still be inside its futex wake-up when the
// waiter has already returned (and even when its thread has exited and the
// semaphore was freed): glibc's post increments the count first and wakes
// second, and its futex wake tolerates memory that was reused. What must
// not outlive the wait is anything the completer reads after the post, and
// `Completion.resume` reads nothing after it.
enum ThreadSemaphore {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { pointer in
            guard let semaphore = pointer?.assumingMemoryBound(to: sem_t.self) else { return }
            sem_destroy(semaphore)
            semaphore.deinitialize(count: 1)
            semaphore.deallocate()
        }
        precondition(rc == 0, "MainLoop: pthread_key_create failed with errno \(rc)")
        return key
    }()

    /// The calling thread's semaphore (count zero between waits).
    @inline(__always)
    static var current: UnsafeMutablePointer<sem_t> {
        if let existing = pthread_getspecific(key) { return existing.assumingMemoryBound(to: sem_t.self) }
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        semaphore.initialize(to: sem_t())
        let rc = sem_init(semaphore, 0, 0)
        precondition(rc == 0, "MainLoop: sem_init failed with errno \(errno)")
        pthread_setspecific(key, semaphore)
        return semaphore
    }

    /// Takes one post, or gives up at `deadline` (monotonic ns; nil: never).
    /// Returns false when the deadline passed first.
    static func wait(_ semaphore: UnsafeMutablePointer<sem_t>, until deadline: UInt64?) -> Bool {
        let rc = mainloop_sem_wait_until(semaphore, deadline ?? 0)
        if rc == ETIMEDOUT { return false }
        precondition(rc == 0, "MainLoop: sem_wait failed with errno \(rc)")
        return true
    }

    static func post(_ semaphore: UnsafeMutablePointer<sem_t>) {
        let rc = sem_post(semaphore)
        precondition(rc == 0, "MainLoop: sem_post failed with errno \(errno)")
    }
}

// MARK: - Deadline

// Timeouts as absolute CLOCK_MONOTONIC nanoseconds, the
// form every bounded wait (semaphore, condition variable) takes.
/// The monotonic deadline `timeout` from now, in nanoseconds; `nil` for no timeout.
@usableFromInline
func monotonicDeadline(after timeout: Duration?) -> UInt64? {
    guard let timeout else { return nil }
    return monotonicDeadline(mainloop_monotonic_ns(), plus: timeout)
}

/// Past any deadline a process lives to see (about 146 years), and far from wrapping.
let monotonicNever = UInt64.max / 2

/// `now` plus `delay`, at most `monotonicNever`; `now` for a delay that is not positive.
func monotonicDeadline(_ now: UInt64, plus delay: Duration) -> UInt64 {
    saturatingSum(now, nanoseconds(of: delay))
}

/// `delay` in nanoseconds, rounded up (nothing bounded by it ends before
/// it), at most `monotonicNever`; 0 for a delay that is not positive.
func nanoseconds(of delay: Duration) -> UInt64 {
    let (seconds, attoseconds) = delay.components
    if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
    let (whole, overflow) = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? monotonicNever : saturatingSum(whole, UInt64((attoseconds + 999_999_999) / 1_000_000_000))
}

/// `a + b`, at most `monotonicNever`.
func saturatingSum(_ a: UInt64, _ b: UInt64) -> UInt64 {
    a >= monotonicNever || b >= monotonicNever - a ? monotonicNever : a + b
}

// MARK: - WaitForGraph

// The wait-for graph that turns a cycle of loops
// waiting on each other into `.deadlock` instead of a hang.
/// Which loop's thread is blocked waiting on which loop: the edges of the
/// wait-for graph. A loop thread can block on one loop at a time, so each
/// loop has at most one outgoing edge and a cycle check is a walk along a
/// chain. Guarded by one process-wide lock: edges only change when a loop
/// thread blocks on another loop, which is rare and slow anyway.
enum WaitForGraph {
    private static let lock = Lock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var edges: [ObjectIdentifier: EventLoop] = [:]

    /// Records that `waiter`'s thread is about to block on `target`, or
    /// throws `.deadlock` if `target` is (through any chain) blocked on `waiter`.
    static func block(_ waiter: EventLoop, on target: EventLoop) throws(EventLoopError) {
        lock.lock()
        defer { lock.unlock() }
        var next: EventLoop? = target
        while let loop = next {
            if loop === waiter { throw .deadlock }
            next = edges[ObjectIdentifier(loop)]
        }
        edges[ObjectIdentifier(waiter)] = target
    }

    static func unblock(_ waiter: EventLoop) {
        lock.withLock { _ = edges.removeValue(forKey: ObjectIdentifier(waiter)) }
    }

    /// The loop `loop`'s thread is blocked on right now, if any.
    static func target(of loop: EventLoop) -> EventLoop? {
        lock.withLock { edges[ObjectIdentifier(loop)] }
    }

    // fork() (see Support/ForkHandling.swift): the lock is held across it,
    // so the child inherits a consistent graph. Every edge belongs to a
    // parent thread, none of which exists in the child: the child starts
    // with no edges. The old table is released in the parent only.

    static func prepareForFork() { lock.lock() }

    static func resumeParentAfterFork() { lock.unlock() }

    static func resumeChildAfterFork() {
        edges.removeAll()
        lock.unlock()
    }
}
