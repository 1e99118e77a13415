// LoopCore.swift: the libevent base a loop runs, and the two events that
// drain its mailbox.
//
// `wakeEvent` watches the mailbox's eventfd: producers write it when the
// loop sleeps. `rearmEvent` is a timer the loop arms itself with a zero
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
    private var wakeEvent: OpaquePointer?
    private var rearmEvent: OpaquePointer?

    init() throws(EventLoopError) {
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
        self.mailbox = Mailbox(eventFD: fd)
        let context = Unmanaged.passUnretained(self).toOpaque()
        wakeEvent = event_new(base, fd, Int16(EV_READ | EV_PERSIST), { _, _, context in
            Unmanaged<LoopCore>.fromOpaque(context!).takeUnretainedValue().drain(consumingWakeSignal: true)
        }, context)
        rearmEvent = event_new(base, -1, 0, { _, _, context in
            Unmanaged<LoopCore>.fromOpaque(context!).takeUnretainedValue().drain(consumingWakeSignal: false)
        }, context)
        guard let wakeEvent, rearmEvent != nil else {
            throw .system(call: "event_new", errno: ENOMEM)   // deinit frees what exists
        }
        guard event_add(wakeEvent, nil) == 0 else {
            throw .system(call: "event_add", errno: errno == 0 ? ENOMEM : errno)
        }
    }

    deinit {
        if let wakeEvent { event_free(wakeEvent) }
        if let rearmEvent { event_free(rearmEvent) }
        event_base_free(base)
        close(mailbox.eventFD)
    }

    /// Loop thread only: the batch the last drain took for the next turn.
    private var nextBatch: JobBuffer?

    /// Loop thread: runs the batch that is pending now (and only that: posts
    /// made while it runs wait for the next turn), then decides what's next.
    ///
    /// When woken through the eventfd, its counter is reset after the batch
    /// ran (the first job starts one syscall sooner) but before
    /// `finishDrain`: no producer writes the eventfd until `finishDrain` has
    /// declared the loop asleep again, so no wake-up can be lost in between.
    func drain(consumingWakeSignal: Bool) {
        var batch = nextBatch ?? mailbox.takeBatch()
        nextBatch = nil
        let ran = batch.count
        batch.runAll()
        if consumingWakeSignal { mailbox.consumeWakeSignal() }
        switch mailbox.finishDrain(batch, ran: ran) {
        case .more(let next):
            nextBatch = next
            var now = timeval(tv_sec: 0, tv_usec: 0)
            event_add(rearmEvent, &now)
        case .idle: break
        case .closedAndEmpty: event_base_loopbreak(base)
        }
    }

    /// Loop thread, after the event loop returned for any reason: closes the
    /// mailbox and runs what it had accepted, so nothing accepted is lost.
    func drainRemaining() {
        mailbox.close()
        while true {
            var batch = nextBatch ?? mailbox.takeBatch()
            nextBatch = nil
            let ran = batch.count
            batch.runAll()
            switch mailbox.finishDrain(batch, ran: ran) {
            case .more(let next): nextBatch = next
            case .idle, .closedAndEmpty: return
            }
        }
    }
}
