// Executor.swift: every loop is a SerialExecutor, so an actor (or a global
// actor) can pin itself to a loop, and its jobs travel through the mailbox
// in order with posts and invocations.

/// The `SerialExecutor` of an ``EventLoop``: jobs enqueued here run on the
/// loop's thread, through its mailbox (so in order with ``EventLoop/post(file:line:_:)-4tw2j``
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
public final class LoopExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `owner` is set once, in the loop's initializer,
    // before the executor can be seen by any other thread.

    /// The loop this executor runs jobs on. Unowned: the loop owns its executor.
    public var loop: EventLoop { owner.takeUnretainedValue() }
    private var owner: Unmanaged<EventLoop>!

    init() {}

    func attach(to loop: EventLoop) {
        owner = Unmanaged.passUnretained(loop)
    }

    /// Puts `job` in the loop's mailbox, to run on the loop's thread (as a
    /// serial executor for actors pinned to the loop, and as a task executor
    /// for tasks that prefer it).
    public func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(UnownedJob(job))
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
    /// run on this loop's executor or (EventLoop.main only) on the runtime's
    /// main executor, whichever the job was enqueued on.
    func enqueue(_ job: UnownedJob, onMainExecutor: Bool = false) {
        let record: Job = onMainExecutor ? .mainExecutorJob(job) : .executorJob(job, Unmanaged.passUnretained(self))
        do {
            try enqueue(record, policy: .admit)
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
