// Locked.swift: a value shared between test threads, guarded by a mutex.
// Shared by both test targets (the library's own Lock is internal to it).
import Glibc

/// A value shared between threads, guarded by a pthread mutex.
public final class Locked<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is guarded by `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the mutex.
    public func withValue<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// The value now.
    public var current: Value { withValue { $0 } }
    /// The value now.
    public func get() -> Value { current }
    /// Replaces the value.
    public func set(_ new: Value) { withValue { $0 = new } }
    /// Changes the value in place.
    public func update(_ body: (inout Value) -> Void) { withValue { body(&$0) } }
}
