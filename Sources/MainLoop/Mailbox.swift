// Mailbox.swift: the lock, the pending batch, the eventfd and its coalescing rule.
//
// Producers append under `lock`. The loop takes the whole pending batch with
// one swap, so a drain costs one lock round trip however many jobs it runs.
//
// Wake-up rule (the invariant everything else leans on):
//   `needsWake` is true exactly when the loop has declared that it will not
//   look at the mailbox again until the eventfd is written. Only the producer
//   that finds it true (and so the mailbox empty) writes the eventfd, and it
//   clears the flag under the lock, so one wake-up is written per sleep of
//   the loop, however many producers race. The loop sets the flag again only
//   at the end of a drain that finds the mailbox empty; when a drain ends
//   with more work queued, the loop re-arms itself without any syscall. Under
//   saturation the loop never sleeps, and producers write nothing.
import CLibevent

final class Mailbox: @unchecked Sendable {
    enum DrainOutcome {
        /// More work arrived during the drain: run another batch after I/O and timers had a turn.
        case more
        /// Empty; `needsWake` is set and the loop may sleep.
        case idle
        /// Empty and closed: the final drain is done.
        case closedAndEmpty
    }

    /// The eventfd producers write to wake the loop. Owned (closed) by the loop core.
    let eventFD: Int32

    private let lock = Lock()
    // Guarded by `lock`.
    private var pending = JobBuffer()
    private var isClosed = false
    private var needsWake = true
    private var posted: UInt64 = 0
    private var wakeUpsWritten: UInt64 = 0
    // Written by the loop thread under `lock` at the end of each drain, so
    // that `stats` can read them from any thread.
    private var executed: UInt64 = 0
    private var drains: UInt64 = 0
    private var largestBatch = 0

    // Loop thread only: the empty buffer swapped in for the next batch.
    private var spare = JobBuffer()

    init(eventFD: Int32) {
        self.eventFD = eventFD
    }

    deinit {
        // Jobs still queued belong to a loop that never ran or was dropped:
        // release their closures, and tell anybody who waits.
        pending.removeAll { $0.abandon(.shutDown) }
        pending.deallocate()
        spare.deallocate()
    }

    /// Accepts `job`, or throws `.shutDown` once the mailbox is closed.
    @inline(__always)
    func enqueue(_ job: Job) throws(EventLoopError) {
        lock.lock()
        guard !isClosed else {
            lock.unlock()
            throw .shutDown
        }
        pending.append(job)
        posted &+= 1
        let wake = needsWake
        if wake {
            needsWake = false
            wakeUpsWritten &+= 1
        }
        lock.unlock()
        if wake { signalLoop() }
    }

    private func signalLoop() {
        let rc = mainloop_eventfd_signal(eventFD)
        // Only EBADF/EINVAL can get here, which would mean the loop core
        // closed its eventfd while a producer still held the mailbox.
        precondition(rc == 0, "MainLoop: writing the loop's eventfd \(eventFD) failed with errno \(rc)")
    }

    /// Loop thread: consume the wake-up signal. Called before `takeBatch`, so a
    /// post that lands after the swap writes a fresh signal.
    func consumeWakeSignal() {
        _ = mainloop_eventfd_drain(eventFD)
    }

    /// Loop thread: takes every pending job in one swap.
    func takeBatch() -> JobBuffer {
        lock.lock()
        let batch = pending
        pending = spare
        lock.unlock()
        spare = JobBuffer()
        return batch
    }

    /// Loop thread: hands back the emptied batch buffer, records the drain and
    /// decides what the loop does next.
    func finishDrain(_ batch: JobBuffer, ran: Int) -> DrainOutcome {
        precondition(batch.count == 0)
        spare = batch
        lock.lock()
        defer { lock.unlock() }
        executed &+= UInt64(ran)
        drains &+= 1
        largestBatch = Swift.max(largestBatch, ran)
        if pending.count > 0 { return .more }
        if isClosed { return .closedAndEmpty }
        needsWake = true
        return .idle
    }

    /// Refuses every later post. Returns true when the loop sleeps waiting
    /// for a wake-up, in which case this call has written it.
    @discardableResult
    func close() -> Bool {
        lock.lock()
        isClosed = true
        let wake = needsWake
        if wake {
            needsWake = false
            wakeUpsWritten &+= 1
        }
        lock.unlock()
        if wake { signalLoop() }
        return wake
    }

    var closed: Bool { lock.withLock { isClosed } }

    /// Closes the mailbox and takes what is still queued, for a loop that
    /// will never drain it (stopped before it ran).
    func closeAndTakeAll() -> JobBuffer {
        lock.lock()
        isClosed = true
        let batch = pending
        pending = JobBuffer()
        lock.unlock()
        return batch
    }

    func counters() -> EventLoopStats {
        lock.withLock {
            EventLoopStats(
                posted: posted, executed: executed, wakeUpsWritten: wakeUpsWritten,
                drains: drains, largestBatch: largestBatch, pending: pending.count)
        }
    }
}
