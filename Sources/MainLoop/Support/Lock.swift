// Lock.swift: the one mutual-exclusion primitive MainLoop uses.
//
// A pthread mutex rather than Synchronization.Mutex: the thread sanitizer
// reported false races on the latter on every run with this toolchain, and
// a sanitizer that cries wolf hides the real races. Every pthread result is
// checked with `precondition`, in release builds too: a failing lock call
// means memory corruption or a lock used after free, and must not go on.
import CLibevent

final class Lock: @unchecked Sendable {
    // `@unchecked Sendable`: its one field never changes, and the mutex it
    // points to is what makes the calls safe from any thread (a pthread
    // mutex is made to be shared). Heap-allocated so its address never
    // moves while a thread holds it.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "MainLoop: pthread_mutex_init failed with errno \(rc)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Child of fork() only: makes the mutex anew, unlocked, whatever a
    /// thread that did not survive the fork left it as.
    func remakeInForkedChild() {
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "MainLoop: pthread_mutex_init failed with errno \(rc)")
    }

    @inline(__always)
    func lock() {
        let rc = pthread_mutex_lock(mutex)
        precondition(rc == 0, "MainLoop: pthread_mutex_lock failed with errno \(rc)")
    }

    @inline(__always)
    func unlock() {
        let rc = pthread_mutex_unlock(mutex)
        precondition(rc == 0, "MainLoop: pthread_mutex_unlock failed with errno \(rc)")
    }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
