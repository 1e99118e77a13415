// ThreadSemaphore.swift: the semaphore a blocked thread sleeps on, one per
// thread, made on the thread's first blocking wait and reused for every
// later one (freed when the thread exits).
//
// Reuse is safe because of the rule `Completion` keeps: a wait that took a
// thread's semaphore ends with its count back at zero. The completer posts
// exactly once, and the waiter does not leave until it has taken that post,
// unless it withdrew the wait first, in which case nobody posts. A thread
// blocks in one wait at a time, so no two waits share a count.
//
// A completer's `sem_post` may still be inside its futex wake-up when the
// waiter has already returned (and even when its thread has exited and the
// semaphore was freed): glibc's post increments the count first and wakes
// second, and its futex wake tolerates memory that was reused. What must
// not outlive the wait is anything the completer reads after the post, and
// `Completion.resume` reads nothing after it.
import CLibevent
import Glibc

enum ThreadSemaphore {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { pointer in
            guard let semaphore = pointer?.assumingMemoryBound(to: sem_t.self) else { return }
            sem_destroy(semaphore)
            semaphore.deinitialize(count: 1)
            semaphore.deallocate()
        }
        precondition(rc == 0, "MainLoop: pthread_key_create failed with errno \(rc)")
        return key
    }()

    /// The calling thread's semaphore (count zero between waits).
    @inline(__always)
    static var current: UnsafeMutablePointer<sem_t> {
        if let existing = pthread_getspecific(key) { return existing.assumingMemoryBound(to: sem_t.self) }
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        semaphore.initialize(to: sem_t())
        let rc = sem_init(semaphore, 0, 0)
        precondition(rc == 0, "MainLoop: sem_init failed with errno \(errno)")
        pthread_setspecific(key, semaphore)
        return semaphore
    }

    /// Takes one post, or gives up at `deadline` (monotonic ns; nil: never).
    /// Returns false when the deadline passed first.
    static func wait(_ semaphore: UnsafeMutablePointer<sem_t>, until deadline: UInt64?) -> Bool {
        let rc = mainloop_sem_wait_until(semaphore, deadline ?? 0)
        if rc == ETIMEDOUT { return false }
        precondition(rc == 0, "MainLoop: sem_wait failed with errno \(rc)")
        return true
    }

    static func post(_ semaphore: UnsafeMutablePointer<sem_t>) {
        let rc = sem_post(semaphore)
        precondition(rc == 0, "MainLoop: sem_post failed with errno \(errno)")
    }
}
