// Job.swift: one record in the mailbox, and what the loop does with it.
import Invocations

/// A record whose poster keeps a handle on it: a blocked caller, a suspended
/// task. The loop either runs it or, when it never will (the loop was stopped
/// before it ran), abandons it, so the poster is always told.
protocol WaitingRecord: AnyObject, Sendable {
    /// Loop thread: run the work, unless the poster withdrew it, and release the poster.
    func run()
    /// The loop will never run this record: release the poster with `error`.
    func abandon(_ error: EventLoopError)
}

/// What travels through the mailbox. An enum, not a protocol existential, so
/// a plain post stores its closure inline with no allocation of its own.
enum Job {
    /// A fire-and-forget post.
    case work(@Sendable () -> Void)
    /// A post somebody waits on.
    case waiting(any WaitingRecord)
    /// An invocation nobody waits on (`performSelector(... waitUntilDone: false)`),
    /// stored as itself so posting it allocates no closure. The loop is
    /// unretained: a job only runs on its own loop, which is alive then.
    case invocation(Invocation, Unmanaged<EventLoop>)
    /// A `LoopBound` post: the storage, and the body as its two words (see
    /// `LoopBoundStorage.job`). The body is not wrapped in a closure that
    /// captures the storage, which would cost an allocation per post.
    case bound(BoundStorage, UnsafeRawPointer, AnyObject?)
    /// A Swift concurrency job for the loop's executor (same unretained loop).
    case executorJob(UnownedJob, Unmanaged<EventLoop>)
    /// A MainActor job, when EventLoop.main is installed as Swift's main
    /// executor: it runs on that executor's identity, so the runtime sees it
    /// already on the MainActor and does not enqueue it again.
    case mainExecutorJob(UnownedJob)

    @inline(__always)
    func run() {
        switch self {
        case .work(let body): body()
        case .waiting(let record): record.run()
        case .bound(let storage, let entry, let context): storage.run(entry, context)
        case .invocation(let invocation, let loop): loop.takeUnretainedValue().invokeReportingErrors(invocation)
        case .executorJob(let job, let loop):
            // On the serial executor's identity, also for jobs that came
            // through task-executor preference: the task keeps its preference
            // either way, and naming a task executor here as well made the
            // runtime re-enqueue actor jobs it should have run at once (a test
            // caught the reordering).
            job.runSynchronously(on: loop.takeUnretainedValue().executor.asUnownedSerialExecutor())
        case .mainExecutorJob(let job):
            job.runSynchronously(on: MainLoopMainExecutor.shared.asUnownedSerialExecutor())
        }
    }

    /// The loop will never run this job: tell its poster, if anybody waits.
    /// (A concurrency job cannot be failed: its task will never resume, which
    /// is said on standard error rather than left silent.)
    func abandon(_ error: EventLoopError) {
        switch self {
        case .work, .invocation, .bound: break
        case .waiting(let record): record.abandon(error)
        case .executorJob(_, let loop):
            writeToStandardError("MainLoop: loop '\(loop.takeUnretainedValue().name)' was stopped before it ran; a Swift concurrency job queued on it will never run\n")
        case .mainExecutorJob:
            writeToStandardError("MainLoop: loop 'main' was stopped before it ran; a MainActor job queued on it will never run\n")
        }
    }
}

/// A growable array of jobs with no copy-on-write and no uniqueness checks:
/// the mailbox owns exactly two of them and swaps them, so steady state
/// allocates nothing. Not thread-safe; its owner says what guards it.
struct JobBuffer {
    private(set) var base: UnsafeMutablePointer<Job>?
    private(set) var count = 0
    private(set) var capacity = 0

    @inline(__always)
    mutating func append(_ job: Job) {
        if count == capacity { grow() }
        (base.unsafelyUnwrapped + count).initialize(to: job)
        count += 1
    }

    private mutating func grow() {
        let newCapacity = Swift.max(capacity * 2, 256)
        let newBase = UnsafeMutablePointer<Job>.allocate(capacity: newCapacity)
        if let base {
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }

    /// Runs every job in order and leaves the buffer empty (capacity kept).
    /// Each job is moved out before it runs, so its closure is released as
    /// soon as it returns.
    mutating func runAll() {
        guard let base else { return }
        for index in 0..<count {
            (base + index).move().run()
        }
        count = 0
    }

    /// Removes every job, handing each to `body` (for abandoning them).
    mutating func removeAll(_ body: (Job) -> Void) {
        guard let base else { return }
        for index in 0..<count { body((base + index).move()) }
        count = 0
    }

    /// Frees the storage. The buffer must be empty.
    mutating func deallocate() {
        precondition(count == 0, "JobBuffer freed with \(count) jobs in it")
        base?.deallocate()
        base = nil
        capacity = 0
    }
}
