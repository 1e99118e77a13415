// EventLoopStats.swift: what a loop has done, readable from any thread.

/// A consistent snapshot of an ``EventLoop``'s counters, taken under the
/// mailbox lock.
///
/// Every accepted post is counted in ``posted`` once; the loop counts it in
/// ``executed`` once it has processed it (a blocking post withdrawn after a
/// timeout counts as processed, since it left the mailbox). So once a loop is
/// quiet, `posted == executed` and `pending == 0`.
public struct EventLoopStats: Sendable, Equatable, CustomStringConvertible {
    /// Posts the mailbox accepted (every kind: `post`, `postAndWait`, invocations).
    public var posted: UInt64
    /// Posts the loop has taken out of the mailbox and processed.
    public var executed: UInt64
    /// eventfd writes made to wake the loop. Under load this stays far below
    /// ``posted``: only a post that finds the loop asleep writes.
    public var wakeUpsWritten: UInt64
    /// Batches the loop has drained.
    public var drains: UInt64
    /// The most posts one drain has run.
    public var largestBatch: Int
    /// Posts accepted but not yet taken by a drain.
    public var pending: Int
    /// The mailbox's bound, or nil when it is unbounded.
    public var capacity: Int?
    /// The most posts that were pending at once (tracked for bounded mailboxes; 0 otherwise).
    public var highWaterMark: Int
    /// Posts that found a bounded mailbox full and had to wait for room
    /// (whether they were then accepted or not).
    public var postsThatWaited: UInt64

    public var description: String {
        var text =
            "posted=\(posted) executed=\(executed) wakeups=\(wakeUpsWritten) drains=\(drains) largest_batch=\(largestBatch) pending=\(pending)"
        if let capacity { text += " capacity=\(capacity) high_water=\(highWaterMark) waited=\(postsThatWaited)" }
        return text
    }
}
