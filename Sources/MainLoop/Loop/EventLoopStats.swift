// EventLoopStats.swift: what a loop has done, readable from any thread.

/// A snapshot of an ``EventLoop``'s counters. The loop's own counters are
/// read together, under the mailbox's lock; an unbounded mailbox's posts are
/// counted without it, so while posts race, ``posted`` and ``pending`` are
/// read a moment apart and may differ by the posts made in between.
/// ``executed`` never exceeds ``posted``.
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
    /// How long posts waited in the mailbox: from being accepted to their
    /// start. Sampled: about one post in 300 is measured (one in 256 through
    /// a bounded mailbox, one in 341 through an unbounded one's lane). The
    /// loop publishes its
    /// measurements when a batch ends. Empty when the loop was made with
    /// `latencyStats: false`.
    public var queueDelay: LatencySummary = .empty
    /// How long jobs ran. Sampled (the same posts), or every job
    /// while a slow-job handler is installed
    /// (``EventLoop/onSlowJob(threshold:_:)``). Empty with `latencyStats: false`.
    public var runTime: LatencySummary = .empty

    public var description: String {
        var text =
            "posted=\(posted) executed=\(executed) wakeups=\(wakeUpsWritten) drains=\(drains) largest_batch=\(largestBatch) pending=\(pending)"
        if let capacity { text += " capacity=\(capacity) high_water=\(highWaterMark) waited=\(postsThatWaited)" }
        if queueDelay.count > 0 {
            text += " queue_delay_p50=\(queueDelay.p50.microseconds)us queue_delay_p99=\(queueDelay.p99.microseconds)us"
        }
        if runTime.count > 0 {
            text += " run_time_p50=\(runTime.p50.microseconds)us run_time_p99=\(runTime.p99.microseconds)us"
        }
        return text
    }
}

extension Duration {
    /// Nanoseconds, clamped to 0...UInt64.max (for thresholds and timeouts).
    var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let whole = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let sum = whole.partialValue.addingReportingOverflow(UInt64(clamping: attoseconds / 1_000_000_000))
        return whole.overflow || sum.overflow ? UInt64.max : sum.partialValue
    }

    /// Whole microseconds (for one-line figures).
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
