// ThreadToken.swift: a number for the calling thread that no other thread
// of the process ever gets, not even after this one exits (kernel thread
// ids and pthread_t values are reused, so neither can say "the same thread"
// across a thread's death).
import Glibc
import Synchronization

enum ThreadToken {
    private static let next = Atomic<UInt>(1)
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "MainLoop: pthread_key_create failed with errno \(rc)")
        return key
    }()

    /// The calling thread's token (never 0), made on first use.
    static var current: UInt {
        if let existing = pthread_getspecific(key) { return UInt(bitPattern: existing) }
        let token = next.add(1, ordering: .relaxed).oldValue
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: token))
        return token
    }
}
