// EventLoop.swift: the loop's lifecycle (a state enum, every transition in
// one place) and who may run it. Posting is in Posting.swift, waiting in
// Waiting/, timers and watchers in Events/.
import CLibevent
import Glibc
import Synchronization

/// Which loop the calling thread is running, if any. Read through
/// `pthread_getspecific` (no syscall): `inLoop` sits on the hot path.
let currentLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key, nil)
    precondition(rc == 0, "pthread_key_create failed with errno \(rc)")
    return key
}()

/// A libevent loop that owns one thread, and a mailbox through which any
/// thread hands it work.
///
/// Other threads ``post(file:line:_:)-16vnh`` closures (or ``postAndWait(timeout:file:line:_:)`` and
/// block until the work ran); the loop runs them on its own thread, in the
/// order each thread posted them, interleaved fairly with its timers
/// (``schedule(after:_:)``), watched file descriptors (``watch(fd:for:_:)``)
/// and signals (``onSignal(_:_:)``).
///
/// ``EventLoop/main`` is the loop of the process's main thread;
/// ``spawn(name:mailboxCapacity:latencyStats:)`` starts a loop on a thread of its own;
/// ``init(name:mailboxCapacity:latencyStats:)`` makes a loop for a thread of yours, which
/// becomes its owner by calling ``run()``.
///
/// Guarantees: every post that returns normally runs exactly once; every
/// post that throws was not accepted and never runs; a caller blocked in
/// ``postAndWait(timeout:file:line:_:)`` is always released, with the result or an
/// error. The one exception is spelled out in ``stop()``: a loop stopped
/// before it ever ran discards what was queued (and releases blocked callers
/// with ``EventLoopError/shutDown``).
public final class EventLoop: @unchecked Sendable, CustomStringConvertible {
    // `@unchecked Sendable`: `setup` and `mailbox` are immutable and
    // thread-safe on their own (the mailbox has its lock, libevent its own);
    // `namedExecutors` is guarded by `namedExecutorsLock`; `ownsSpawnedThread`
    // is written once by `spawn` before the loop's thread starts (the thread's
    // creation orders it); the lifecycle state below is guarded by
    // `stateLock`.

    private enum Lifecycle {
        /// Made, not yet run. Posts, timers and watchers are accepted.
        case idle
        /// `run()` is driving the loop on its owner thread.
        case running
        /// `stop()` was called while running: the final drain is under way; nothing new is accepted.
        case stopping
        /// Terminal.
        case stopped
    }

    /// The loop's name, used in thread names and error messages.
    public let name: String
    let isMain: Bool
    /// The loop's machinery, or (only for an `EventLoop.main`, which is
    /// created without throwing) the error that prevented making it.
    private let setup: Result<LoopCore, EventLoopError>
    /// The core's mailbox, held directly so the post path loads one field;
    /// for a failed `EventLoop.main`, a mailbox that throws the setup error.
    let mailbox: Mailbox
    /// Invocation records that ran here, for posted performSelector calls
    /// to refill (PerformSelector/InvocationRecordPool.swift); nil with a
    /// bounded mailbox, whose offer copies a record's job. Destroyed with
    /// the loop.
    let recordPool: InvocationRecordPool?

    /// This loop as a Swift concurrency `SerialExecutor` (see ``LoopExecutor``).
    public let executor = LoopExecutor()
    /// The executors made by `executor(named:)`, by name; guarded by
    /// `namedExecutorsLock`. Kept for the loop's life: their jobs' labels
    /// point into them.
    var namedExecutors: [String: LoopExecutor] = [:]
    let namedExecutorsLock = Lock()

    /// Opened once the loop has finished for good (see ``join(timeout:)``).
    private let termination = Termination()
    /// Set once by `spawn` before the thread starts: the spawned thread, not
    /// `run()`, opens `termination`, so that `join` also waits for the thread.
    private var ownsSpawnedThread = false

    private let stateLock = Lock()
    // Guarded by `stateLock`.
    private var lifecycle = Lifecycle.idle
    // Guarded by `stateLock`: live timers and watchers, removed when they are
    // cancelled, when a one-shot timer has fired, and all at once on stop.
    private var registrations: [ObjectIdentifier: LoopEvent] = [:]
    // Guarded by `stateLock`: objects retired while the final drain runs,
    // released after it (see `retire`).
    private var retired: [any AnyObject & Sendable] = []
    // Guarded by `stateLock`: the `ThreadToken` of the thread that ran the
    // loop (0: none yet), which may reach a `LoopBound` value once `run()`
    // has returned.
    private var ownerThread: UInt = 0
    // Guarded by `stateLock`.
    private var errorHandlerStorage: (@Sendable (LoopErrorReport) -> Void)?
    // Written once, by the child handler of a fork() (while the child has a
    // single thread), and never in the process that made the loop: the
    // loop belongs to the parent process (Support/ForkHandling.swift).
    nonisolated(unsafe) private(set) var leftBehindByFork = false
    // Guarded by `stateLock`: what the deprecated `invocationErrorHandler`
    // was last set to (PerformSelector/ gives it its type).
    private var legacyInvocationHandler: (@Sendable (EventLoop, AnyObject, any Error) -> Void)?
    /// Whether `legacyInvocationHandler` is set, read without the lock: an
    /// invocation keeps a copy of its arguments for that handler only then.
    let hasLegacyInvocationHandler = Atomic<Bool>(false)
    /// The invocation this loop's thread is performing, if any (its
    /// interned `Type.selector`), which the crash line names. Written and
    /// read only on the loop's own thread (the crash handler runs there too):
    /// a field, where a thread-specific key cost three calls a job.
    @exclusivity(unchecked) nonisolated(unsafe) var invocationBeingPerformed: UnsafePointer<CChar>?

    /// The loop that belongs to the process's main thread.
    ///
    /// Created on first use without throwing; if a system call fails while
    /// making it, the first call that can throw (``run()``, ``post(file:line:_:)-16vnh``, ...)
    /// throws that ``EventLoopError/system(call:errno:)`` error. Only the main
    /// thread may ``run()`` it: keep `main.swift` synchronous and end it with
    /// `try EventLoop.main.run()`.
    public static let main = EventLoop(mainLoop: ())

    /// Makes a loop for a thread of your own: whichever thread calls ``run()``
    /// owns it from then on.
    ///
    /// With a `mailboxCapacity`, a post from another thread that finds the
    /// mailbox full waits until the loop has drained room (producers are
    /// served in the order they blocked, so none starves): a slow loop slows
    /// its producers instead of growing memory. ``post(timeout:file:line:_:)`` bounds
    /// that wait and ``tryPost(file:line:_:)`` does not wait at all. Posts made on the
    /// loop's own thread are always admitted (it cannot wait for itself), so
    /// they may exceed the capacity. `nil` (the default) means unbounded.
    ///
    /// `latencyStats` (on by default) keeps the queue-delay and run-time
    /// histograms of ``stats`` (``EventLoopStats/queueDelay``,
    /// ``EventLoopStats/runTime``), by sampling about one post in 300; `false`
    /// saves those clock reads.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` for a capacity below
    ///   1; ``EventLoopError/system(call:errno:)`` if the eventfd or the
    ///   libevent base cannot be made (for example at the fd limit).
    public init(name: String = "EventLoop", mailboxCapacity: Int? = nil, latencyStats: Bool = true) throws {
        if let mailboxCapacity, mailboxCapacity < 1 {
            throw EventLoopError.invalidArgument("mailboxCapacity must be at least 1, got \(mailboxCapacity)")
        }
        self.name = name
        self.isMain = false
        let core = try LoopCore(mailboxCapacity: mailboxCapacity, latencyStats: latencyStats)
        self.setup = .success(core)
        self.mailbox = core.mailbox
        self.recordPool = core.mailbox.isBounded ? nil : InvocationRecordPool()
        executor.attach(to: self)
        ForkHandling.register(self)
    }

    /// The loop's thread is done with the pool: nobody runs a record here
    /// any more, and every poster that could take one held the loop.
    deinit {
        recordPool?.destroy()
    }

    private init(mainLoop: ()) {
        self.name = "main"
        self.isMain = true
        let configuration = MainLoopConfiguration.claim()
        do {
            let core = try LoopCore(
                mailboxCapacity: configuration.mailboxCapacity, latencyStats: configuration.latencyStats)
            self.setup = .success(core)
            self.mailbox = core.mailbox
            self.recordPool = core.mailbox.isBounded ? nil : InvocationRecordPool()
        } catch {
            self.setup = .failure(error)
            self.mailbox = Mailbox(refusing: error)
            self.recordPool = nil
        }
        executor.attach(to: self)
        ForkHandling.register(self)
    }

    /// Bounds ``EventLoop/main``'s mailbox, and turns its latency figures
    /// on or off (see ``init(name:mailboxCapacity:latencyStats:)``).
    /// Call it before anything touches `EventLoop.main`.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` once `EventLoop.main`
    ///   exists, or for a capacity below 1.
    public static func configureMain(mailboxCapacity: Int?, latencyStats: Bool = true) throws {
        try MainLoopConfiguration.set(mailboxCapacity: mailboxCapacity, latencyStats: latencyStats)
    }

    /// Starts a new thread named `name` that runs a new loop, and returns once
    /// that loop is running.
    ///
    /// The thread ends when the loop is stopped (``stop()``); ``join(timeout:)``
    /// waits for that. `mailboxCapacity` bounds the mailbox as in
    /// ``init(name:mailboxCapacity:latencyStats:)``.
    /// - Throws: ``EventLoopError/system(call:errno:)`` if the loop or the
    ///   thread cannot be made; ``EventLoopError/invalidArgument(_:)`` as the initializer.
    public static func spawn(
        name: String = "EventLoop", mailboxCapacity: Int? = nil, latencyStats: Bool = true
    ) throws -> EventLoop {
        let loop = try EventLoop(name: name, mailboxCapacity: mailboxCapacity, latencyStats: latencyStats)
        loop.ownsSpawnedThread = true
        do {
            try startDetachedThread(name: name) { loop.runOnSpawnedThread() }
        } catch {
            loop.stop()  // never ran: opens its termination latch too
            throw error
        }
        try loop.postAndWait {}
        return loop
    }

    private func runOnSpawnedThread() {
        do {
            try run()
        } catch {
            writeToStandardError("MainLoop: loop '\(name)' ended with an error: \(error)\n")
        }
        // The thread's last act: nothing of the loop's runs on it after this.
        termination.open()
    }

    /// The loop running on the calling thread (inside its ``run()``), if any.
    public static var current: EventLoop? {
        guard let pointer = pthread_getspecific(currentLoopKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// ``current``, unretained: for code that runs inside the loop (a job,
    /// a record), which keeps it alive.
    static var currentUnretained: Unmanaged<EventLoop>? {
        pthread_getspecific(currentLoopKey).map { Unmanaged.fromOpaque($0) }
    }

    /// True when the caller is this loop's thread, inside ``run()``.
    public var inLoop: Bool {
        pthread_getspecific(currentLoopKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    public var description: String { "EventLoop(\(name))" }

    /// True when the caller is the process's main thread (checked with the
    /// kernel thread id, which stays right across suspension points, unlike
    /// a cached `pthread_self()`).
    public static var isMainThread: Bool { mainloop_gettid() == getpid() }

    // MARK: - Lifecycle

    /// Runs the loop on the calling thread until ``stop()``, then returns.
    ///
    /// Work posted before `run()` runs as soon as the loop starts.
    /// ``EventLoop/main`` also runs `DispatchQueue.main` blocks and
    /// `@MainActor` jobs while it runs, on the main thread. When
    /// `stop()` is called, everything the loop had accepted still runs (the
    /// final drain), timers are cancelled and watchers removed, and then
    /// `run()` returns.
    ///
    /// - Throws: ``EventLoopError/notOwnerThread`` for ``EventLoop/main`` off
    ///   the main thread; ``EventLoopError/alreadyRunning`` if it is running;
    ///   ``EventLoopError/shutDown`` once it has been stopped;
    ///   ``EventLoopError/system(call:errno:)`` if the loop could not be made
    ///   or libevent failed (accepted work has still run).
    public func run() throws {
        let core = try core()
        if isMain && !EventLoop.isMainThread { throw EventLoopError.notOwnerThread }
        stateLock.lock()
        switch lifecycle {
        case .idle:
            lifecycle = .running
            ownerThread = ThreadToken.current
            stateLock.unlock()
        case .running, .stopping:
            stateLock.unlock()
            throw EventLoopError.alreadyRunning
        case .stopped:
            stateLock.unlock()
            throw leftBehindByFork ? EventLoopError.forked : EventLoopError.shutDown
        }

        CrashReport.installed
        let outer = pthread_getspecific(currentLoopKey)
        pthread_setspecific(currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
        // The main loop also drains DispatchQueue.main (and so the default
        // MainActor executor). If that cannot be set up, the loop stops at
        // once, still running what it had accepted, and run() reports why.
        var mainQueueFailure: (any Error)?
        if isMain {
            do { try watchDispatchMainQueue() } catch {
                mainQueueFailure = error
                stop()
            }
        }
        let rc = event_base_loop(core.base, EVLOOP_NO_EXIT_ON_EMPTY)
        let failure = errno
        // Normally the final drain broke the loop with the mailbox closed and
        // empty; if libevent returned on its own, the loop stops here (posts
        // and registrations refused together, as `stop()` does) and runs
        // what was accepted.
        stop()
        core.drainRemaining()
        pthread_setspecific(currentLoopKey, outer)

        finishStopping()
        if !ownsSpawnedThread { termination.open() }
        if rc == -1 { throw EventLoopError.system(call: "event_base_loop", errno: failure) }
        if let mainQueueFailure { throw mainQueueFailure }
    }

    /// Stops the loop. Callable from any thread, at any time, any number of times.
    ///
    /// - On a running loop: from this moment every `post`, `postAndWait`,
    ///   `schedule` and `watch` throws ``EventLoopError/shutDown`` (also when
    ///   called by work running in the final drain); everything accepted
    ///   before still runs, and its blocked callers get their results; then
    ///   timers are cancelled, watchers removed and ``run()`` returns.
    /// - On a loop that has not run: what was queued is discarded without
    ///   running, its blocked callers are released with
    ///   ``EventLoopError/shutDown``, timers and watchers are cancelled, and a
    ///   later ``run()`` throws ``EventLoopError/shutDown``.
    ///
    /// `stop()` does not wait for the loop to finish.
    public func stop() {
        // The lifecycle and the mailbox change in one critical section (the
        // mailbox's lock nests inside `stateLock`, never the other way), so
        // that from this moment posts, executor jobs and registrations
        // (timers, watchers, signals, delayed performs) are all refused: no
        // thread can see one refused and a later one accepted.
        stateLock.lock()
        switch lifecycle {
        case .idle:
            lifecycle = .stopped
            let live = registrations
            registrations = [:]
            let (queuedBatches, refused) = mailbox.closeAndTakeAll()
            stateLock.unlock()
            for entry in refused { entry.waiter.wakeProducer() }
            for var queued in queuedBatches {
                queued.removeAll { $0.abandon(.shutDown) }
                queued.deallocate()
            }
            for registration in live.values { registration.cancel() }
            termination.open()
        case .running:
            lifecycle = .stopping
            let (sleeping, refused) = mailbox.close()
            stateLock.unlock()
            for entry in refused { entry.waiter.wakeProducer() }
            if sleeping { wake() }
        case .stopping, .stopped:
            stateLock.unlock()
        }
    }

    /// Receives, on the loop's thread, every error thrown by work nobody
    /// waits for: throwing closures posted with ``post(file:line:_:)-54xny``,
    /// throwing timer, watcher and signal handlers, and invocations
    /// performed with `waitUntilDone: false` or `afterDelay`. When nil, each
    /// such error is written as one line to standard error, naming the loop,
    /// what threw (see ``LoopErrorReport/label``) and the error.
    public var errorHandler: (@Sendable (LoopErrorReport) -> Void)? {
        get { stateLock.withLock { errorHandlerStorage } }
        set {
            // The old handler is released after the lock: its captures may
            // hold the last handle of a LoopBound on this loop, whose release
            // takes this lock (`retire`), and it is not recursive.
            var previous = newValue
            stateLock.withLock { swap(&previous, &errorHandlerStorage) }
        }
    }

    /// What the deprecated `invocationErrorHandler` was set to, type-erased
    /// (PerformSelector/InvocationErrorHandler.swift gives it its type).
    var legacyInvocationErrorHandler: (@Sendable (EventLoop, AnyObject, any Error) -> Void)? {
        get { stateLock.withLock { legacyInvocationHandler } }
        set {
            var previous = newValue  // released after the lock, as `errorHandler`'s
            stateLock.withLock {
                swap(&previous, &legacyInvocationHandler)
                hasLegacyInvocationHandler.store(legacyInvocationHandler != nil, ordering: .relaxed)
            }
        }
    }

    /// Why the calling thread, which is not running this loop, may not reach
    /// a value the loop owns, or nil when it may: the loop's `run()` has
    /// returned on this very thread (the final drain is over; nobody else
    /// can reach the value any more).
    func refusesDirectAccess() -> String? {
        let (state, owner) = stateLock.withLock { (lifecycle, ownerThread) }
        let remedy = "from another thread use post, postAndWait or perform, which run it on the loop"
        switch state {
        case .idle:
            return
                "the value belongs to loop '\(name)', which has not started running; withValue works only on its thread once run() has begun (in a post, timer or watcher of the loop); \(remedy)"
        case .running, .stopping:
            return
                "the value belongs to loop '\(name)', which is running on another thread; withValue works only there (in a post, timer or watcher of the loop); \(remedy)"
        case .stopped:
            if owner == 0 {
                return "loop '\(name)' was stopped before it ever ran: nothing may reach its value any more"
            }
            if owner == ThreadToken.current { return nil }
            return
                "loop '\(name)' has stopped; after its run() returned, only the thread that ran it may reach the value with withValue"
        }
    }

    /// True while the loop has not been run yet (nor stopped).
    var isIdle: Bool {
        stateLock.withLock { if case .idle = lifecycle { true } else { false } }
    }

    /// True once the loop has stopped for good: ``run()`` has returned after
    /// ``stop()``, or the loop was stopped before it ever ran.
    public var hasStopped: Bool {
        stateLock.withLock { if case .stopped = lifecycle { true } else { false } }
    }

    /// Blocks the calling thread until the loop has finished for good: its
    /// ``run()`` has returned after ``stop()`` (for a loop made by
    /// ``spawn(name:mailboxCapacity:latencyStats:)``, its thread has also finished and is
    /// exiting), or it was stopped before it ever ran.
    ///
    /// `join` does not stop the loop: call ``stop()`` first, or from the
    /// loop's own work.
    ///
    /// Called from another loop's thread, the wait is an edge of the same
    /// wait-for graph as a blocking post: a cycle (this loop's thread is
    /// blocked, directly or through a chain, posting to or joining the
    /// caller's loop) throws ``EventLoopError/deadlock`` instead of hanging.
    /// - Parameter timeout: how long to wait at most; `nil` waits as long as
    ///   it takes; `.zero` or a negative duration only looks (it throws
    ///   ``EventLoopError/timedOut`` unless the loop has already finished); a
    ///   duration past the monotonic clock's range (about 292 years) is the
    ///   same as `nil`.
    /// - Throws: ``EventLoopError/timedOut`` when the timeout passes first;
    ///   ``EventLoopError/deadlock`` when called on the loop's own thread
    ///   (it would wait for itself) or when the wait would close a cycle of
    ///   loops; for an ``EventLoop/main`` that could not be made, the
    ///   ``EventLoopError/system(call:errno:)`` error (it can never run).
    public func join(timeout: Duration? = nil) throws(EventLoopError) {
        _ = try core()
        if inLoop { throw .deadlock }
        let deadline = monotonicDeadline(after: timeout)
        let caller = EventLoop.current
        if let caller { try WaitForGraph.block(caller, on: self) }
        defer { if let caller { WaitForGraph.unblock(caller) } }
        guard termination.wait(until: deadline) else { throw .timedOut }
    }

    /// Suspends the calling task, without blocking a thread, until the loop
    /// has finished for good (as ``join(timeout:)`` describes).
    ///
    /// To bound the wait, race it against a timer in a task group, or cancel
    /// the waiting task's parent: cancellation does not end this wait.
    public func terminated() async {
        await termination.wait()
    }

    /// Child of fork() only (Support/ForkHandling.swift): this loop was made
    /// by the parent process. Its locks are made anew, it is stopped with
    /// nothing run, released or cancelled (all of that is the parent's),
    /// and every later call is refused with ``EventLoopError/forked``.
    func leaveBehindInForkedChild() {
        leftBehindByFork = true
        stateLock.remakeInForkedChild()
        namedExecutorsLock.remakeInForkedChild()
        lifecycle = .stopped
        mailbox.closeInForkedChild()
        if case .success(let core) = setup { core.leaveBehindInForkedChild() }
        termination.openInForkedChild()
    }

    /// Loop thread, after the final drain: the terminal transition.
    private func finishStopping() {
        stateLock.lock()
        lifecycle = .stopped
        let live = registrations
        registrations = [:]
        let retiredNow = retired
        retired = []
        stateLock.unlock()
        for registration in live.values { registration.cancel() }
        _ = retiredNow  // released here, after the final drain
    }

    /// Any thread: releases `object` on the loop, after every job queued
    /// before this call has run: for an object that queued jobs reference
    /// without retaining it (a `LoopBound`'s storage). When the mailbox no
    /// longer takes jobs, the loop may still be running its final drain: the
    /// object is kept until `finishStopping` (or the loop's end), and let go
    /// at once only when the loop has stopped for good.
    func retire(_ object: any AnyObject & Sendable) {
        do {
            try enqueue(.work { _ = object }, policy: .admit)
        } catch {
            stateLock.withLock {
                if case .stopped = lifecycle { return }
                retired.append(object)
            }
        }
    }

    /// Adds a timer or watcher to the set that `stop()` cancels, unless the
    /// loop no longer accepts work.
    func register(_ registration: LoopEvent) throws(EventLoopError) {
        stateLock.lock()
        defer { stateLock.unlock() }
        switch lifecycle {
        case .idle, .running: registrations[ObjectIdentifier(registration)] = registration
        case .stopping, .stopped: throw leftBehindByFork ? .forked : .shutDown
        }
    }

    func unregister(_ registration: LoopEvent) {
        // Released after the lock (see `errorHandler`): a handler's captures
        // may hold the last handle of a LoopBound on this loop.
        let removed = stateLock.withLock { registrations.removeValue(forKey: ObjectIdentifier(registration)) }
        _ = removed
    }

    /// The loop's machinery, or the error that prevented making it.
    @inline(__always)
    func core() throws(EventLoopError) -> LoopCore {
        try setup.get()
    }

    /// Any thread: wakes the loop, when the mailbox said it sleeps (only an
    /// open mailbox says so, and only a loop that was made has one).
    @inline(__always)
    func wake() {
        if case .success(let core) = setup { core.wake() }
    }

    /// A snapshot of the loop's counters; see ``EventLoopStats``.
    public var stats: EventLoopStats {
        var stats = mailbox.counters()
        if case .success(let core) = setup, let recorder = core.monitor.recorder {
            (stats.queueDelay, stats.runTime) = recorder.summaries()
        }
        return stats
    }

    /// Zeroes the latency figures of ``stats`` (``EventLoopStats/queueDelay``
    /// and ``EventLoopStats/runTime``). The counters, which hold invariants
    /// such as `posted == executed` once quiet, are kept.
    public func resetStats() {
        if case .success(let core) = setup { core.monitor.recorder?.reset() }
    }

    /// Calls `handler` on the loop's thread after every job that ran longer
    /// than `threshold`, with its label and run time (see ``SlowJobReport``).
    ///
    /// From then on the loop times every job (two clock reads each, so
    /// ``EventLoopStats/runTime`` counts every job), and records each post's
    /// call site to label it. A later call replaces the handler.
    /// - Throws: ``EventLoopError/shutDown`` once the loop has stopped.
    public func onSlowJob(threshold: Duration, _ handler: @escaping @Sendable (SlowJobReport) -> Void) throws {
        let nanoseconds = threshold.clampedNanoseconds
        try core().watchEveryJob { $0.setSlowJobHandler(threshold: nanoseconds, handler) }
    }
}
