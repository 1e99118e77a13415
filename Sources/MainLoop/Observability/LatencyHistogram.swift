// LatencyHistogram.swift: a log-linear histogram of nanoseconds (HDR
// style). Values below 128 ns have a bucket each; above, each power of two
// is split into 64 buckets, so a bucket is at most 1/64 (1.6%) of its values
// wide. Up to 2^43 ns (about 2.4 hours) in 2,432 buckets, allocated on the
// first measurement; longer values count in the last bucket.

/// A histogram of durations in nanoseconds, log-linear (HDR style): every
/// figure it gives is within 1.6% of the measurement. What a loop keeps
/// for ``EventLoopStats/queueDelay``; public so that a daemon can keep its
/// own (kvd keeps one per command). Not thread-safe: guard it, or keep it on
/// one loop.
public struct LatencyHistogram: Sendable {
    static let subBuckets = 64
    static let largestShift = 36
    static let bucketCount = (largestShift + 2) * subBuckets

    private(set) var counts: [UInt64] = []
    private(set) var total = 0
    private(set) var largest: UInt64 = 0
    /// The range of buckets that may be non-empty (summaries scan only it).
    private var lowest = Int.max
    private var highest = -1

    /// The bucket that holds `nanoseconds`.
    static func bucket(of nanoseconds: UInt64) -> Int {
        guard nanoseconds >= 128 else { return Int(nanoseconds) }
        let highestBit = UInt64.bitWidth - 1 - nanoseconds.leadingZeroBitCount
        let shift = Swift.min(highestBit - 6, largestShift)
        let index = shift * subBuckets + Int(Swift.min(nanoseconds >> UInt64(shift), 127))
        return Swift.min(index, bucketCount - 1)
    }

    /// The largest value bucket `index` holds.
    static func upperBound(of index: Int) -> UInt64 {
        guard index >= 128 else { return UInt64(index) }
        let shift = index / subBuckets - 1
        let mantissa = UInt64(index % subBuckets + subBuckets)
        return ((mantissa + 1) << UInt64(shift)) - 1
    }

    /// An empty histogram (it allocates its buckets on the first measurement).
    public init() {}

    /// How many measurements it holds.
    public var count: Int { total }

    /// Adds one measurement.
    public mutating func record(_ nanoseconds: UInt64) {
        if counts.isEmpty { counts = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount) }
        let index = LatencyHistogram.bucket(of: nanoseconds)
        counts[index] += 1
        lowest = Swift.min(lowest, index)
        highest = Swift.max(highest, index)
        total += 1
        largest = Swift.max(largest, nanoseconds)
    }

    /// Forgets every measurement.
    public mutating func reset() {
        if highest >= 0 { for index in lowest...highest { counts[index] = 0 } }
        lowest = Int.max
        highest = -1
        total = 0
        largest = 0
    }

    /// The value at `quantile` (0...1), in nanoseconds: the upper bound of
    /// the bucket that holds the measurement of that rank (0 when empty).
    public func value(at quantile: Double) -> UInt64 {
        guard total > 0 else { return 0 }
        let rank = Swift.max(1, UInt64((quantile * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for index in lowest...highest where counts[index] > 0 {
            seen += counts[index]
            if seen >= rank { return Swift.min(LatencyHistogram.upperBound(of: index), largest) }
        }
        return largest
    }

    /// How many measurements are at most `nanoseconds` (to the bucket:
    /// counts every measurement in the bucket that holds `nanoseconds`).
    public func count(atMost nanoseconds: UInt64) -> Int {
        guard total > 0 else { return 0 }
        let last = Swift.min(LatencyHistogram.bucket(of: nanoseconds), highest)
        guard last >= lowest else { return 0 }
        return Int((lowest...last).reduce(UInt64(0)) { $0 + counts[$1] })
    }

    /// The summary: count, percentiles, maximum and non-empty buckets.
    public var summary: LatencySummary {
        guard total > 0 else { return .empty }
        func duration(_ nanoseconds: UInt64) -> Duration { .nanoseconds(Int64(clamping: nanoseconds)) }
        var buckets: [LatencyBucket] = []
        for index in lowest...highest where counts[index] > 0 {
            let count = counts[index]
            buckets.append(
                LatencyBucket(
                    upperBound: duration(Swift.min(LatencyHistogram.upperBound(of: index), largest)),
                    count: Int(count)))
        }
        return LatencySummary(
            count: total, p50: duration(value(at: 0.5)), p90: duration(value(at: 0.9)),
            p99: duration(value(at: 0.99)), p999: duration(value(at: 0.999)), max: duration(largest),
            buckets: buckets)
    }
}
