// Parker.swift: what a blocked caller sleeps on until the loop wakes it.
//
// A one-shot binary semaphore with a lock around its state: the caller and
// the loop must agree atomically on "not started yet, withdraw it" versus
// "already started, wait for the result", which a bare counting semaphore
// cannot express. The condition variable runs on CLOCK_MONOTONIC.
import CLibevent

final class Parker: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<mainloop_parker>

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: mainloop_parker())
        let rc = mainloop_parker_init(storage)
        precondition(rc == 0, "pthread mutex/condition init failed with errno \(rc)")
    }

    deinit {
        mainloop_parker_destroy(storage)
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inline(__always)
    func lock() { pthread_mutex_lock(&storage.pointee.mutex) }

    @inline(__always)
    func unlock() { pthread_mutex_unlock(&storage.pointee.mutex) }

    /// Wakes the thread sleeping in `wait`. Called after `unlock()`, so the
    /// woken thread does not immediately block on the mutex again.
    @inline(__always)
    func signal() { pthread_cond_signal(&storage.pointee.cond) }

    /// Wakes every thread sleeping in `wait` (for latches with several waiters).
    func broadcast() { pthread_cond_broadcast(&storage.pointee.cond) }

    /// Sleeps with the lock held until signalled or until `deadline`
    /// (monotonic nanoseconds; `nil` waits without a bound). Spurious
    /// wake-ups are possible: callers re-check their state.
    /// Returns false once the deadline has passed.
    func wait(until deadline: UInt64?) -> Bool {
        guard let deadline else {
            mainloop_parker_wait(storage, 0)
            return true
        }
        if mainloop_monotonic_ns() >= deadline { return false }
        return mainloop_parker_wait(storage, deadline) != ETIMEDOUT
    }
}

/// The monotonic deadline `timeout` from now, in nanoseconds; `nil` for no timeout.
func monotonicDeadline(after timeout: Duration?) -> UInt64? {
    guard let timeout else { return nil }
    let (seconds, attoseconds) = timeout.components
    if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return mainloop_monotonic_ns() }
    let nanos = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
    let total = nanos.partialValue.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
    if nanos.overflow || total.overflow { return UInt64.max / 2 }
    let sum = mainloop_monotonic_ns().addingReportingOverflow(total.partialValue)
    return sum.overflow ? UInt64.max / 2 : sum.partialValue
}
