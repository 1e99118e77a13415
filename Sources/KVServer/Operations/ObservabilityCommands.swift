// ObservabilityCommands.swift: LATENCY and SLOWLOG, how kvd shows its
// latency the Redis way: LATENCY HISTOGRAM from a histogram per command
// (MainLoop's LatencyHistogram, fed by one clock read per command, see
// CommandStats), and SLOWLOG's entries (Slowlog).
import MainLoop

let observabilityCommands: [Command] = [
    Command("latency", arity: -2, keys: .none) { $0.latency($2, &$3) },
    Command("slowlog", arity: -2, keys: .none) { $0.slowlog($2, &$3) },
]

extension Dispatcher {
    // MARK: - LATENCY

    fileprivate func latency(_ r: Request, _ out: inout ReplyWriter) {
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "histogram":
            var chosen: [Command] = []
            if r.count == 2 {
                chosen = Dispatcher.rows.filter { stats.latencies[$0.id].count > 0 }
            } else {
                for name in r.dropFirst(2) {
                    if let command = Dispatcher.command(named: name), stats.latencies[command.id].count > 0,
                        !chosen.contains(where: { $0.id == command.id })
                    {
                        chosen.append(command)
                    }
                }
            }
            out.mapHeader(chosen.count)
            for command in chosen {
                out.bulk(command.name)
                histogram(stats.latencies[command.id], &out)
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
            let entries = stats.slowlog.newest(count)
            out.arrayHeader(Swift.min(count, stats.slowlog.count))
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
            out.integer(stats.slowlog.count)
        case "reset":
            guard r.count == 2 else { return out.error("ERR wrong number of arguments for 'slowlog|reset' command") }
            stats.slowlog.reset()
            out.ok()
        case "help" where r.count == 2:
            out.help(
                "SLOWLOG",
                [
                    "GET [<count>]",
                    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                    "    Entries are made of:",
                    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                    "    client name",
                    "LEN", "    Return the length of the slowlog.",
                    "RESET", "    Reset the slowlog.",
                ])
        default:
            out.error(
                bytes: Array("ERR unknown subcommand '".utf8) + r[1].prefix(128)
                    + Array("'. Try SLOWLOG HELP.".utf8))
        }
    }
}
