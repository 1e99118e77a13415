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
            // Every command and subcommand with data, or those named: a
            // container's name stands for its subcommands (as in Redis).
            let all = stats.allFigures().filter { $0.figures.histogram.count > 0 }
            var chosen: [(name: String, figures: CommandFigures)] = []
            if r.count == 2 {
                chosen = all
            } else {
                for argument in r.dropFirst(2) {
                    let name = String(decoding: lowercased(argument), as: UTF8.self)
                    chosen += all.filter { $0.name == name || $0.name.hasPrefix(name + "|") }
                }
            }
            out.mapHeader(chosen.count)
            for (name, figures) in chosen {
                out.bulk(name)
                histogram(figures.histogram, &out)
            }
        case "latest":
            out.arrayHeader(stats.latencyMonitor.events.count)
            for (name, series) in stats.latencyMonitor.events {
                out.arrayHeader(4)
                out.bulk(name)
                out.integer(series.samples.last?.time ?? 0)
                out.integer(series.samples.last?.latency ?? 0)
                out.integer(series.max)
            }
        case "history":
            let samples = stats.latencyMonitor.series(r[2])?.samples ?? []
            out.arrayHeader(samples.count)
            for sample in samples {
                out.arrayHeader(2)
                out.integer(sample.time)
                out.integer(sample.latency)
            }
        case "reset":
            out.integer(stats.latencyMonitor.reset(r.count == 2 ? nil : Array(r.dropFirst(2))))
        case "doctor":
            out.verbatim(stats.latencyMonitor.report())
        case "graph":
            guard stats.latencyMonitor.series(r[2]) != nil else {
                return out.error(
                    bytes: Array("ERR No samples available for event '".utf8) + ReplyWriter.quoted(r[2]) + [39])
            }
            out.error("ERR kvd does not draw LATENCY GRAPH; LATENCY HISTORY has the samples")
        case "help":
            out.help(
                "LATENCY",
                [
                    "DOCTOR", "    Return a human readable latency analysis report.",
                    "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
                    "HISTORY <event>", "    Return time-latency samples for the <event> class.",
                    "LATEST", "    Return the latest latency samples for all events.",
                    "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
                    "    (default: reset all data for all event classes)",
                    "HISTOGRAM [COMMAND ...]",
                    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
                    "    If no commands are specified then all histograms are replied.",
                ])
        default:
            out.unknownSubcommand(r, of: "LATENCY")
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
            guard r.count <= 3 else { return out.subcommandSyntaxError(r, of: "SLOWLOG") }
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
            out.integer(stats.slowlog.count)
        case "reset":
            stats.slowlog.reset()
            out.ok()
        case "help":
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
            out.unknownSubcommand(r, of: "SLOWLOG")
        }
    }
}
