// TestThread.swift: plain threads for tests, joined with a bound.
//
// Shared by both test targets. There is no unbounded join here: a thread
// stuck in a blocking call fails its test (naming what it was waiting for)
// instead of hanging CI.
import Glibc
import Testing

/// Starts `body` on a new plain thread (not a loop). There is no unbounded
/// join: `join(within:_:)` gives up after a bound and records a failure
/// that names what did not finish, so a thread stuck in a blocking call
/// fails its test instead of hanging CI.
public final class TestThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: @Sendable () -> Void
    private let finished = Flag()

    public init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { context in
                let me = Unmanaged<TestThread>.fromOpaque(context!).takeRetainedValue()
                me.body()
                me.finished.set()
                return nil
            }, context)
        precondition(rc == 0)
    }

    /// True once `body` has returned.
    public var hasFinished: Bool { finished.isSet }

    /// Waits at most `timeout` for the thread to finish. If it does not, a
    /// failure naming `what` is recorded, the thread is detached (it stays
    /// stuck, but the test goes on and fails) and false is returned.
    @discardableResult
    public func join(
        within timeout: Duration = .seconds(60), _ what: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        guard finished.wait(within: timeout) else {
            Issue.record("not released within \(timeout): \(what())", sourceLocation: sourceLocation)
            pthread_detach(thread)
            return false
        }
        pthread_join(thread, nil)  // returns at once: the body has finished
        return true
    }
}

extension Array where Element == TestThread {
    /// Joins every thread, all within one shared bound (see `TestThread.join(within:_:)`).
    @discardableResult
    public func join(
        within timeout: Duration = .seconds(60), _ what: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var all = true
        for (index, thread) in enumerated() {
            let left = Swift.max(deadline - clock.now, .zero)
            if !thread.join(within: left, "\(what()) (thread \(index) of \(count))", sourceLocation: sourceLocation) {
                all = false
            }
        }
        return all
    }
}

/// A one-way flag a thread sets when it is done, and another waits for with a bound.
private final class Flag: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is guarded by `mutex`.
    private var mutex = pthread_mutex_t()
    private var value = false

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func set() {
        pthread_mutex_lock(&mutex)
        value = true
        pthread_mutex_unlock(&mutex)
    }

    var isSet: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return value
    }

    /// Polls until set or until `timeout` has passed.
    func wait(within timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if isSet { return true }
            var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&nap, nil)
        }
        return isSet
    }
}
