// ObservabilityCommands.swift: how kvd shows its latency the Redis way:
// INFO latencystats and LATENCY HISTOGRAM from a histogram per command
// (MainLoop's LatencyHistogram, fed by one clock read per command), and
// SLOWLOG, fed by the core loop's onSlowJob (see Server.start): a batch that
// held the core longer than --slowlog-log-slower-than is logged with the
// slowest command in it (its arguments and client), as Redis logs the
// command; a slow job that ran no command (an expiry slice) is logged with
// the job's label.
import Glibc
import MainLoop

let observabilityCommands: [Command] = [
    Command("latency", arity: -2, keys: .none) { $0.latency($2, &$3) },
    Command("slowlog", arity: -2, keys: .none) { $0.slowlog($2, &$3) },
]

/// SLOWLOG's settings and entries. Core loop only (the dispatcher's).
struct Slowlog {
    struct Entry {
        let id: Int
        let unixSeconds: Int
        let microseconds: Int
        let arguments: [[UInt8]]
        let client: String
        let name: [UInt8]
    }

    /// Log what held the core longer than this (nil: the log is off).
    var threshold: UInt64? = 10_000_000
    /// Most entries kept.
    var maxLength = 128
    private(set) var entries: [Entry] = []
    private var nextID = 0
    /// The slowest command of the current job above the threshold, if any.
    private var slowest: (arguments: [[UInt8]], nanoseconds: UInt64, client: String, name: [UInt8])?

    /// Core loop: a command ran for `nanoseconds`: remembered if it is the
    /// slowest of its job above the threshold (its arguments are copied
    /// only then, as Redis keeps at most 32 of them, 128 bytes each).
    @inline(__always)
    mutating func note(_ request: Request, took nanoseconds: UInt64, by session: ClientSession) {
        guard let threshold, nanoseconds > threshold, nanoseconds > (slowest?.nanoseconds ?? 0) else { return }
        var arguments = request.prefix(32).map { argument -> [UInt8] in
            argument.count > 128
                ? Array(argument.prefix(128)) + Array("... (\(argument.count - 128) more bytes)".utf8) : argument
        }
        if request.count > 32 { arguments[31] = Array("... (\(request.count - 31) more arguments)".utf8) }
        slowest = (arguments, nanoseconds, session.info.address, session.name)
    }

    /// Core loop, from onSlowJob: a job ran `report.runTime`; logs it with
    /// the slowest command it ran, or with its label.
    mutating func record(_ report: SlowJobReport) {
        let (seconds, attoseconds) = report.runTime.components
        let micros = Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000)
        let command = slowest
        slowest = nil
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        entries.insert(
            Entry(
                id: nextID, unixSeconds: now.tv_sec, microseconds: micros,
                arguments: command?.arguments ?? [Array(report.label.utf8)], client: command?.client ?? "",
                name: command?.name ?? []), at: 0)
        nextID += 1
        if entries.count > maxLength { entries.removeLast(entries.count - maxLength) }
    }

    mutating func reset() {
        entries = []
    }
}

extension Dispatcher {
    /// Core loop: onSlowJob's report for the core (see Server.start).
    public func recordSlowJob(_ report: SlowJobReport) {
        slowlog.record(report)
    }

    /// Configures SLOWLOG: log jobs slower than `threshold` (nil: off),
    /// keep `maxLength` entries.
    public func configureSlowlog(threshold: Duration?, maxLength: Int) {
        slowlog.threshold = threshold.map {
            UInt64(max($0.components.seconds, 0)) * 1_000_000_000
                + UInt64(max($0.components.attoseconds, 0) / 1_000_000_000)
        }
        slowlog.maxLength = maxLength
    }

    /// INFO latencystats: Redis 7's lines, p50/p99/p99.9 in microseconds.
    func latencyStatsLines() -> [String] {
        Dispatcher.rows.filter { latencies[$0.id].count > 0 }.sorted { $0.name < $1.name }.map { command in
            let histogram = latencies[command.id]
            func micros(_ quantile: Double) -> String {
                // Redis's "%.3f" of microseconds: nanoseconds are exact thousandths.
                let nanoseconds = histogram.value(at: quantile)
                return "\(nanoseconds / 1000).\(String(nanoseconds % 1000).leftPadded(to: 3))"
            }
            return
                "latency_percentiles_usec_\(command.name):p50=\(micros(0.5)),p99=\(micros(0.99)),p99.9=\(micros(0.999))"
        }
    }

    // MARK: - LATENCY

    fileprivate func latency(_ r: Request, _ out: inout ReplyWriter) {
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "histogram":
            var chosen: [Command] = []
            if r.count == 2 {
                chosen = Dispatcher.rows.filter { latencies[$0.id].count > 0 }
            } else {
                for name in r.dropFirst(2) {
                    if let command = Dispatcher.command(named: name), latencies[command.id].count > 0,
                        !chosen.contains(where: { $0.id == command.id })
                    {
                        chosen.append(command)
                    }
                }
            }
            out.mapHeader(chosen.count)
            for command in chosen {
                out.bulk(command.name)
                histogram(latencies[command.id], &out)
            }
        case "latest", "history":
            // The latency monitor (latency-monitor-threshold) is off, as in
            // Redis by default: no events.
            guard sub == "latest" ? r.count == 2 : r.count == 3 else {
                return out.error("ERR wrong number of arguments for 'latency|\(sub)' command")
            }
            out.arrayHeader(0)
        case "reset":
            out.integer(0)  // no latency-monitor events to reset
        default:
            out.error(
                bytes: Array("ERR unknown subcommand '".utf8) + r[1].prefix(128)
                    + Array("'. Try LATENCY HELP.".utf8))
        }
    }

    /// Redis's fillCommandCDF: calls, then the cumulative count at each
    /// power-of-two bucket from 1,024 ns (as microseconds), where it grows.
    private func histogram(_ histogram: LatencyHistogram, _ out: inout ReplyWriter) {
        out.mapHeader(2)
        out.bulk("calls")
        out.integer(histogram.count)
        out.bulk("histogram_usec")
        var points: [(micros: Int, cumulative: Int)] = []
        var previous = 0
        var bound: UInt64 = 1024
        while previous < histogram.count && bound < UInt64(1) << 62 {
            let cumulative = histogram.count(atMost: bound)
            if cumulative > previous { points.append((Int(bound / 1000), cumulative)) }
            previous = cumulative
            bound *= 2
        }
        out.mapHeader(points.count)
        for point in points {
            out.integer(point.micros)
            out.integer(point.cumulative)
        }
    }

    // MARK: - SLOWLOG

    fileprivate func slowlog(_ r: Request, _ out: inout ReplyWriter) {
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "get":
            guard r.count <= 3 else { return out.error("ERR wrong number of arguments for 'slowlog|get' command") }
            var count = 10
            if r.count == 3 {
                guard let parsed = parseInteger(r[2]), parsed >= -1 else {
                    return out.error("ERR count should be greater than or equal to -1")
                }
                count = parsed == -1 ? Int.max : parsed
            }
            let entries = slowlog.entries.prefix(count)
            out.arrayHeader(entries.count)
            for entry in entries {
                out.arrayHeader(6)
                out.integer(entry.id)
                out.integer(entry.unixSeconds)
                out.integer(entry.microseconds)
                out.arrayHeader(entry.arguments.count)
                for argument in entry.arguments { out.bulk(argument) }
                out.bulk(entry.client)
                out.bulk(entry.name)
            }
        case "len":
            guard r.count == 2 else { return out.error("ERR wrong number of arguments for 'slowlog|len' command") }
            out.integer(slowlog.entries.count)
        case "reset":
            guard r.count == 2 else { return out.error("ERR wrong number of arguments for 'slowlog|reset' command") }
            slowlog.reset()
            out.ok()
        default:
            out.error(
                bytes: Array("ERR unknown subcommand '".utf8) + r[1].prefix(128)
                    + Array("'. Try SLOWLOG HELP.".utf8))
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
