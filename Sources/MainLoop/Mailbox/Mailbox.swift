// Mailbox.swift: the loop's side of a post, up to the drain: what travels
// (`Job`), where it waits (`JobBuffer`), the queue and its wake-up rule
// (`Mailbox`), and `enqueue`, which acts on what the mailbox answers (wake
// the loop; for a bounded mailbox that is full, wait for room, refuse, or
// admit). The drain that takes the jobs out is LoopCore.swift.
import CLibevent
import Glibc
import Synchronization

// MARK: - RoomWait

// Every post goes through `enqueue`, which acts on what the
// mailbox answers: wake the loop, or (a bounded mailbox that is full) wait
// for room, refuse, or admit anyway, as the post's policy says.
/// How a post behaves when a bounded mailbox is full.
@usableFromInline
enum RoomPolicy {
    /// Block until the loop makes room, or until the deadline (monotonic ns; nil: none).
    case wait(until: UInt64?)
    /// Throw `.full` at once.
    case refuse
    /// Never wait and never refuse for lack of room (Swift concurrency
    /// jobs and `perform`, which must not block a thread).
    case admit

    @inline(__always)
    var admits: Bool {
        if case .admit = self { return true }
        return false
    }
}

extension EventLoop {
    /// Any thread: hands `job` to the mailbox, waking the loop when it sleeps.
    /// The job is moved from the post into an unbounded mailbox, never
    /// copied (a copy is a retain here and a release on the loop, per
    /// post); a bounded one copies it when it queues it (see below).
    /// - Throws: the close reason (`.shutDown`) once the mailbox is closed;
    ///   with a bound, `.full`, `.timedOut` or `.deadlock` per `policy`.
    @usableFromInline
    func enqueue(_ job: consuming Job, site: PostSite = .none, policy: RoomPolicy = .wait(until: nil))
        throws(EventLoopError)
    {
        // Unbounded, a post is never refused for room, so the mailbox may
        // take the job. Bounded, it may be, and the job must stay here: it
        // is lent, and copied only when it is queued.
        if !mailbox.isBounded || policy.admits {
            if case .queuedWakeLoop = try mailbox.admit(consume job, site: site) { wake() }
            return
        }
        switch try mailbox.offer(job, site: site) {
        case .queued: return
        case .queuedWakeLoop: wake()
        case .full: try enqueueWhenFull(consume job, site, policy)
        }
    }

    /// Any thread: hands `job` to the urgent lane (see `postUrgent`).
    @usableFromInline
    func enqueueUrgent(_ job: consuming Job, site: PostSite) throws(EventLoopError) {
        if case .queuedWakeLoop = try mailbox.offerUrgent(consume job, site: site) { wake() }
    }

    /// The full-mailbox path. Posts from the loop's own thread are always
    /// admitted: the loop cannot wait for itself.
    private func enqueueWhenFull(_ job: consuming Job, _ site: PostSite, _ policy: RoomPolicy) throws(EventLoopError) {
        if inLoop {
            if case .queuedWakeLoop = try mailbox.admit(consume job, site: site) { wake() }
            return
        }
        let deadline: UInt64?
        switch policy {
        case .admit: preconditionFailure("MainLoop: an admitted post found the mailbox full")
        case .refuse: throw .full
        case .wait(let until): deadline = until
        }
        // A loop thread waiting for room in another loop depends on that
        // loop, like a blocking post: the edge is recorded (unless the
        // blocking post this is part of did), a cycle refused.
        let caller = EventLoop.current.flatMap { WaitForGraph.target(of: $0) == nil ? $0 : nil }
        if let caller { try WaitForGraph.block(caller, on: self) }
        defer { if let caller { WaitForGraph.unblock(caller) } }
        let room = Completion()
        switch try mailbox.offer(consume job, site: site, orWaitWith: room) {
        case .queued: return
        case .queuedWakeLoop: wake()
        case .full: try room.waitForRoom(until: deadline) { self.mailbox.withdraw(room) }
        }
    }
}

// MARK: - Mailbox

// The lock, the pending batch, and the rule that decides
// when the loop must be woken. A plain queue: it does not know which thread
// calls it, writes no file descriptor and never blocks anybody. It tells its
// caller "wake the loop" or "full", and the caller (`enqueue` above; the
// drain in LoopCore.swift) acts on it.
//
// Two queues. An unbounded mailbox's posts go to its `PostLane`
// (PostLane.swift), which takes no lock: a producer never waits for the
// loop, and the loop takes what was published up to the tail. A bounded
// mailbox's producers append under `state.mutex`, and the loop takes the
// whole pending batch with one swap, so a drain costs one lock round trip
// however many jobs it runs. Urgent jobs, and a bounded mailbox's room
// waiters, take the mutex in both kinds; so does every change of `phase`
// to `closed`, which a lane then mirrors in its tail word.
//
// Wake-up rule (the invariant everything else leans on), told here for the
// mutex; a lane keeps the same rule in its `asleep` word (PostLane.swift),
// and its mailbox's `phase` only says whether it is closed:
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
// wake-up and a retry). The mailbox only decides who was admitted (or, on
// close, refused) and hands them back: the caller wakes them after the lock.
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
// (the latency figures), about one post in 300 is stamped with the time it was
// accepted.
//
// Layout: the mutex and everything it guards live in one manually allocated
// struct. Pointer access has no dynamic exclusivity checks (class stored
// properties do, and they showed up in profiles of the post path), and the
// mutex never moves. It starts a 128-byte line pair of its own
// (`allocateLines`), and the loop's spare buffers live apart from it.
final class Mailbox: @unchecked Sendable {
    // `@unchecked Sendable`: every field of `State` is guarded by
    // `State.mutex`; `LoopSide` is loop-thread only.

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

    /// A producer blocked for room, with the job it brings.
    typealias RoomWaiter = (job: Job, site: PostSite, waiter: Completion)

    enum DrainOutcome {
        /// More work arrived during the drain; here it is (for a bounded
        /// mailbox, taken in the same critical section: one lock round trip
        /// per drain under load; possibly empty, when only urgent jobs came
        /// or a lane's next job is still being written). Run it after I/O
        /// and timers had a turn.
        case more(JobBuffer, admitted: [Completion])
        /// Empty; the loop has declared sleep (the phase is `.asleep`, or
        /// the lane's `asleep` word is set) and may sleep.
        case idle
        /// Empty and closed: the final drain is done.
        case closedAndEmpty
    }

    private struct State {
        var mutex = pthread_mutex_t()
        /// The queue starts on the line after the mutex's (40 bytes on x86_64, then
        /// these 24): with the two on one line, 20 alternating processes
        /// posted at 46.0-52.6 M/s; apart, 51.4-53.6 (Performance.md).
        private var padding: (UInt64, UInt64, UInt64) = (0, 0, 0)
        // Guarded by `mutex`.
        var pending = JobBuffer()
        /// `postUrgent` jobs, run before the rest of the current batch.
        var urgent = JobBuffer()
        var phase = Phase.asleep
        /// Record each job's post site (set once, never cleared).
        var labelling = false
        /// Stamp one post in `samplingInterval` with the time it was accepted.
        var sampling = false
        /// Producers blocked for room, oldest first, with the job each brings.
        var roomWaiters: [RoomWaiter] = []
        var posted: UInt64 = 0
        var wakeUpsWritten: UInt64 = 0
        var highWaterMark = 0
        var postsThatWaited: UInt64 = 0
        // Written by the loop thread under `mutex` at the end of each drain,
        // so that `stats` can read them from any thread.
        var executed: UInt64 = 0
        var drains: UInt64 = 0
        var largestBatch = 0
    }

    /// Loop thread only: the empty buffers swapped in for the next batch.
    /// Apart from `State`, so that the loop's writes to them after the
    /// lock never touch a line producers are locking.
    private struct LoopSide {
        var spare = JobBuffer()
        var spareUrgent = JobBuffer()
    }

    private let state: UnsafeMutablePointer<State>
    /// An unbounded mailbox's queue (PostLane.swift): posts go there without
    /// the lock, and the lane's `asleep` word is the loop's phase (`phase`
    /// then only says whether the mailbox is closed). Nil when bounded: a
    /// bound, its room waiters and their order need the lock.
    private let lane: PostLane?
    /// Most jobs `pending` may hold (Int.max: unbounded). Fixed at creation,
    /// so read without the lock.
    let capacity: Int
    /// A capacity was given: a post may be refused for room.
    var isBounded: Bool { capacity != Int.max }
    private let loopSide: UnsafeMutablePointer<LoopSide>
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
        /// The loop was made by the parent of this process (set by the
        /// child handler of fork(), see Support/ForkHandling.swift): the
        /// thread that forked must not go back to running its jobs.
        static let leftBehind: UInt8 = 4
    }

    /// An open mailbox holding at most `capacity` pending jobs (nil:
    /// unbounded); `sampling` stamps about one post in 300 for the latency figures.
    init(capacity: Int?, sampling: Bool = false) {
        state = allocateLines(State.self)
        state.initialize(to: State())
        loopSide = allocateLines(LoopSide.self)
        loopSide.initialize(to: LoopSide())
        self.capacity = capacity ?? Int.max
        lane = capacity == nil ? PostLane(sampling: sampling) : nil
        state.pointee.sampling = sampling
        if lane != nil { state.pointee.phase = .awake }
        let rc = mainloop_mutex_init_adaptive(&state.pointee.mutex)
        precondition(rc == 0, "MainLoop: pthread_mutex_init failed with errno \(rc)")
    }

    /// A mailbox that was never open: every post throws `reason` (a loop
    /// whose machinery could not be made).
    convenience init(refusing reason: EventLoopError) {
        self.init(capacity: nil)
        state.pointee.phase = .closed(reason)
        lane?.close()
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
        lane?.destroy()
        state.pointee.pending.deallocate()
        state.pointee.urgent.deallocate()
        loopSide.pointee.spare.deallocate()
        loopSide.pointee.spareUrgent.deallocate()
        loopSide.deinitialize(count: 1)
        loopSide.deallocate()
        pthread_mutex_destroy(&state.pointee.mutex)
        state.deinitialize(count: 1)
        state.deallocate()
    }

    @inline(__always) private func lock() { pthread_mutex_lock(&state.pointee.mutex) }
    @inline(__always) private func unlock() { pthread_mutex_unlock(&state.pointee.mutex) }

    /// Lock held: throws the close reason once closed, after the lock.
    ///
    /// `job` is the one being offered: `withExtendedLifetime` keeps it
    /// alive until the lock is dropped (a use the optimizer keeps after
    /// inlining). A refused job is released by whoever owns it, and
    /// its release can run any deinitializer, one that posts to this loop
    /// included; under the lock that would be a thread locking a mutex it
    /// holds. (A `consuming` parameter not used again on a path may be
    /// released as early as the optimizer likes, so without this use the
    /// release could move above the `unlock`.)
    @inline(__always)
    private func checkOpen(offering job: borrowing Job) throws(EventLoopError) {
        if case .closed(let reason) = state.pointee.phase {
            withExtendedLifetime(job) { unlock() }
            throw reason
        }
    }

    /// Lock held: appends `job` to `buffer` (its site when labelling, a
    /// stamp for one post in `samplingInterval` when sampling).
    @inline(__always)
    private func store(_ job: consuming Job, site: PostSite, in buffer: UnsafeMutablePointer<JobBuffer>) {
        if state.pointee.labelling {
            buffer.pointee.append(job, site: site)
        } else {
            buffer.pointee.append(job)
        }
        state.pointee.posted &+= 1
        if state.pointee.sampling && state.pointee.posted & (Mailbox.samplingInterval - 1) == 0 {
            buffer.pointee.sampleLast(acceptedAt: mainloop_monotonic_ns())
        }
    }

    /// Lock held: the loop is asleep: the caller must wake it.
    @inline(__always)
    private func wakeIfAsleep() -> Offer {
        if let lane { return lane.claimWake() ? .queuedWakeLoop : .queued }
        guard case .asleep = state.pointee.phase else { return .queued }
        state.pointee.phase = .awake
        state.pointee.wakeUpsWritten &+= 1
        return .queuedWakeLoop
    }

    /// Lock held: appends `job` and says whether the loop must be woken.
    @inline(__always)
    private func append(_ job: consuming Job, site: PostSite) -> Offer {
        store(job, site: site, in: &state.pointee.pending)
        if isBounded {
            state.pointee.highWaterMark = Swift.max(state.pointee.highWaterMark, state.pointee.pending.count)
        }
        return wakeIfAsleep()
    }

    /// Any thread: queues `job` in the urgent lane, whatever the bound.
    /// - Throws: the close reason once the mailbox is closed.
    func offerUrgent(_ job: consuming Job, site: PostSite) throws(EventLoopError) -> Offer {
        lock()
        try checkOpen(offering: job)
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
        state.pointee.urgent = loopSide.pointee.spareUrgent
        attentionWord.bits.bitwiseAnd(~Attention.urgent, ordering: .relaxed)
        unlock()
        loopSide.pointee.spareUrgent = JobBuffer()
        return batch
    }

    /// Loop thread: hands back the emptied urgent buffer, counting its jobs.
    func finishUrgent(_ batch: JobBuffer, ran: Int) {
        lock()
        state.pointee.executed &+= UInt64(ran)
        loopSide.pointee.spareUrgent = batch
        unlock()
    }

    /// Any thread (under the lock): record each job's post site from now on.
    func startLabelling() {
        lock()
        state.pointee.labelling = true
        unlock()
        lane?.startLabelling()
    }

    /// Any thread: queues `job` if there is room and nobody waits for room.
    /// - Throws: the close reason once the mailbox is closed.
    @inline(__always)
    func offer(_ job: borrowing Job, site: PostSite) throws(EventLoopError) -> Offer {
        lock()
        try checkOpen(offering: job)
        if state.pointee.pending.count >= capacity || !state.pointee.roomWaiters.isEmpty {
            unlock()
            return .full
        }
        let offer = append(copy job, site: site)
        unlock()
        return offer
    }

    /// Any thread: queues `job` whatever the bound (the loop's own posts,
    /// Swift concurrency jobs). Never returns `.full`.
    @inline(__always)
    func admit(_ job: consuming Job, site: PostSite) throws(EventLoopError) -> Offer {
        if let lane {
            switch lane.push(job, site: site) {
            case .queued: return .queued
            case .queuedWakeLoop: return .queuedWakeLoop
            case .closed: throw closeReason()
            }
        }
        lock()
        try checkOpen(offering: job)
        let offer = append(job, site: site)
        unlock()
        return offer
    }

    /// Any thread: queues `job` if there is room now; if not, queues it
    /// behind the other room waiters with `waiter`, which the loop admits
    /// (or the close abandons) later, and returns `.full`: the caller must
    /// wait on `waiter`.
    func offer(_ job: consuming Job, site: PostSite, orWaitWith waiter: Completion) throws(EventLoopError)
        -> Offer
    {
        lock()
        try checkOpen(offering: job)
        if state.pointee.pending.count < capacity && state.pointee.roomWaiters.isEmpty {
            let offer = append(job, site: site)
            unlock()
            return offer
        }
        state.pointee.roomWaiters.append((job, site, waiter))
        state.pointee.postsThatWaited &+= 1
        unlock()
        return .full
    }

    /// Why posts are refused, once the mailbox is closed (a lane refused one:
    /// `close` and `closeInForkedChild` set the phase before they close the lane).
    private func closeReason() -> EventLoopError {
        lock()
        defer { unlock() }
        if case .closed(let reason) = state.pointee.phase { return reason }
        preconditionFailure("MainLoop: the post lane is closed and the mailbox is not")
    }

    /// Waiter, after its deadline: takes its job back unless the loop
    /// admitted it (or the close refused it) first. Returns true when withdrawn.
    func withdraw(_ waiter: Completion) -> Bool {
        lock()
        guard waiter.withdraw() else {
            unlock()
            return false
        }
        // The job is released after the lock (see `checkOpen`).
        let withdrawn = state.pointee.roomWaiters.firstIndex { $0.waiter === waiter }
            .map { state.pointee.roomWaiters.remove(at: $0) }
        withExtendedLifetime(withdrawn) { unlock() }
        return true
    }

    /// Lock held: moves waiting producers' jobs into `pending`, oldest first,
    /// while there is room. Returns the producers admitted, for the caller
    /// to wake after the lock (`Completion.wakeProducer`).
    private func admitWaiters() -> [Completion] {
        var served = 0
        var admitted: [Completion] = []
        for entry in state.pointee.roomWaiters {
            guard state.pointee.pending.count < capacity else { break }
            served += 1
            // Cannot fail: a withdrawal removes its entry under this lock.
            precondition(entry.waiter.grantRoom(), "MainLoop: a room waiter withdrew without leaving the queue")
            store(entry.job, site: entry.site, in: &state.pointee.pending)
            admitted.append(entry.waiter)
        }
        guard served > 0 else { return admitted }
        state.pointee.roomWaiters.removeFirst(served)
        state.pointee.highWaterMark = Swift.max(state.pointee.highWaterMark, state.pointee.pending.count)
        return admitted
    }

    /// Loop thread: takes every pending job in one swap. `admitted`: the
    /// producers that waited for room and got it; the caller wakes them.
    func takeBatch() -> (batch: JobBuffer, admitted: [Completion]) {
        if let lane {
            var batch = loopSide.pointee.spare
            loopSide.pointee.spare = JobBuffer()
            _ = lane.take(into: &batch, limit: Mailbox.laneBatchLimit)
            return (batch, [])
        }
        lock()
        let batch = state.pointee.pending
        state.pointee.pending = loopSide.pointee.spare
        let admitted = state.pointee.roomWaiters.isEmpty ? [] : admitWaiters()
        unlock()
        loopSide.pointee.spare = JobBuffer()
        return (batch, admitted)
    }

    /// Loop thread: hands back the emptied batch buffer, records the drain and
    /// decides what the loop does next. `loopSide.spare` is only touched here and
    /// in `takeBatch`, both on the loop thread.
    func finishDrain(_ batch: consuming JobBuffer, ran: Int) -> DrainOutcome {
        precondition(batch.count == 0)
        if let lane { return finishDrain(consume batch, ran: ran, lane: lane) }
        lock()
        defer { unlock() }
        state.pointee.executed &+= UInt64(ran)
        state.pointee.drains &+= 1
        state.pointee.largestBatch = Swift.max(state.pointee.largestBatch, ran)
        if state.pointee.pending.count > 0 {
            let next = state.pointee.pending
            state.pointee.pending = batch
            return .more(next, admitted: state.pointee.roomWaiters.isEmpty ? [] : admitWaiters())
        }
        keepSpare(batch)
        // Only urgent jobs came in: the next drain has an empty batch and runs them.
        if state.pointee.urgent.count > 0 { return .more(JobBuffer(), admitted: []) }
        if case .closed = state.pointee.phase { return .closedAndEmpty }
        state.pointee.phase = .asleep
        return .idle
    }

    /// One post in this many is stamped for the latency figures (a power of
    /// two; a lane's blocks give one of each four places to a sentinel, so
    /// there it is one in 341). Each sample costs three clock reads (the
    /// poster's stamp, the job's start and end), which at one in 64 made a
    /// plain post 6-7% slower than with the figures off, measured inside
    /// one process (`mainloop-bench M latency-pairs`); at this interval the
    /// difference is within the pairs' noise.
    static var samplingInterval: UInt64 { 256 }

    /// Most jobs one drain takes from a lane: a loop that fell behind by
    /// millions runs them a block's worth at a time (letting I/O and timers
    /// in between) rather than copying them all out first.
    static var laneBatchLimit: Int { 4096 }

    /// `finishDrain` for a mailbox with a lane: the next batch is taken
    /// without the lock; the loop declares sleep on the lane, then looks
    /// again at both lanes and the phase (see the wake-up rule in PostLane.swift).
    private func finishDrain(_ batch: consuming JobBuffer, ran: Int, lane: PostLane) -> DrainOutcome {
        lock()
        state.pointee.executed &+= UInt64(ran)
        state.pointee.drains &+= 1
        state.pointee.largestBatch = Swift.max(state.pointee.largestBatch, ran)
        unlock()
        // The emptied batch goes round again, or back to the spare: never
        // a fresh buffer, whose later return would drop the spare's storage.
        // Moved, not copied: a second copy would share its samples array,
        // and the next sample appended would copy the array (an allocation
        // per drain, which `mainloop-bench 1 allocations` caught).
        var next = consume batch
        if lane.take(into: &next, limit: Mailbox.laneBatchLimit) > 0 { return .more(next, admitted: []) }
        // A job reserved but not written yet: its producer is between two
        // stores; look again on the next turn.
        if lane.hasWork {
            sched_yield()
            return .more(next, admitted: [])
        }
        lane.declareSleep()
        lock()
        let urgent = state.pointee.urgent.count > 0
        let closed: Bool
        if case .closed = state.pointee.phase { closed = true } else { closed = false }
        unlock()
        // Something came: take the wake-up back, unless a producer (or the
        // close) took it first and is writing it.
        if (urgent || closed || lane.hasWork) && lane.cancelSleep() {
            if !closed || urgent || lane.hasWork { return .more(next, admitted: []) }
            keepSpare(next)
            return .closedAndEmpty
        }
        keepSpare(next)
        return .idle
    }

    /// Loop thread: an emptied batch buffer becomes the spare, unless the
    /// spare already has storage at least as large (then it is freed).
    private func keepSpare(_ buffer: JobBuffer) {
        var freed = buffer
        if freed.capacity > loopSide.pointee.spare.capacity { swap(&freed, &loopSide.pointee.spare) }
        freed.deallocate()
    }

    /// Refuses every later post, and every producer waiting for room, with
    /// `.shutDown`. Returns whether the loop sleeps waiting for a wake-up,
    /// which the caller must then write, and the producers refused, which
    /// the caller wakes (`Completion.wakeProducer`) after the lock; their
    /// jobs are released with the list, outside the lock too.
    func close() -> (wakeLoop: Bool, refused: [RoomWaiter]) {
        lock()
        var wasAsleep: Bool
        switch state.pointee.phase {
        case .asleep: wasAsleep = true
        case .awake: wasAsleep = false
        case .closed:
            unlock()
            return (false, [])
        }
        state.pointee.phase = .closed(.shutDown)
        if let lane {
            lane.close()
            wasAsleep = lane.claimWake()
        }
        let refused = refuseWaiters()
        // A lane counts the wake-up it hands out itself.
        if wasAsleep && lane == nil { state.pointee.wakeUpsWritten &+= 1 }
        unlock()
        return (wasAsleep, refused)
    }

    /// Lock held: every blocked producer is refused (none has withdrawn: a
    /// withdrawal removes its entry under this lock). The entries are
    /// returned, so that their jobs are released and their producers woken
    /// after the lock.
    private func refuseWaiters() -> [RoomWaiter] {
        let entries = state.pointee.roomWaiters
        state.pointee.roomWaiters = []
        for entry in entries {
            precondition(
                entry.waiter.refuseRoom(.shutDown), "MainLoop: a room waiter withdrew without leaving the queue")
        }
        return entries
    }

    /// Child of fork() only, for a loop left behind in the parent: the
    /// mutex is made anew and every later post throws `.forked`. What was
    /// queued, and the producers that waited for room, belonged to the
    /// parent: they are kept as they are (never run, never woken, never
    /// released: releasing them could run the parent's deinitializers).
    func closeInForkedChild() {
        let rc = mainloop_mutex_init_adaptive(&state.pointee.mutex)
        precondition(rc == 0, "MainLoop: pthread_mutex_init failed with errno \(rc)")
        state.pointee.phase = .closed(.forked)
        lane?.close()
        attentionWord.bits.bitwiseOr(Attention.leftBehind, ordering: .relaxed)
    }

    var isClosed: Bool {
        lock()
        defer { unlock() }
        if case .closed = state.pointee.phase { return true }
        return false
    }

    /// Closes the mailbox and takes what is still queued (urgent jobs
    /// first), for a loop that will never drain it (stopped before it ran),
    /// with the producers refused room, which the caller wakes.
    func closeAndTakeAll() -> (batches: [JobBuffer], refused: [RoomWaiter]) {
        lock()
        if case .closed = state.pointee.phase {} else { state.pointee.phase = .closed(.shutDown) }
        lane?.close()
        let refused = refuseWaiters()
        var batches = [state.pointee.urgent, state.pointee.pending]
        state.pointee.urgent = JobBuffer()
        state.pointee.pending = JobBuffer()
        attentionWord.bits.bitwiseAnd(~Attention.urgent, ordering: .relaxed)
        unlock()
        if let lane {
            // Closed: the lane only has jobs whose producers are writing
            // them, or have; wait for those.
            var queued = JobBuffer()
            while lane.hasWork {
                if lane.take(into: &queued, limit: Int.max) == 0 { sched_yield() }
            }
            batches.append(queued)
        }
        return (batches, refused)
    }

    func counters() -> EventLoopStats {
        lock()
        defer { unlock() }
        return EventLoopStats(
            posted: state.pointee.posted &+ (lane?.pushed ?? 0), executed: state.pointee.executed,
            wakeUpsWritten: state.pointee.wakeUpsWritten &+ (lane?.wakeUps ?? 0), drains: state.pointee.drains,
            largestBatch: state.pointee.largestBatch,
            pending: state.pointee.pending.count + state.pointee.urgent.count + (lane?.pending ?? 0),
            capacity: isBounded ? capacity : nil,
            highWaterMark: state.pointee.highWaterMark, postsThatWaited: state.pointee.postsThatWaited)
    }
}

// MARK: - AttentionWord

// The mailbox's attention bits, alone on a cache line.
//
// The loop reads the word before every job; producers write the mailbox's
// tail (and, bounded, its mutex) on every post. Sharing a line would bounce
// it between the cores on every post: post throughput measured 23 against 40 M/s,
// depending on where malloc put the two. A Swift object is only 16-byte
// aligned, so the word is padded by a full line on each side: whatever
// 64-byte line holds it holds only padding besides.
final class AttentionWord: Sendable {
    private let before: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The `Mailbox.Attention` bits.
    let bits = Atomic<UInt8>(0)
    private let after: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}

/// Memory for one `T` on lines of its own: aligned to 128 bytes (a line
/// and the one the hardware prefetches with it) and rounded up to a whole
/// number of them, so that nothing else shares its first or last line and
/// where its fields fall within a line is the same in every process. The
/// mailbox's state (the mutex, then the queue) was 16-byte aligned, so in
/// some processes the mutex straddled two lines and in others not.
func allocateLines<T: ~Copyable>(_ type: T.Type) -> UnsafeMutablePointer<T> {
    let size = (MemoryLayout<T>.stride + 127) & ~127
    return UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 128).bindMemory(to: T.self, capacity: 1)
}

// MARK: - JobBuffer

// The mailbox's storage for pending jobs.
//
// Beside each job, a word for its post site (the PostSite section below),
// written only once somebody asked for labels: `sitesFrom` is the first
// index whose word was written. The site array is allocated on the first
// labelled append and grows with the jobs from then on, so a loop nobody
// watches pays neither memory nor stores for it. Sampled jobs (one
// post in 256 to 341, for the latency figures) are listed in `samples`, in index
// order, with the time each was accepted.
/// A growable array of jobs with no copy-on-write and no uniqueness checks:
/// the mailbox owns exactly two of them and swaps them, so steady state
/// allocates nothing. Not thread-safe; its owner says what guards it.
struct JobBuffer {
    private(set) var base: UnsafeMutablePointer<Job>?
    private var sites: UnsafeMutablePointer<PostSite>?
    private(set) var count = 0
    private(set) var capacity = 0
    /// The first index whose site was recorded (Int.max: none).
    private var sitesFrom = Int.max
    /// Sampled jobs: their index and when they were accepted (monotonic ns).
    private(set) var samples: [(index: Int, acceptedAt: UInt64)] = []

    @inline(__always)
    mutating func append(_ job: consuming Job) {
        if count == capacity { grow() }
        (base.unsafelyUnwrapped + count).initialize(to: job)
        count += 1
    }

    /// Appends `job` with its post site recorded.
    @inline(__always)
    mutating func append(_ job: consuming Job, site: PostSite) {
        if count == capacity { grow() }
        if sites == nil { sites = .allocate(capacity: capacity) }
        if sitesFrom == Int.max { sitesFrom = count }
        (base.unsafelyUnwrapped + count).initialize(to: job)
        (sites.unsafelyUnwrapped + count).initialize(to: site)
        count += 1
    }

    /// Some job's post site was recorded: every later append must record one.
    var recordsSites: Bool { sitesFrom != Int.max }

    /// Marks the last job appended as sampled, accepted at `time`.
    mutating func sampleLast(acceptedAt time: UInt64) {
        samples.append((count - 1, time))
    }

    private mutating func grow() {
        let newCapacity = Swift.max(capacity * 2, 256)
        let newBase = UnsafeMutablePointer<Job>.allocate(capacity: newCapacity)
        if let base {
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        if let sites {
            let newSites = UnsafeMutablePointer<PostSite>.allocate(capacity: newCapacity)
            if sitesFrom < count {
                (newSites + sitesFrom).moveInitialize(from: sites + sitesFrom, count: count - sitesFrom)
            }
            sites.deallocate()
            self.sites = newSites
        }
        base = newBase
        capacity = newCapacity
    }

    /// Job `index`, to run where it lies (`Job.run`; each job is run once,
    /// in order, by the loop): it is then no longer the buffer's.
    @inline(__always)
    func slot(_ index: Int) -> UnsafeMutablePointer<Job> {
        base.unsafelyUnwrapped + index
    }

    /// The post site of job `index`, if it was recorded.
    func site(_ index: Int) -> PostSite {
        index >= sitesFrom && index < count ? sites.unsafelyUnwrapped[index] : .none
    }

    /// After every job was taken: empty again (capacity kept).
    mutating func reset() {
        count = 0
        sitesFrom = Int.max
        if !samples.isEmpty { samples.removeAll(keepingCapacity: true) }
    }

    /// Removes every job, handing each to `body` (for abandoning them).
    mutating func removeAll(_ body: (Job) -> Void) {
        guard let base else { return }
        for index in 0..<count { body((base + index).move()) }
        reset()
    }

    /// Frees the storage. The buffer must be empty.
    mutating func deallocate() {
        precondition(count == 0, "JobBuffer freed with \(count) jobs in it")
        base?.deallocate()
        sites?.deallocate()
        base = nil
        sites = nil
        capacity = 0
    }
}

// MARK: - Job

// One record in the mailbox, and what the loop does with it.
/// A job that is an object of its own: a wait somebody keeps a handle on (a
/// blocked caller, a suspended task: `Completion`), or a record a client of
/// the post API brings (an invocation). The loop either runs it or, when it
/// never will (the loop was stopped before it ran), abandons it, so that
/// whoever waits is always told.
@usableFromInline
protocol MailboxRecord: AnyObject, Sendable {
    /// Loop thread: run the work, unless the poster withdrew it, and release the poster.
    /// True when the record kept the job's reference to itself (an invocation
    /// record that went back to its loop's pool): the job is then forgotten,
    /// not released, where keeping it took a retain and the job's release,
    /// two atomic updates of a count the poster's core wrote last.
    func run() -> Bool
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

    /// Runs the job where it lies, and leaves `slot` uninitialized: the job
    /// is released, or forgotten when its record kept the reference.
    @inline(__always)
    static func run(_ slot: UnsafeMutablePointer<Job>) {
        // Moved out, so the call borrows what it runs (the slot's copy would
        // have retained a closure's context).
        let job = slot.move()
        // A kept reference is forgotten by moving the job back into the
        // slot, which the buffer never deinitializes (`reset`).
        if job.run() { slot.initialize(to: consume job) }
    }

    /// Runs the job; true when its record kept the job's reference (`run`
    /// of ``MailboxRecord``).
    @inline(__always)
    private func run() -> Bool {
        switch self {
        case .work(let body): body()
        case .record(let record): return record.run()
        case .bound(let body, let storage):
            // The storage outlives its jobs (it is released on this thread
            // after every job queued before its owner went: `retire`), so
            // the call needs no reference of its own.
            storage._withUnsafeGuaranteedRef { $0.run(body) }
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
        return false
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

// MARK: - PostSite

// Where a job was posted, as one word, so that a slow or
// stalled job can be named without costing the post anything: `post` and
// its kin take `#fileID` and `#line` as default arguments (compile-time
// constants), and this packs them into the pointer to the file name's
// static bytes (low 48 bits; user-space addresses fit) and the line (the
// next 15 bits, at most 32,767; the top bit is a lane slot's "written" mark,
// see LaneBlock). The mailbox stores the word only once somebody asked for labels
// (`onSlowJob`, `watchdog`); it is decoded only for a report.
/// A post's call site (`#fileID:#line`), packed into one word; 0: unknown.
@usableFromInline
struct PostSite: Sendable, Equatable {
    @usableFromInline let bits: UInt

    @inlinable @inline(__always)
    init(file: StaticString, line: UInt) {
        guard file.hasPointerRepresentation else {
            bits = 0
            return
        }
        bits = UInt(bitPattern: file.utf8Start) & 0xFFFF_FFFF_FFFF | (Swift.min(line, 0x7FFF) << 48)
    }

    @inlinable init(bits: UInt) { self.bits = bits }

    /// A job named by a C string that lives as long as the process (an
    /// invocation's interned `Type.selector`, a named executor's name),
    /// with no line.
    init(name: UnsafePointer<CChar>) {
        bits = UInt(bitPattern: name) & 0xFFFF_FFFF_FFFF
    }

    /// Unknown.
    @usableFromInline static let none = PostSite(bits: 0)

    /// `File.swift:42`, or nil when unknown. Line 0 (no post has it): a
    /// named executor's jobs, whose site is the name alone.
    var description: String? {
        let address = bits & 0xFFFF_FFFF_FFFF
        guard address != 0, let file = UnsafePointer<CChar>(bitPattern: address) else { return nil }
        let line = bits >> 48
        return line == 0 ? String(cString: file) : "\(String(cString: file)):\(line)"
    }
}
