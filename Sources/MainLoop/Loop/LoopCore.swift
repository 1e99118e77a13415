// LoopCore.swift: the libevent base a loop runs, its mailbox, the eventfd
// that wakes it, and the one drain routine.
//
// `wakeEvent` watches the eventfd: a producer writes it when the mailbox
// says the loop sleeps (see the wake-up rule in Mailbox.swift). `rearmEvent` is a timer the loop arms itself with a zero
// timeout when a drain ends with more work queued: no syscall, and a timer
// only becomes active in the *next* iteration, after libevent has polled I/O
// and collected due timers, so they get their turn between batches.
// (`event_active` would not do: an event activated from its own callback is
// run again in the same pass, and a self-posting job would starve the rest.)
import CLibevent
import Glibc

/// libevent's cross-thread locking must be switched on before the first base exists.
private let libeventThreadingEnabled: Bool = evthread_use_pthreads() == 0

final class LoopCore: @unchecked Sendable {
    // Immutable after init; the base itself is driven by the loop thread, and
    // libevent's own lock (threading enabled) guards cross-thread event_add/del.
    let base: OpaquePointer
    let mailbox: Mailbox
    /// Written to wake the loop; read (reset) by the loop. Owned: closed in deinit.
    let eventFD: Int32
    private var wakeEvent: OpaquePointer?
    private var rearmEvent: OpaquePointer?

    init(mailboxCapacity: Int?) throws(EventLoopError) {
        guard libeventThreadingEnabled else {
            throw .system(call: "evthread_use_pthreads", errno: ENOSYS)
        }
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .system(call: "eventfd", errno: errno) }
        // Precise, uncached time. Uncached: a timer added by a long-running
        // job must count its delay from now, not from the top of the loop
        // iteration. Precise: libevent's default coarse clock ticks every few
        // milliseconds, so timers could fire early. (The precise timer costs
        // a timerfd_settime per loop iteration, which measured as no loss:
        // a slightly slower iteration drains slightly larger batches.)
        let config = event_config_new()
        if let config {
            event_config_set_flag(config, Int32(EVENT_BASE_FLAG_NO_CACHE_TIME.rawValue))
            event_config_set_flag(config, Int32(EVENT_BASE_FLAG_PRECISE_TIMER.rawValue))
        }
        let made = config.flatMap { event_base_new_with_config($0) }
        let code = errno
        if let config { event_config_free(config) }
        guard let base = made else {
            close(fd)
            throw .system(call: "event_base_new", errno: code == 0 ? ENOMEM : code)
        }
        self.base = base
        self.eventFD = fd
        self.mailbox = Mailbox(capacity: mailboxCapacity)
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
        guard let wakeEvent, rearmEvent != nil else {
            throw .system(call: "event_new", errno: ENOMEM)  // deinit frees what exists
        }
        guard event_add(wakeEvent, nil) == 0 else {
            throw .system(call: "event_add", errno: errno == 0 ? ENOMEM : errno)
        }
    }

    deinit {
        if let wakeEvent { event_free(wakeEvent) }
        if let rearmEvent { event_free(rearmEvent) }
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

    /// Any thread: closes the mailbox (see `Mailbox.close`), waking the loop if it sleeps.
    func closeMailbox() {
        if mailbox.close() { wake() }
    }

    /// Loop thread only: the batch the last drain took for the next turn.
    private var nextBatch: JobBuffer?

    /// Loop thread: runs the batch that is pending now (and only that: posts
    /// made while it runs wait for the next turn), then asks the mailbox
    /// what's next, keeping a batch it hands back for the next turn.
    ///
    /// When woken through the eventfd, its counter is reset after the batch
    /// ran (the first job starts one syscall sooner) but before
    /// `finishDrain`: no producer writes the eventfd until `finishDrain` has
    /// declared the loop asleep again, so no wake-up can be lost in between.
    private func runBatch(consumingWakeSignal: Bool) -> Mailbox.DrainOutcome {
        var batch = nextBatch ?? mailbox.takeBatch()
        nextBatch = nil
        let ran = batch.count
        batch.runAll()
        if consumingWakeSignal { _ = mainloop_eventfd_drain(eventFD) }
        let outcome = mailbox.finishDrain(batch, ran: ran)
        if case .more(let next) = outcome { nextBatch = next }
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

    /// Loop thread, after the event loop returned for any reason: closes the
    /// mailbox and runs what it had accepted, so nothing accepted is lost.
    func drainRemaining() {
        closeMailbox()
        while case .more = runBatch(consumingWakeSignal: false) {}
    }
}
