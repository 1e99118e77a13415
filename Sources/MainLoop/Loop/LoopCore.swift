// LoopCore.swift: the libevent base a loop runs, its mailbox, the eventfd
// that wakes it, and the one drain routine.
//
// `wakeEvent` watches the eventfd: a producer writes it when the mailbox
// says the loop sleeps (see the wake-up rule in Mailbox.swift). `rearmEvent` is a timer the loop arms itself with a zero
// timeout when a drain ends with more work queued: no syscall, and a timer
// only becomes active in the *next* iteration, after libevent has polled I/O
// (the loop's timers' timerfd with it: `TimerQueue`), so I/O and timers get
// their turn between batches.
// (`event_active` would not do: an event activated from its own callback is
// run again in the same pass, and a self-posting job would starve the rest.)
import CLibevent
import Glibc

/// libevent's cross-thread locking must be switched on before the first base exists.
private let libeventThreadingEnabled: Bool = evthread_use_pthreads() == 0

final class LoopCore: @unchecked Sendable {
    // `@unchecked Sendable`: the `let`s are immutable after init (the base
    // itself is driven by the loop thread, and libevent's own lock, with
    // threading enabled, guards cross-thread event_add/del); the `var`s are
    // each guarded as their comments say: `wakeEvent`, `rearmEvent`,
    // `timerEvent` and `nextBatch` are loop-thread only (set in init, before any thread can
    // see the core, and read by the loop), `sharedActivity` by
    // `activityLock`.
    let base: OpaquePointer
    let mailbox: Mailbox
    /// Written to wake the loop; read (reset) by the loop. Owned: closed in deinit.
    let eventFD: Int32
    private var wakeEvent: OpaquePointer?
    private var rearmEvent: OpaquePointer?
    /// Watches `timers.fd`.
    private var timerEvent: OpaquePointer?
    /// The loop's timers (``EventLoop/schedule(after:_:)``).
    let timers: TimerQueue
    /// Latency figures, slow jobs, the watchdog's activity word (see
    /// Observability/). Its handlers are installed on the loop thread.
    let monitor: JobMonitor
    /// The activity word a watchdog reads; made by the first `watchdog`.
    private let activityLock = Lock()
    private var sharedActivity: LoopActivity?

    init(mailboxCapacity: Int?, latencyStats: Bool = true) throws(EventLoopError) {
        guard libeventThreadingEnabled else {
            throw .system(call: "evthread_use_pthreads", errno: ENOSYS)
        }
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .system(call: "eventfd", errno: errno) }
        // libevent calls exit(1) when it cannot make its signal socketpair
        // (evsig_init_): near the fd limit, make sure first that the five
        // descriptors event_base_new and the timers take (epoll, socketpair,
        // notification eventfd, the timers' timerfd) can be opened, and
        // throw if not.
        let probes = (0..<5).map { _ in fcntl(fd, F_DUPFD_CLOEXEC, 0) }
        let probeError = errno
        for probe in probes where probe >= 0 { close(probe) }
        if probes.contains(where: { $0 < 0 }) {
            close(fd)
            throw .system(call: "event_base_new", errno: probeError)
        }
        // Uncached time: a libevent timeout added by a long-running job must
        // count from now, not from the top of the loop iteration. Not
        // EVENT_BASE_FLAG_PRECISE_TIMER: it costs a timerfd_settime on every
        // turn; the loop's timers have a timerfd of their own (TimerQueue),
        // and libevent's only timer is `rearmEvent`'s zero timeout, which
        // its coarse clock serves as well.
        let config = event_config_new()
        if let config {
            event_config_set_flag(config, Int32(EVENT_BASE_FLAG_NO_CACHE_TIME.rawValue))
        }
        let made = config.flatMap { event_base_new_with_config($0) }
        let code = errno
        if let config { event_config_free(config) }
        guard let base = made else {
            close(fd)
            throw .system(call: "event_base_new", errno: code == 0 ? ENOMEM : code)
        }
        do {
            timers = try TimerQueue()
        } catch {
            event_base_free(base)
            close(fd)
            throw error
        }
        self.base = base
        self.eventFD = fd
        self.mailbox = Mailbox(capacity: mailboxCapacity, sampling: latencyStats)
        self.monitor = JobMonitor(latencyStats: latencyStats)
        let context = Unmanaged.passUnretained(self).toOpaque()
        wakeEvent = event_new(
            base, fd, Int16(EV_READ | EV_PERSIST),
            { _, _, context in
                Unmanaged<LoopCore>.fromOpaque(context!).takeUnretainedValue().drain(consumingWakeSignal: true)
            }, context)
        rearmEvent = event_new(
            base, -1, 0,
            { _, _, context in
                Unmanaged<LoopCore>.fromOpaque(context!).takeUnretainedValue().drain(consumingWakeSignal: false)
            }, context)
        timerEvent = event_new(
            base, timers.fd, Int16(EV_READ | EV_PERSIST),
            { _, what, context in
                let readable = Int32(what) & Int32(EV_READ) != 0
                Unmanaged<LoopCore>.fromOpaque(context!).takeUnretainedValue().timers.fire(readable: readable)
            }, context)
        timers.event = timerEvent
        guard let wakeEvent, let timerEvent, rearmEvent != nil else {
            throw .system(call: "event_new", errno: ENOMEM)  // deinit frees what exists
        }
        guard event_add(wakeEvent, nil) == 0, event_add(timerEvent, nil) == 0 else {
            throw .system(call: "event_add", errno: errno == 0 ? ENOMEM : errno)
        }
    }

    deinit {
        if let wakeEvent { event_free(wakeEvent) }
        if let rearmEvent { event_free(rearmEvent) }
        if let timerEvent { event_free(timerEvent) }
        event_base_free(base)
        close(eventFD)
    }

    /// Any thread: wakes the loop, when an offer to the mailbox said so.
    func wake() {
        let rc = mainloop_eventfd_signal(eventFD)
        // Only EBADF/EINVAL can get here, which would mean the eventfd was
        // closed while a producer still held the loop.
        precondition(rc == 0, "MainLoop: writing the loop's eventfd \(eventFD) failed with errno \(rc)")
    }

    /// Any thread: the activity word for a watchdog, made (and handed to the
    /// loop's monitor, and labelling switched on) by the first caller.
    func activity() throws(EventLoopError) -> LoopActivity {
        activityLock.lock()
        defer { activityLock.unlock() }
        if let sharedActivity { return sharedActivity }
        let activity = LoopActivity()
        sharedActivity = activity
        try watchEveryJob { $0.attach(activity) }
        return activity
    }

    /// Any thread: from now on every job is labelled with its post site and
    /// goes through the monitor, which `change` sets up on the loop's
    /// thread (a slow-job handler, a watchdog's activity word). The mailbox
    /// is told here, not by the monitor: the monitor knows nothing of it.
    func watchEveryJob(_ change: @escaping @Sendable (JobMonitor) -> Void) throws(EventLoopError) {
        mailbox.startLabelling()
        let (monitor, mailbox) = (self.monitor, self.mailbox)
        let job = Job.work {
            change(monitor)
            mailbox.startWatching()
        }
        if case .queuedWakeLoop = try mailbox.admit(job, site: .none) { wake() }
    }

    /// Loop thread only: the batch the last drain took for the next turn.
    private var nextBatch: JobBuffer?

    /// Loop thread: runs every job of `batch` in order, the urgent lane
    /// first whenever it has jobs, and measures what the monitor asks for.
    /// Returns how many urgent jobs ran.
    private func run(_ batch: inout JobBuffer) -> Int {
        var urgentRan = 0
        var samples = SampleCursor(batch)
        var index = 0
        while true {
            let attention = mailbox.attention
            if attention & ~Mailbox.Attention.watching != 0 {
                if attention & Mailbox.Attention.leftBehind != 0 { LoopCore.returnedAfterFork() }
                urgentRan += runUrgent()
            }
            guard index < batch.count else { break }
            runJob(index, of: batch, &samples, watched: attention & Mailbox.Attention.watching != 0)
            index += 1
        }
        batch.reset()
        monitor.end()
        return urgentRan
    }

    /// A job, timer or watcher handler called fork() on the loop's thread,
    /// and the child returned from it into the loop. The rest of the batch
    /// (and the I/O, shared with the parent through one epoll set) is the
    /// parent's: running it twice would repeat its effects and steal the
    /// parent's events. The child must `_exit` or `exec` first.
    static func returnedAfterFork() -> Never {
        fatalError(
            "MainLoop: a child of fork() returned into its parent's event loop; a child forked from a loop's thread must call _exit or exec before returning from the job that forked"
        )
    }

    /// Child of fork() only, for a loop left behind in the parent: its
    /// locks are made anew (the threads that held them did not survive).
    func leaveBehindInForkedChild() {
        activityLock.remakeInForkedChild()
        timers.remakeInForkedChild()
        monitor.recorder?.remakeLockInForkedChild()
    }

    /// Loop thread: runs every urgent job queued now, FIFO; returns how many.
    private func runUrgent() -> Int {
        var urgent = mailbox.takeUrgent()
        let count = urgent.count
        var samples = SampleCursor(urgent)
        let watched = mailbox.attention & Mailbox.Attention.watching != 0
        for index in 0..<count { runJob(index, of: urgent, &samples, watched: watched) }
        urgent.reset()
        mailbox.finishUrgent(urgent, ran: count)
        return count
    }

    /// Loop thread: runs job `index` of `buffer`: straight, or through the
    /// monitor when it is sampled or somebody watches every job.
    @inline(__always)
    private func runJob(_ index: Int, of buffer: JobBuffer, _ samples: inout SampleCursor, watched: Bool) {
        let acceptedAt = samples.acceptedAt(index, in: buffer)
        if acceptedAt != nil || watched {
            monitor.run(buffer.slot(index), site: buffer.site(index), acceptedAt: acceptedAt)
        } else {
            Job.run(buffer.slot(index))
        }
    }

    /// Loop thread: runs the batch that is pending now (and only that: posts
    /// made while it runs wait for the next turn), then asks the mailbox
    /// what's next, keeping a batch it hands back for the next turn.
    ///
    /// When woken through the eventfd, its counter is reset after the batch
    /// ran (the first job starts one syscall sooner) but before
    /// `finishDrain`: no producer writes the eventfd until `finishDrain` has
    /// declared the loop asleep again, so no wake-up can be lost in between.
    private func runBatch(consumingWakeSignal: Bool) -> Mailbox.DrainOutcome {
        var batch: JobBuffer
        if let next = nextBatch {
            batch = next
            nextBatch = nil
        } else {
            let taken = mailbox.takeBatch()
            batch = taken.batch
            for producer in taken.admitted { producer.wakeProducer() }
        }
        let ran = batch.count
        _ = run(&batch)
        if consumingWakeSignal { _ = mainloop_eventfd_drain(eventFD) }
        let outcome = mailbox.finishDrain(consume batch, ran: ran)
        if case .more(let next, let admitted) = outcome {
            nextBatch = next
            for producer in admitted { producer.wakeProducer() }
        }
        return outcome
    }

    /// Loop thread, from libevent: one batch per turn; more work re-arms
    /// the zero timer, so I/O and timers run before the next batch.
    private func drain(consumingWakeSignal: Bool) {
        switch runBatch(consumingWakeSignal: consumingWakeSignal) {
        case .more:
            var now = timeval(tv_sec: 0, tv_usec: 0)
            event_add(rearmEvent, &now)
        case .idle: break
        case .closedAndEmpty: event_base_loopbreak(base)
        }
    }

    /// Loop thread, after the event loop returned for any reason and the
    /// loop was stopped (`EventLoop.run` calls `stop()` first, which closes
    /// the mailbox): runs what it had accepted, so nothing accepted is lost.
    func drainRemaining() {
        while case .more = runBatch(consumingWakeSignal: false) {}
    }
}

/// Walks a batch's sampled jobs in step with its jobs.
private struct SampleCursor {
    private var next: Int
    private var position = 0

    init(_ buffer: JobBuffer) {
        next = buffer.samples.first?.index ?? Int.max
    }

    /// When job `index` was accepted, if it is sampled.
    @inline(__always)
    mutating func acceptedAt(_ index: Int, in buffer: JobBuffer) -> UInt64? {
        guard index == next else { return nil }
        let time = buffer.samples[position].acceptedAt
        position += 1
        next = position < buffer.samples.count ? buffer.samples[position].index : Int.max
        return time
    }
}
