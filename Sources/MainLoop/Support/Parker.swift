// Parker.swift: a mutex and a condition variable on CLOCK_MONOTONIC, for a
// latch that several threads may wait on at once (a loop's termination).
// A single blocked caller sleeps on its thread's semaphore instead
// (the ThreadSemaphore section of Waiting/Completion.swift).
import CLibevent

final class Parker: @unchecked Sendable {
    // `@unchecked Sendable`: `storage` never changes; what it points to is a
    // pthread mutex and condition variable, made to be used from any thread,
    // and only through them.
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

    /// Child of fork() only: makes the mutex and the condition anew; the
    /// threads that slept on them did not survive the fork.
    func remakeInForkedChild() {
        let rc = mainloop_parker_init(storage)
        precondition(rc == 0, "pthread mutex/condition init failed with errno \(rc)")
    }

    @inline(__always)
    func lock() { pthread_mutex_lock(&storage.pointee.mutex) }

    @inline(__always)
    func unlock() { pthread_mutex_unlock(&storage.pointee.mutex) }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

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
