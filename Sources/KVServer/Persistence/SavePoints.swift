// SavePoints.swift: Redis's `save` setting: pairs of "after this many
// seconds, if at least this many changes": a BGSAVE starts when any pair
// is met. "3600 1 300 100 60 10000" is Redis 7.0's default; "" turns
// snapshots at save points off.

/// One save point.
public struct SavePoint: Sendable, Equatable {
    /// Seconds since the last successful save.
    public var seconds: Int
    /// Changes since then.
    public var changes: Int

    /// Redis 7.0's default: an hour and 1 change, 5 minutes and 100, a minute and 10000.
    public static let redisDefault = [
        SavePoint(seconds: 3600, changes: 1), SavePoint(seconds: 300, changes: 100),
        SavePoint(seconds: 60, changes: 10000),
    ]

    /// The save points in `text` ("3600 1 300 100", or "" for none); nil
    /// when it is not pairs of non-negative integers.
    public static func parse(_ text: String) -> [SavePoint]? {
        let words = text.split(separator: " ").map(String.init)
        guard words.count % 2 == 0 else { return nil }
        var points: [SavePoint] = []
        for index in stride(from: 0, to: words.count, by: 2) {
            guard let seconds = Int(words[index]), let changes = Int(words[index + 1]), seconds >= 0, changes >= 0
            else { return nil }
            points.append(SavePoint(seconds: seconds, changes: changes))
        }
        return points
    }

    /// CONFIG GET save's answer for `points`.
    static func text(_ points: [SavePoint]) -> String {
        points.map { "\($0.seconds) \($0.changes)" }.joined(separator: " ")
    }
}
