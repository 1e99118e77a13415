// RoomWaiter.swift: a producer blocked because a bounded mailbox is full.
//
// Blocked producers queue in FIFO order inside the mailbox. When the loop
// swaps a batch out, it hands room to them in that order: it appends each
// waiter's job to the pending batch itself (so nobody can overtake a waiter
// between its wake-up and its retry) and signals the waiter's own condition
// variable (so exactly the admitted producers wake, not a herd). Every field
// here is guarded by the mailbox mutex, which is also the mutex the waiter
// sleeps with.
import CLibevent

final class RoomWaiter: @unchecked Sendable {
    enum State {
        case waiting
        /// The loop appended the job: it was accepted.
        case admitted
        /// Not accepted: the mailbox closed (`.shutDown`) or the deadline passed (`.timedOut`).
        case refused(EventLoopError)

        var isTimeout: Bool {
            if case .refused(.timedOut) = self { return true }
            return false
        }
    }

    // Guarded by the mailbox mutex.
    var job: Job?
    var state = State.waiting
    let condition: UnsafeMutablePointer<pthread_cond_t>

    init(job: Job) {
        self.job = job
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let rc = mainloop_cond_init_monotonic(condition)
        precondition(rc == 0, "pthread_cond_init failed with errno \(rc)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    var isWaiting: Bool {
        if case .waiting = state { return true }
        return false
    }

    /// Mailbox mutex held: ends the wait with `state`, dropping the job
    /// unless it was admitted (a refused job must not keep the caller's
    /// closure alive).
    func finish(_ state: State) {
        // The broken build drops the loop's releases (admission, shutdown),
        // not the waiter's own timeout.
        if FaultInjection.dropsReleases, !state.isTimeout { return }
        self.state = state
        job = nil
        pthread_cond_signal(condition)
    }
}
