// DelayedPerformRequests.swift: performSelector(_:afterDelay:) requests that
// have not ended yet, by target, so cancelPreviousPerformRequests can
// withdraw them on every loop.
//
// A request is registered before its timer exists and unregistered by the
// timer's end hook (fired, cancelled or its loop stopped), so the table never
// keeps a target alive past its last request.
import Invocations

enum DelayedPerformRequests {
    // `@unchecked Sendable`: `id` and `selector` never change; `timer` is
    // read and written only under `DelayedPerformRequests.lock`.
    private final class Request: @unchecked Sendable {
        // Immutable.
        let id: UInt64
        let selector: Selector
        // Guarded by `DelayedPerformRequests.lock`; nil while being scheduled.
        var timer: Scheduled?
        init(id: UInt64, selector: Selector) {
            self.id = id
            self.selector = selector
        }
    }

    private static let lock = Lock()
    // Guarded by `lock`. Keyed by the target's identity (for a `LoopBound`
    // value, its storage's), which is stable while a request is registered:
    // the invocation keeps the target (or the storage) alive.
    nonisolated(unsafe) private static var requests: [ObjectIdentifier: [Request]] = [:]
    // Guarded by `lock`, as `requests`.
    nonisolated(unsafe) private static var nextID: UInt64 = 0

    static func schedule(
        _ invocation: some LoopInvocation, key: ObjectIdentifier, on loop: EventLoop, after delay: Duration
    ) throws -> Scheduled {
        let request = lock.withLock { () -> Request in
            nextID += 1
            let request = Request(id: nextID, selector: invocation.selector)
            requests[key, default: []].append(request)
            return request
        }
        let timer: Scheduled
        do {
            timer = try loop.schedule(
                after: delay, { loop.performReportingErrors(invocation) },
                onEnd: { remove(key: key, id: request.id) })
        } catch {
            remove(key: key, id: request.id)
            throw error
        }
        let stillWanted = lock.withLock { () -> Bool in
            guard requests[key]?.contains(where: { $0 === request }) == true else { return false }
            request.timer = timer
            return true
        }
        // Cancelled by another thread while it was being scheduled.
        if !stillWanted { timer.cancel() }
        return timer
    }

    private static func remove(key: ObjectIdentifier, id: UInt64) {
        lock.withLock {
            requests[key]?.removeAll { $0.id == id }
            if requests[key]?.isEmpty == true { requests[key] = nil }
        }
    }

    static func cancel(key: ObjectIdentifier, selector: Selector?) {
        let withdrawn = lock.withLock { () -> [Scheduled?] in
            var matching: [Scheduled?] = []
            requests[key]?.removeAll { request in
                guard selector == nil || request.selector == selector else { return false }
                matching.append(request.timer)
                return true
            }
            if requests[key]?.isEmpty == true { requests[key] = nil }
            return matching
        }
        // Outside the lock: cancel() may wait for a running timer handler,
        // and the timer's end hook takes the lock.
        for timer in withdrawn { timer?.cancel() }
    }

    // fork() (see Support/ForkHandling.swift): the lock is held across it,
    // so the child inherits a consistent table. Every request is a timer on
    // a loop of the parent's, which the child can neither fire nor cancel:
    // the child starts with none.

    static func prepareForFork() { lock.lock() }

    static func resumeParentAfterFork() { lock.unlock() }

    static func resumeChildAfterFork() {
        requests.removeAll()
        lock.unlock()
    }

    /// How many requests `target` has registered (for tests: the table must
    /// not leak). Per target, so that tests running beside each other do
    /// not see each other's requests.
    static func count(forTarget target: AnyObject) -> Int {
        lock.withLock { requests[ObjectIdentifier(target)]?.count ?? 0 }
    }
}
