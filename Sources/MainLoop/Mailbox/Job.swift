// Job.swift: one record in the mailbox, and what the loop does with it.

/// A job that is an object of its own: a wait somebody keeps a handle on (a
/// blocked caller, a suspended task: `Completion`), or a record a client of
/// the post API brings (an invocation). The loop either runs it or, when it
/// never will (the loop was stopped before it ran), abandons it, so that
/// whoever waits is always told.
@usableFromInline
protocol MailboxRecord: AnyObject, Sendable {
    /// Loop thread: run the work, unless the poster withdrew it, and release the poster.
    func run()
    /// The loop will never run this record: release the poster with `error`.
    func abandon(_ error: EventLoopError)
}

extension Completion: MailboxRecord {}

/// What travels through the mailbox. An enum, not a protocol existential, so
/// a plain post stores its closure inline with no allocation of its own.
@usableFromInline
enum Job {
    /// A fire-and-forget post.
    case work(@Sendable () -> Void)
    /// A record: a post somebody waits on, or a client's own job object.
    case record(any MailboxRecord)
    /// A `LoopBound` post: its body's two words (see `BoundBody`) and the
    /// storage. The body is not wrapped in a closure that captures the
    /// storage, which would cost an allocation per post. The storage is
    /// unretained (see `LoopBound.storage`), and comes last: the enum keeps
    /// its case tag in that reference's spare bits, which holds a job to 24
    /// bytes.
    case bound(BoundBody, Unmanaged<BoundStorage>)
    /// A Swift concurrency job for one of the loop's executors. The
    /// executor is unretained: the loop keeps its executors, and a job only
    /// runs on its own loop, which is alive then.
    case executorJob(UnownedJob, Unmanaged<LoopExecutor>)
    /// A MainActor job, when EventLoop.main is installed as Swift's main
    /// executor: it runs on that executor's identity, so the runtime sees it
    /// already on the MainActor and does not enqueue it again.
    case mainExecutorJob(UnownedJob)

    @inline(__always)
    func run() {
        switch self {
        case .work(let body): body()
        case .record(let record): record.run()
        case .bound(let body, let storage): storage.takeUnretainedValue().run(body)
        case .executorJob(let job, let executor):
            // On the serial executor's identity, also for jobs that came
            // through task-executor preference: the task keeps its preference
            // either way, and naming a task executor here as well made the
            // runtime re-enqueue actor jobs it should have run at once (a test
            // caught the reordering).
            job.runSynchronously(on: executor.takeUnretainedValue().asUnownedSerialExecutor())
        case .mainExecutorJob(let job):
            job.runSynchronously(on: MainLoopMainExecutor.shared.asUnownedSerialExecutor())
        }
    }

    /// The loop will never run this job: tell its poster, if anybody waits.
    /// (A concurrency job cannot be failed: its task will never resume, which
    /// is said on standard error rather than left silent.)
    func abandon(_ error: EventLoopError) {
        switch self {
        case .work, .bound: break
        case .record(let record): record.abandon(error)
        case .executorJob(_, let executor):
            writeToStandardError(
                "MainLoop: loop '\(executor.takeUnretainedValue().loop.name)' was stopped before it ran; a Swift concurrency job queued on it will never run\n"
            )
        case .mainExecutorJob:
            writeToStandardError(
                "MainLoop: loop 'main' was stopped before it ran; a MainActor job queued on it will never run\n")
        }
    }
}
