// Stats.swift: what a loop has done, readable from any thread.

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

    public var description: String {
        "posted=\(posted) executed=\(executed) wakeups=\(wakeUpsWritten) drains=\(drains) largest_batch=\(largestBatch) pending=\(pending)"
    }
}
