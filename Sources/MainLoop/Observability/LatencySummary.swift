// LatencySummary.swift: the public face of a latency histogram.

/// How long something took, summarised: how many times it was measured,
/// percentiles, the maximum, and the histogram itself.
///
/// Values come from a log-linear histogram (HDR style: 64 sub-buckets per
/// power of two), so each figure is within 1.6% of the measured value; a
/// percentile is the upper bound of the bucket that holds it.
public struct LatencySummary: Sendable, Equatable, CustomStringConvertible {
    /// How many measurements the figures summarise.
    public var count: Int
    /// The median.
    public var p50: Duration
    /// The 90th percentile.
    public var p90: Duration
    /// The 99th percentile.
    public var p99: Duration
    /// The 99.9th percentile.
    public var p999: Duration
    /// The largest measurement (its bucket's upper bound).
    public var max: Duration
    /// The non-empty buckets, shortest first: each counts the measurements
    /// at most `upperBound` and above the previous bucket's bound.
    public var buckets: [LatencyBucket]

    /// No measurements.
    public static let empty = LatencySummary(
        count: 0, p50: .zero, p90: .zero, p99: .zero, p999: .zero, max: .zero, buckets: [])

    public var description: String {
        "count=\(count) p50=\(micros(p50)) p90=\(micros(p90)) p99=\(micros(p99)) p999=\(micros(p999)) max=\(micros(max))"
    }

    private func micros(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return "\(nanoseconds / 1000).\(String(nanoseconds % 1000 / 100))us"
    }
}

/// One bucket of a ``LatencySummary``.
public struct LatencyBucket: Sendable, Equatable {
    /// The longest duration the bucket holds.
    public var upperBound: Duration
    /// How many measurements fell in it.
    public var count: Int
}
