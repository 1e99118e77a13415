// Mailbox.swift: the lock, the pending batch, the eventfd and its coalescing rule.
//
// Producers append under `state.mutex`. The loop takes the whole pending
// batch with one swap, so a drain costs one lock round trip however many
// jobs it runs.
//
// Wake-up rule (the invariant everything else leans on):
//   `needsWake` is true exactly when the loop has declared that it will not
//   look at the mailbox again until the eventfd is written. Only the producer
//   that finds it true (and so the mailbox empty) writes the eventfd, and it
//   clears the flag under the lock, so one wake-up is written per sleep of
//   the loop, however many producers race. The loop sets the flag again only
//   at the end of a drain that finds the mailbox empty; when a drain ends
//   with more work queued, the loop re-arms itself without any syscall. (So
//   between a wake-up and the next `finishDrain` nobody writes the eventfd,
//   and the loop may reset it anywhere in that window.) Under
//   saturation the loop never sleeps, and producers write nothing.
//
// Bound (optional): with a capacity, a post from another thread that finds
// the mailbox full (or other producers already waiting) queues in FIFO order
// as a RoomWaiter and sleeps on the mailbox mutex; the loop hands room to
// waiters whenever it swaps a batch out. Posts from the loop's own thread are
// always admitted: the loop cannot wait for itself.
//
// Layout: the mutex and everything it guards live in one manually allocated
// struct. Pointer access has no dynamic exclusivity checks (class stored
// properties do, and they showed up in profiles of the post path), and the
// mutex never moves.
import CLibevent

final class Mailbox: @unchecked Sendable {
    // `@unchecked Sendable`: every field of `State` but `spare` is guarded by
    // `State.mutex`; `spare` is loop-thread only.

    enum DrainOutcome {
        /// More work arrived during the drain; here it is, taken in the same
        /// critical section (one lock round trip per drain under load). Run it
        /// after I/O and timers had a turn.
        case more(JobBuffer)
        /// Empty; `needsWake` is set and the loop may sleep.
        case idle
        /// Empty and closed: the final drain is done.
        case closedAndEmpty
    }

    private struct State {
        var mutex = pthread_mutex_t()
        // Guarded by `mutex`.
        var pending = JobBuffer()
        var isClosed = false
        /// What a post to the closed mailbox throws.
        var closeReason = EventLoopError.shutDown
        var needsWake = true
        /// Most jobs `pending` may hold (Int.max: unbounded).
        var capacity = Int.max
        /// Producers blocked for room, oldest first.
        var roomWaiters: [RoomWaiter] = []
        /// The owning loop (unretained: it owns this mailbox), to recognise
        /// its thread and to record wait-for edges.
        var owner: Unmanaged<EventLoop>?
        var posted: UInt64 = 0
        var wakeUpsWritten: UInt64 = 0
        var highWaterMark = 0
        var postsThatWaited: UInt64 = 0
        // Written by the loop thread under `mutex` at the end of each drain,
        // so that `stats` can read them from any thread.
        var executed: UInt64 = 0
        var drains: UInt64 = 0
        var largestBatch = 0
        // Loop thread only: the empty buffer swapped in for the next batch.
        var spare = JobBuffer()
    }

    /// The eventfd producers write to wake the loop. Owned (closed) by the
    /// loop core; -1 for a mailbox that refuses everything.
    let eventFD: Int32
    private let state: UnsafeMutablePointer<State>

    init(eventFD: Int32) {
        self.eventFD = eventFD
        state = .allocate(capacity: 1)
        state.initialize(to: State())
        let rc = mainloop_mutex_init_adaptive(&state.pointee.mutex)
        precondition(rc == 0, "pthread_mutex_init failed with errno \(rc)")
    }

    /// A mailbox that was never open: every post throws `reason` (a loop
    /// whose machinery could not be made).
    convenience init(refusing reason: EventLoopError) {
        self.init(eventFD: -1)
        state.pointee.isClosed = true
        state.pointee.closeReason = reason
        state.pointee.needsWake = false
    }

    deinit {
        // Jobs still queued belong to a loop that is being deallocated
        // without having run them: release their closures and tell anybody
        // who waits. (Not `Job.abandon`, which names the loop, and the loop
        // is what is going away.)
        state.pointee.pending.removeAll { job in
            if case .waiting(let record) = job { record.abandon(.shutDown) }
        }
        state.pointee.pending.deallocate()
        state.pointee.spare.deallocate()
        pthread_mutex_destroy(&state.pointee.mutex)
        state.deinitialize(count: 1)
        state.deallocate()
    }

    @inline(__always) private func lock() { pthread_mutex_lock(&state.pointee.mutex) }
    @inline(__always) private func unlock() { pthread_mutex_unlock(&state.pointee.mutex) }

    /// How a post behaves when a bounded mailbox is full.
    enum RoomPolicy {
        /// Block until the loop makes room, or until the deadline (monotonic ns; nil: none).
        case wait(until: UInt64?)
        /// Throw `.full` at once.
        case refuse
        /// Never wait and never refuse for lack of room (Swift concurrency
        /// jobs and `perform`, which must not block a thread).
        case admit
    }

    /// Sets the bound and the owner; called once, before the loop is shared.
    func configure(owner: EventLoop, capacity: Int?) {
        lock()
        state.pointee.owner = Unmanaged.passUnretained(owner)
        state.pointee.capacity = capacity ?? Int.max
        unlock()
    }

    /// Accepts `job`, or throws: the close reason (`.shutDown`) once the
    /// mailbox is closed; with a bound, `.full` or `.timedOut` per `policy`.
    @inline(__always)
    func enqueue(_ job: Job, policy: RoomPolicy = .wait(until: nil)) throws(EventLoopError) {
        lock()
        guard !state.pointee.isClosed else {
            let reason = state.pointee.closeReason
            unlock()
            throw reason
        }
        if state.pointee.pending.count >= state.pointee.capacity || !state.pointee.roomWaiters.isEmpty {
            // Returns only when the job is to be appended here (a post from
            // the loop's own thread); otherwise it was handed off or refused,
            // and the lock is released.
            guard try admitWhenFull(job, policy) else { return }
        }
        state.pointee.pending.append(job)
        state.pointee.posted &+= 1
        let wake = state.pointee.needsWake
        if wake {
            state.pointee.needsWake = false
            state.pointee.wakeUpsWritten &+= 1
        }
        if state.pointee.capacity != Int.max {
            state.pointee.highWaterMark = Swift.max(state.pointee.highWaterMark, state.pointee.pending.count)
        }
        unlock()
        if wake { signalLoop() }
    }

    /// The full-mailbox path, entered with the lock held. Returns true when
    /// the caller must append the job itself (still holding the lock);
    /// false when the loop took it (lock released); throws (lock released)
    /// when it was not accepted.
    private func admitWhenFull(_ job: Job, _ policy: RoomPolicy) throws(EventLoopError) -> Bool {
        let owner = state.pointee.owner
        let current = pthread_getspecific(currentLoopKey)
        if let owner, current == owner.toOpaque() { return true }
        let deadline: UInt64?
        switch policy {
        case .admit: return true
        case .refuse:
            unlock()
            throw .full
        case .wait(let until): deadline = until
        }
        // A loop thread waiting for room in another loop depends on that
        // loop, like a blocking post: record the edge, refuse a cycle.
        var blockedLoop: EventLoop?
        if let current, let owner {
            let caller = Unmanaged<EventLoop>.fromOpaque(current).takeUnretainedValue()
            if WaitForGraph.target(of: caller) == nil {
                do {
                    try WaitForGraph.block(caller, on: owner.takeUnretainedValue())
                } catch {
                    unlock()
                    throw error
                }
                blockedLoop = caller
            }
        }
        let waiter = RoomWaiter(job: job)
        state.pointee.roomWaiters.append(waiter)
        state.pointee.postsThatWaited &+= 1
        while waiter.isWaiting {
            let rc = mainloop_cond_wait_until(waiter.condition, &state.pointee.mutex, deadline ?? 0)
            if rc == ETIMEDOUT && waiter.isWaiting {
                state.pointee.roomWaiters.removeAll { $0 === waiter }
                waiter.finish(.refused(.timedOut))
            }
        }
        let outcome = waiter.state
        unlock()
        if let blockedLoop { WaitForGraph.unblock(blockedLoop) }
        if case .refused(let error) = outcome { throw error }
        return false
    }

    /// Lock held: moves waiting producers' jobs into `pending`, oldest first,
    /// while there is room, and wakes them.
    private func admitWaiters() {
        var admitted = 0
        for waiter in state.pointee.roomWaiters {
            guard state.pointee.pending.count < state.pointee.capacity, let job = waiter.job else { break }
            state.pointee.pending.append(job)
            state.pointee.posted &+= 1
            waiter.finish(.admitted)
            admitted += 1
        }
        guard admitted > 0 else { return }
        state.pointee.roomWaiters.removeFirst(admitted)
        state.pointee.highWaterMark = Swift.max(state.pointee.highWaterMark, state.pointee.pending.count)
    }

    /// Lock held: every blocked producer is refused with `.shutDown`.
    private func refuseWaiters() {
        for waiter in state.pointee.roomWaiters { waiter.finish(.refused(.shutDown)) }
        state.pointee.roomWaiters.removeAll()
    }

    private func signalLoop() {
        let rc = mainloop_eventfd_signal(eventFD)
        // Only EBADF/EINVAL can get here, which would mean the loop core
        // closed its eventfd while a producer still held the mailbox.
        precondition(rc == 0, "MainLoop: writing the loop's eventfd \(eventFD) failed with errno \(rc)")
    }

    /// Loop thread: resets the eventfd's counter. Must come before
    /// `finishDrain`, which lets producers write it again.
    func consumeWakeSignal() {
        _ = mainloop_eventfd_drain(eventFD)
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
        if state.pointee.isClosed { return .closedAndEmpty }
        state.pointee.needsWake = true
        return .idle
    }

    /// Refuses every later post. Returns true when the loop sleeps waiting
    /// for a wake-up, in which case this call has written it.
    @discardableResult
    func close() -> Bool {
        lock()
        state.pointee.isClosed = true
        refuseWaiters()
        let wake = state.pointee.needsWake
        if wake {
            state.pointee.needsWake = false
            state.pointee.wakeUpsWritten &+= 1
        }
        unlock()
        if wake { signalLoop() }
        return wake
    }

    var closed: Bool {
        lock()
        defer { unlock() }
        return state.pointee.isClosed
    }

    /// Closes the mailbox and takes what is still queued, for a loop that
    /// will never drain it (stopped before it ran).
    func closeAndTakeAll() -> JobBuffer {
        lock()
        state.pointee.isClosed = true
        refuseWaiters()
        let batch = state.pointee.pending
        state.pointee.pending = JobBuffer()
        unlock()
        return batch
    }

    func counters() -> EventLoopStats {
        lock()
        defer { unlock() }
        return EventLoopStats(
            posted: state.pointee.posted, executed: state.pointee.executed,
            wakeUpsWritten: state.pointee.wakeUpsWritten, drains: state.pointee.drains,
            largestBatch: state.pointee.largestBatch, pending: state.pointee.pending.count,
            capacity: state.pointee.capacity == Int.max ? nil : state.pointee.capacity,
            highWaterMark: state.pointee.highWaterMark, postsThatWaited: state.pointee.postsThatWaited)
    }
}
