// Mailbox.swift: the lock, the pending batch, and the rule that decides
// when the loop must be woken. A plain queue: it does not know which thread
// calls it, writes no file descriptor and never blocks anybody. It tells its
// caller "wake the loop" or "full", and the caller (EventLoop, Waiting/)
// acts on it.
//
// Producers append under `state.mutex`. The loop takes the whole pending
// batch with one swap, so a drain costs one lock round trip however many
// jobs it runs.
//
// Wake-up rule (the invariant everything else leans on):
//   `phase` is `.asleep` exactly when the loop has declared that it will not
//   look at the mailbox again until it is woken. Only the producer that
//   finds it `.asleep` (and so the mailbox empty) is told to wake the loop,
//   and it moves the phase to `.awake` under the lock, so one wake-up is
//   written per sleep of the loop, however many producers race. The loop
//   goes `.asleep` again only at the end of a drain that finds the mailbox
//   empty; when a drain ends with more work queued, the loop re-arms itself
//   without any syscall. (So between a wake-up and the next `finishDrain`
//   nobody wakes the loop, and it may reset its wake-up signal anywhere in
//   that window.) Under saturation the loop never sleeps, and producers
//   write nothing.
//
// Bound (optional): with a capacity, a post that finds the mailbox full (or
// other producers already waiting) is told `.full`. A producer that will
// wait queues its job with a room-wait `Completion`, in FIFO order; the loop
// hands room to waiters, oldest first, whenever it swaps a batch out, by
// appending their jobs itself (so nobody overtakes a waiter between its
// wake-up and a retry).
//
// Urgent lane: `postUrgent` jobs go to `urgent`, a second buffer, and set
// `attention`'s urgent bit, which the loop reads (one relaxed load, with the
// bit that says somebody watches every job) before each job
// of a batch: it then takes the whole urgent buffer and runs it first, FIFO.
// Urgent jobs ignore the bound (they are admitted when the mailbox is full)
// and are refused once the mailbox is closed, like any post. A drain ends
// after its batch whatever the urgent traffic, so I/O and timers still get
// their turn between drains.
//
// Observability: with `labelling` on (somebody asked for slow jobs or
// stalls), each job's post site is stored beside it; with `sampling` on
// (the latency figures), one post in 64 is stamped with the time it was
// accepted, a clock read this lock already covers.
//
// Layout: the mutex and everything it guards live in one manually allocated
// struct. Pointer access has no dynamic exclusivity checks (class stored
// properties do, and they showed up in profiles of the post path), and the
// mutex never moves.
import CLibevent
import Synchronization

final class Mailbox: @unchecked Sendable {
    // `@unchecked Sendable`: every field of `State` but `spare` is guarded by
    // `State.mutex`; `spare` is loop-thread only.

    /// Where the loop stands with respect to this mailbox.
    enum Phase {
        /// The loop will look at the mailbox again without being woken.
        case awake
        /// The loop sleeps until woken: the next producer must wake it.
        case asleep
        /// No post is accepted; each one throws the reason.
        case closed(EventLoopError)
    }

    /// What became of an offered job.
    enum Offer {
        /// Queued; the loop will see it.
        case queued
        /// Queued, and the loop was asleep: the caller must wake it.
        case queuedWakeLoop
        /// Not queued: a bounded mailbox is full, or producers wait before this one.
        case full
    }

    enum DrainOutcome {
        /// More work arrived during the drain; here it is, taken in the same
        /// critical section (one lock round trip per drain under load). Run it
        /// after I/O and timers had a turn.
        case more(JobBuffer)
        /// Empty; the phase is `.asleep` and the loop may sleep.
        case idle
        /// Empty and closed: the final drain is done.
        case closedAndEmpty
    }

    private struct State {
        var mutex = pthread_mutex_t()
        // Guarded by `mutex`.
        var pending = JobBuffer()
        /// `postUrgent` jobs, run before the rest of the current batch.
        var urgent = JobBuffer()
        var phase = Phase.asleep
        /// Record each job's post site (set once, never cleared).
        var labelling = false
        /// Stamp one post in 64 with the time it was accepted.
        var sampling = false
        /// Most jobs `pending` may hold (Int.max: unbounded).
        var capacity = Int.max
        /// Producers blocked for room, oldest first, with the job each brings.
        var roomWaiters: [(job: Job, site: PostSite, waiter: Completion<Void>)] = []
        var posted: UInt64 = 0
        var wakeUpsWritten: UInt64 = 0
        var highWaterMark = 0
        var postsThatWaited: UInt64 = 0
        // Written by the loop thread under `mutex` at the end of each drain,
        // so that `stats` can read them from any thread.
        var executed: UInt64 = 0
        var drains: UInt64 = 0
        var largestBatch = 0
        // Loop thread only: the empty buffers swapped in for the next batch.
        var spare = JobBuffer()
        var spareUrgent = JobBuffer()
    }

    private let state: UnsafeMutablePointer<State>
    /// What the loop must look at before its next job, in one word so that
    /// a job costs one relaxed load: `Attention.urgent` (urgent jobs are
    /// queued: set under the mutex by `offerUrgent`, cleared under it by
    /// `takeUrgent`; a stale read only delays them to the next check) and
    /// `Attention.watching` (every job goes through the monitor; set once).
    /// It has a cache line of its own (see `AttentionWord`).
    private let attentionWord = AttentionWord()

    enum Attention {
        static let urgent: UInt8 = 1
        static let watching: UInt8 = 2
    }

    /// An open mailbox holding at most `capacity` pending jobs (nil:
    /// unbounded); `sampling` stamps one post in 64 for the latency figures.
    init(capacity: Int?, sampling: Bool = false) {
        state = .allocate(capacity: 1)
        state.initialize(to: State())
        state.pointee.capacity = capacity ?? Int.max
        state.pointee.sampling = sampling
        let rc = mainloop_mutex_init_adaptive(&state.pointee.mutex)
        precondition(rc == 0, "MainLoop: pthread_mutex_init failed with errno \(rc)")
    }

    /// A mailbox that was never open: every post throws `reason` (a loop
    /// whose machinery could not be made).
    convenience init(refusing reason: EventLoopError) {
        self.init(capacity: nil)
        state.pointee.phase = .closed(reason)
    }

    deinit {
        // Jobs still queued belong to a loop that is being deallocated
        // without having run them: release their closures and tell anybody
        // who waits. (Not `Job.abandon`, which names the loop, and the loop
        // is what is going away.)
        for index in 0..<2 {
            let abandon: (Job) -> Void = { job in
                if case .record(let record) = job { record.abandon(.shutDown) }
            }
            if index == 0 { state.pointee.pending.removeAll(abandon) } else { state.pointee.urgent.removeAll(abandon) }
        }
        state.pointee.pending.deallocate()
        state.pointee.urgent.deallocate()
        state.pointee.spare.deallocate()
        state.pointee.spareUrgent.deallocate()
        pthread_mutex_destroy(&state.pointee.mutex)
        state.deinitialize(count: 1)
        state.deallocate()
    }

    @inline(__always) private func lock() { pthread_mutex_lock(&state.pointee.mutex) }
    @inline(__always) private func unlock() { pthread_mutex_unlock(&state.pointee.mutex) }

    /// Lock held: throws the close reason once closed.
    @inline(__always)
    private func checkOpen() throws(EventLoopError) {
        if case .closed(let reason) = state.pointee.phase {
            unlock()
            throw reason
        }
    }

    /// Lock held: appends `job` to `buffer` (its site when labelling, a
    /// stamp for one post in 64 when sampling).
    @inline(__always)
    private func store(_ job: Job, site: PostSite, in buffer: UnsafeMutablePointer<JobBuffer>) {
        if state.pointee.labelling {
            buffer.pointee.append(job, site: site)
        } else {
            buffer.pointee.append(job)
        }
        state.pointee.posted &+= 1
        if state.pointee.sampling && state.pointee.posted & 63 == 0 {
            buffer.pointee.sampleLast(acceptedAt: mainloop_monotonic_ns())
        }
    }

    /// Lock held: the loop is asleep: the caller must wake it.
    @inline(__always)
    private func wakeIfAsleep() -> Offer {
        guard case .asleep = state.pointee.phase else { return .queued }
        state.pointee.phase = .awake
        state.pointee.wakeUpsWritten &+= 1
        return .queuedWakeLoop
    }

    /// Lock held: appends `job` and says whether the loop must be woken.
    @inline(__always)
    private func append(_ job: Job, site: PostSite) -> Offer {
        store(job, site: site, in: &state.pointee.pending)
        if state.pointee.capacity != Int.max {
            state.pointee.highWaterMark = Swift.max(state.pointee.highWaterMark, state.pointee.pending.count)
        }
        return wakeIfAsleep()
    }

    /// Any thread: queues `job` in the urgent lane, whatever the bound.
    /// - Throws: the close reason once the mailbox is closed.
    func offerUrgent(_ job: Job, site: PostSite) throws(EventLoopError) -> Offer {
        lock()
        try checkOpen()
        store(job, site: site, in: &state.pointee.urgent)
        attentionWord.bits.bitwiseOr(Attention.urgent, ordering: .relaxed)
        let offer = wakeIfAsleep()
        unlock()
        return offer
    }

    /// Loop thread, between jobs: the `Attention` bits.
    @inline(__always)
    var attention: UInt8 { attentionWord.bits.load(ordering: .relaxed) }

    /// Loop thread: every job goes through the monitor from now on.
    func startWatching() {
        attentionWord.bits.bitwiseOr(Attention.watching, ordering: .relaxed)
    }

    /// Loop thread: takes every urgent job in one swap.
    func takeUrgent() -> JobBuffer {
        lock()
        let batch = state.pointee.urgent
        state.pointee.urgent = state.pointee.spareUrgent
        attentionWord.bits.bitwiseAnd(~Attention.urgent, ordering: .relaxed)
        unlock()
        state.pointee.spareUrgent = JobBuffer()
        return batch
    }

    /// Loop thread: hands back the emptied urgent buffer, counting its jobs.
    func finishUrgent(_ batch: JobBuffer, ran: Int) {
        lock()
        state.pointee.executed &+= UInt64(ran)
        state.pointee.spareUrgent = batch
        unlock()
    }

    /// Loop thread: record each job's post site from now on.
    func startLabelling() {
        lock()
        state.pointee.labelling = true
        unlock()
    }

    /// Any thread: queues `job` if there is room and nobody waits for room.
    /// - Throws: the close reason once the mailbox is closed.
    @inline(__always)
    func offer(_ job: Job, site: PostSite) throws(EventLoopError) -> Offer {
        lock()
        try checkOpen()
        if state.pointee.pending.count >= state.pointee.capacity || !state.pointee.roomWaiters.isEmpty {
            unlock()
            return .full
        }
        let offer = append(job, site: site)
        unlock()
        return offer
    }

    /// Any thread: queues `job` whatever the bound (the loop's own posts,
    /// Swift concurrency jobs). Never returns `.full`.
    func admit(_ job: Job, site: PostSite) throws(EventLoopError) -> Offer {
        lock()
        try checkOpen()
        let offer = append(job, site: site)
        unlock()
        return offer
    }

    /// Any thread: queues `job` if there is room now; if not, queues it
    /// behind the other room waiters with `waiter`, which the loop admits
    /// (or the close abandons) later, and returns `.full`: the caller must
    /// wait on `waiter`.
    func offer(_ job: Job, site: PostSite, orWaitWith waiter: Completion<Void>) throws(EventLoopError) -> Offer {
        lock()
        try checkOpen()
        if state.pointee.pending.count < state.pointee.capacity && state.pointee.roomWaiters.isEmpty {
            let offer = append(job, site: site)
            unlock()
            return offer
        }
        state.pointee.roomWaiters.append((job, site, waiter))
        state.pointee.postsThatWaited &+= 1
        unlock()
        return .full
    }

    /// Waiter, after its deadline: takes its job back unless the loop
    /// admitted it (or the close refused it) first. Returns true when withdrawn.
    func withdraw(_ waiter: Completion<Void>) -> Bool {
        lock()
        defer { unlock() }
        guard waiter.withdraw() else { return false }
        state.pointee.roomWaiters.removeAll { $0.waiter === waiter }
        return true
    }

    /// Lock held: moves waiting producers' jobs into `pending`, oldest first,
    /// while there is room, and wakes them.
    private func admitWaiters() {
        var served = 0
        for entry in state.pointee.roomWaiters {
            guard state.pointee.pending.count < state.pointee.capacity else { break }
            served += 1
            guard entry.waiter.admit() else { continue }
            store(entry.job, site: entry.site, in: &state.pointee.pending)
        }
        guard served > 0 else { return }
        state.pointee.roomWaiters.removeFirst(served)
        state.pointee.highWaterMark = Swift.max(state.pointee.highWaterMark, state.pointee.pending.count)
    }

    /// Loop thread: takes every pending job in one swap.
    func takeBatch() -> JobBuffer {
        lock()
        let batch = state.pointee.pending
        state.pointee.pending = state.pointee.spare
        if !state.pointee.roomWaiters.isEmpty { admitWaiters() }
        unlock()
        state.pointee.spare = JobBuffer()
        return batch
    }

    /// Loop thread: hands back the emptied batch buffer, records the drain and
    /// decides what the loop does next. `state.spare` is only touched here and
    /// in `takeBatch`, both on the loop thread.
    func finishDrain(_ batch: JobBuffer, ran: Int) -> DrainOutcome {
        precondition(batch.count == 0)
        lock()
        defer { unlock() }
        state.pointee.executed &+= UInt64(ran)
        state.pointee.drains &+= 1
        state.pointee.largestBatch = Swift.max(state.pointee.largestBatch, ran)
        if state.pointee.pending.count > 0 {
            let next = state.pointee.pending
            state.pointee.pending = batch
            if !state.pointee.roomWaiters.isEmpty { admitWaiters() }
            return .more(next)
        }
        state.pointee.spare = batch
        // Only urgent jobs came in: the next drain has an empty batch and runs them.
        if state.pointee.urgent.count > 0 { return .more(JobBuffer()) }
        if case .closed = state.pointee.phase { return .closedAndEmpty }
        state.pointee.phase = .asleep
        return .idle
    }

    /// Refuses every later post, and every producer waiting for room, with
    /// `.shutDown`. Returns true when the loop sleeps waiting for a wake-up,
    /// which the caller must then write.
    func close() -> Bool {
        lock()
        let wasAsleep: Bool
        switch state.pointee.phase {
        case .asleep: wasAsleep = true
        case .awake: wasAsleep = false
        case .closed:
            unlock()
            return false
        }
        state.pointee.phase = .closed(.shutDown)
        let refused = refuseWaiters()
        if wasAsleep { state.pointee.wakeUpsWritten &+= 1 }
        unlock()
        _ = refused  // released outside the lock
        return wasAsleep
    }

    /// Lock held: every blocked producer is refused; their jobs are returned
    /// so that they are released after the lock.
    private func refuseWaiters() -> [(job: Job, site: PostSite, waiter: Completion<Void>)] {
        let refused = state.pointee.roomWaiters
        state.pointee.roomWaiters = []
        for entry in refused { entry.waiter.abandon(.shutDown) }
        return refused
    }

    var isClosed: Bool {
        lock()
        defer { unlock() }
        if case .closed = state.pointee.phase { return true }
        return false
    }

    /// Closes the mailbox and takes what is still queued (urgent jobs
    /// first), for a loop that will never drain it (stopped before it ran).
    func closeAndTakeAll() -> [JobBuffer] {
        lock()
        if case .closed = state.pointee.phase {} else { state.pointee.phase = .closed(.shutDown) }
        let refused = refuseWaiters()
        let batches = [state.pointee.urgent, state.pointee.pending]
        state.pointee.urgent = JobBuffer()
        state.pointee.pending = JobBuffer()
        attentionWord.bits.bitwiseAnd(~Attention.urgent, ordering: .relaxed)
        unlock()
        _ = refused
        return batches
    }

    func counters() -> EventLoopStats {
        lock()
        defer { unlock() }
        return EventLoopStats(
            posted: state.pointee.posted, executed: state.pointee.executed,
            wakeUpsWritten: state.pointee.wakeUpsWritten, drains: state.pointee.drains,
            largestBatch: state.pointee.largestBatch,
            pending: state.pointee.pending.count + state.pointee.urgent.count,
            capacity: state.pointee.capacity == Int.max ? nil : state.pointee.capacity,
            highWaterMark: state.pointee.highWaterMark, postsThatWaited: state.pointee.postsThatWaited)
    }
}
