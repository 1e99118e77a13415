// LatencyMonitor.swift: Redis's latency monitor. With
// latency-monitor-threshold set (milliseconds; 0, the default, is off), a
// command that took at least that long is an event, "command" or, for a
// command Redis flags fast, "fast-command"; each event keeps its last 160
// seconds that had one (the worst of each second) and its all-time worst,
// for LATENCY LATEST, HISTORY, RESET and DOCTOR. A slice of active expiry
// that took that long is an "expire-cycle" event, as in Redis; Redis's
// other sources (fork, AOF fsync, eviction) are not events in kvd.
import Glibc

/// The latency monitor's events. Core loop only, with the dispatcher.
struct LatencyMonitor {
    /// One event's samples: (Unix second, milliseconds), oldest first.
    struct Series {
        var samples: [(time: Int, latency: Int)] = []
        var max = 0
    }

    /// Redis's LATENCY_TS_LEN.
    static let historyLength = 160
    /// Redis's `latency-monitor-threshold`, in milliseconds (0: off).
    var threshold = 0
    /// The events in the order they first happened.
    private(set) var events: [(name: String, series: Series)] = []

    /// Core loop: a command ran `nanoseconds`; an event when that reaches
    /// the threshold. `fast` tells which event (Redis's command flags).
    @inline(__always)
    mutating func note(nanoseconds: UInt64, fast: @autoclosure () -> Bool) {
        guard threshold > 0, nanoseconds / 1_000_000 >= UInt64(threshold) else { return }
        add(fast() ? "fast-command" : "command", milliseconds: Int(nanoseconds / 1_000_000))
    }

    /// Core loop: `event` took `nanoseconds`; a sample when that reaches
    /// the threshold (Redis's latencyAddSampleIfNeeded).
    mutating func note(_ event: String, nanoseconds: UInt64) {
        guard threshold > 0, nanoseconds / 1_000_000 >= UInt64(threshold) else { return }
        add(event, milliseconds: Int(nanoseconds / 1_000_000))
    }

    /// Redis's latencyAddSample: one sample per second, the worst of it.
    mutating func add(_ event: String, milliseconds: Int) {
        let now = time(nil)
        let index =
            events.firstIndex { $0.name == event }
            ?? {
                events.append((event, Series()))
                return events.count - 1
            }()
        events[index].series.max = Swift.max(events[index].series.max, milliseconds)
        if let last = events[index].series.samples.last, last.time == now {
            if milliseconds > last.latency {
                events[index].series.samples[events[index].series.samples.count - 1].latency = milliseconds
            }
            return
        }
        events[index].series.samples.append((now, milliseconds))
        if events[index].series.samples.count > LatencyMonitor.historyLength {
            events[index].series.samples.removeFirst()
        }
    }

    func series(_ event: [UInt8]) -> Series? {
        events.first { $0.name == String(decoding: event, as: UTF8.self) }?.series
    }

    /// LATENCY RESET: the named events (all when nil); how many were reset.
    mutating func reset(_ names: [[UInt8]]?) -> Int {
        guard let names else {
            defer { events = [] }
            return events.count
        }
        var resets = 0
        for name in names {
            let text = String(decoding: name, as: UTF8.self)
            if let index = events.firstIndex(where: { $0.name == text }) {
                events.remove(at: index)
                resets += 1
            }
        }
        return resets
    }

    /// LATENCY DOCTOR: Redis's report, its opening and its line per event
    /// (kvd gives no tuning advice after them).
    func report() -> String {
        guard !events.isEmpty || threshold != 0 else {
            return
                "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
        }
        guard !events.isEmpty else {
            return
                "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
        }
        var text =
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n"
        let now = time(nil)
        for (number, event) in events.enumerated() {
            let samples = event.series.samples
            let average = samples.map(\.latency).reduce(0, +) / samples.count
            let deviation = samples.map { abs($0.latency - average) }.reduce(0, +) / samples.count
            let period = Swift.max(now - (samples.map(\.time).min() ?? now), 1)
            text +=
                "\(number + 1). \(event.name): \(samples.count) latency spikes (average \(average)ms, mean deviation \(deviation)ms, period \(fixed(Double(period) / Double(samples.count), 2)) sec). Worst all time event \(event.series.max)ms.\n"
        }
        return text
    }
}
