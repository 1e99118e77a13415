// MainLoopConfiguration.swift: settings for EventLoop.main, which is made
// lazily on first use and so cannot take initializer arguments.

enum MainLoopConfiguration {
    private static let lock = Lock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var mailboxCapacity: Int?
    nonisolated(unsafe) private static var latencyStats = true
    nonisolated(unsafe) private static var claimed = false

    static func set(mailboxCapacity capacity: Int?, latencyStats: Bool) throws(EventLoopError) {
        if let capacity, capacity < 1 {
            throw .invalidArgument("mailboxCapacity must be at least 1, got \(capacity)")
        }
        lock.lock()
        defer { lock.unlock() }
        guard !claimed else {
            throw .invalidArgument("EventLoop.main already exists: configure it before its first use")
        }
        mailboxCapacity = capacity
        self.latencyStats = latencyStats
    }

    /// Called once, by EventLoop.main's initializer: later `set` calls fail.
    static func claim() -> (mailboxCapacity: Int?, latencyStats: Bool) {
        lock.withLock {
            claimed = true
            return (mailboxCapacity, latencyStats)
        }
    }
}
