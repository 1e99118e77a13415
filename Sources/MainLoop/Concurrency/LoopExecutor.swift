// LoopExecutor.swift: every loop is a SerialExecutor, so an actor (or a global
// actor) can pin itself to a loop, and its jobs travel through the mailbox
// in order with posts and invocations.
import Glibc

/// The `SerialExecutor` of an ``EventLoop``: jobs enqueued here run on the
/// loop's thread, through its mailbox (so in order with ``EventLoop/post(file:line:_:)-16vnh``
/// calls made by the same thread).
///
/// Pin an actor to a loop:
/// ```swift
/// actor Store {
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
/// }
/// ```
/// It is also a `TaskExecutor` (SE-0417): `Task(executorPreference: loop.executor)`
/// and `withTaskExecutorPreference(loop.executor)` run nonisolated async code
/// on the loop's thread.
///
/// Jobs are never refused for lack of room: a bounded mailbox admits them
/// (Swift concurrency must not block a thread). A job enqueued after the
/// loop stopped could never run, which would hang its task silently; that
/// traps with a message naming the loop.
///
/// A loop has its ``EventLoop/executor``, and named ones from
/// ``EventLoop/executor(named:)``: the same loop and thread, but their jobs
/// carry the name into slow-job and stall reports, so an actor or task
/// pinned to one is named there.
public final class LoopExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `owner` is set once, in the loop's initializer
    // (or `executor(named:)`), before the executor can be seen by any other
    // thread; `name` and `label` never change.

    /// The loop this executor runs jobs on. Unowned: the loop owns its executors.
    public var loop: EventLoop { owner.takeUnretainedValue() }
    private var owner: Unmanaged<EventLoop>!
    /// The name its jobs carry into reports; nil for ``EventLoop/executor``.
    public let name: String?
    /// `name` as a C string that lives as long as the executor (which its
    /// loop keeps): a report decodes it from the job's site word.
    private let label: UnsafeMutablePointer<CChar>?

    init(name: String? = nil) {
        self.name = name
        self.label = name.map { strdup($0) }
    }

    deinit { free(label) }

    func attach(to loop: EventLoop) {
        owner = Unmanaged.passUnretained(loop)
    }

    /// The site its jobs are labelled with: the name, or none.
    var site: PostSite {
        label.map { PostSite(name: $0) } ?? .none
    }

    /// Puts `job` in the loop's mailbox, to run on the loop's thread (as a
    /// serial executor for actors pinned to the loop, and as a task executor
    /// for tasks that prefer it).
    public func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(UnownedJob(job), on: self)
    }

    /// This executor as a task executor, for task-executor preference.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// This executor, for `unownedExecutor` of an actor pinned to the loop.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless the caller is the loop's thread, inside `run()`: what
    /// `assumeIsolated` relies on from plain loop callbacks.
    public func checkIsolated() {
        precondition(loop.inLoop, "MainLoop: expected to run on loop '\(loop.name)', but the caller is not its thread")
    }

    /// True exactly on the loop's thread, inside `run()`.
    public func isIsolatingCurrentContext() -> Bool? {
        loop.inLoop
    }
}

extension EventLoop {
    /// Loop or any thread: puts a Swift concurrency job in the mailbox, to
    /// run on `executor` (one of this loop's) or, when nil (EventLoop.main
    /// only), on the runtime's main executor.
    func enqueue(_ job: UnownedJob, on executor: LoopExecutor?) {
        let record: Job = executor.map { .executorJob(job, Unmanaged.passUnretained($0)) } ?? .mainExecutorJob(job)
        do {
            try enqueue(record, site: executor?.site ?? .none, policy: .admit)
        } catch .shutDown {
            fatalError(
                "MainLoop: loop '\(name)' has stopped; an actor or task pinned to it can never run again: stop it only after its actors are done"
            )
        } catch {
            fatalError(
                "MainLoop: loop '\(name)' cannot run Swift concurrency jobs (\(error)); an actor or task pinned to it could never run"
            )
        }
    }
}

extension EventLoop {
    /// An executor of this loop whose jobs carry `name` into slow-job and
    /// stall reports (``SlowJobReport/label``, ``StallReport/label``), so an
    /// actor pinned to it, or a task that prefers it, is named there:
    /// ```swift
    /// actor Store {
    ///     nonisolated var unownedExecutor: UnownedSerialExecutor {
    ///         loop.executor(named: "Store").asUnownedSerialExecutor()
    ///     }
    /// }
    /// ```
    /// The same name gives the same executor; the loop keeps each one for
    /// its life. Jobs run on the loop's thread, in mailbox order with its
    /// other work. Actors pinned to different executors of one loop are
    /// distinct to Swift: a call between them is a hop through the mailbox.
    public func executor(named name: String) -> LoopExecutor {
        namedExecutorsLock.withLock {
            if let existing = namedExecutors[name] { return existing }
            let executor = LoopExecutor(name: name)
            executor.attach(to: self)
            namedExecutors[name] = executor
            return executor
        }
    }
}
