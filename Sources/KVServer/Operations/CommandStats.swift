// CommandStats.swift: what the commands cost: the request count, each
// command's calls, time, refusals, failures and latency histogram, the
// error replies by code, and SLOWLOG, recorded by the dispatcher around
// every command; and the figures it publishes for other threads after
// every batch. INFO, LATENCY, SLOWLOG and CONFIG RESETSTAT use them.

/// The commands' statistics. Core loop only, with the dispatcher.
final class CommandStats {
    // `@exclusivity(unchecked)` on what every request touches: one thread
    // (the core loop's), and no access to these is ever open across a call.
    /// How many requests have been executed (refused and queued ones too).
    @exclusivity(unchecked) private(set) var commandsProcessed = 0
    /// Each command's figures (INFO commandstats, latencystats, LATENCY HISTOGRAM).
    let latencies = CommandLatencies(count: Dispatcher.rows.count)
    /// SLOWLOG: what is logged, and the entries.
    @exclusivity(unchecked) var slowlog = Slowlog()
    /// LATENCY LATEST/HISTORY/DOCTOR's events.
    @exclusivity(unchecked) var latencyMonitor = LatencyMonitor()
    /// Redis's `latency-tracking`: per-command histograms are kept.
    var latencyTracking = true
    /// Redis's `latency-tracking-info-percentiles`, as INFO latencystats shows them.
    var latencyPercentiles: [Double] = [50, 99, 99.9]
    /// Error replies by code (`ERR`, `WRONGTYPE`, …), for INFO errorstats.
    private(set) var errors: [String: Int] = [:]
    /// Error replies in all (INFO's `total_error_replies`).
    private(set) var totalErrorReplies = 0
    /// Which commands SLOWLOG skips (EXEC: the commands it ran are logged).
    private let unlogged = Dispatcher.rows.map { $0.flags.contains(.skipSlowlog) }
    /// Redis 7.0's container commands: their figures are kept per
    /// subcommand (`config|get`), as Redis keeps them.
    static let containers: Set<String> = [
        "acl", "client", "cluster", "command", "config", "function", "latency", "memory", "module", "object",
        "pubsub", "script", "slowlog", "xgroup", "xinfo",
    ]
    private let isContainer = Dispatcher.rows.map { CommandStats.containers.contains($0.name) }
    /// Each subcommand's figures, by full name, in the order first run.
    private(set) var subcommands: [(name: String, figures: CommandFigures)] = []
    private var subcommandSlots: [String: Int] = [:]
    /// The figures other threads may read.
    let counters = DispatcherCounters()

    /// A request reached the dispatcher.
    @inline(__always)
    func countRequest() {
        commandsProcessed += 1
    }

    /// Command `command` (its `Command.id`) ran `request` of `session` in
    /// `nanoseconds`; `failed` when its reply was an error.
    @inline(__always)
    func record(
        _ command: Int, _ request: Request, took nanoseconds: UInt64, failed: Bool, by session: ClientSession
    ) {
        if isContainer[command] {
            // A subcommand Redis does not have (an error reply) is not counted, as in Redis.
            if let slot = subcommandSlot(command, request) {
                subcommands[slot].figures.record(nanoseconds, failed: failed, histogram: latencyTracking)
            }
        } else {
            latencies.record(nanoseconds, for: command, failed: failed, histogram: latencyTracking)
        }
        if !unlogged[command] { slowlog.note(request, took: nanoseconds, by: session) }
        latencyMonitor.note(
            nanoseconds: nanoseconds,
            fast: CommandDocs.byName[Dispatcher.rows[command].name]?.flags.contains("fast") ?? false)
    }

    /// The slot of the subcommand `request` runs, made on its first run.
    private func subcommandSlot(_ command: Int, _ request: Request) -> Int? {
        guard request.count > 1 else { return nil }
        let container = Dispatcher.rows[command].name
        let name = container + "|" + String(decoding: lowercased(Array(request.raw(1))), as: UTF8.self)
        if let slot = subcommandSlots[name] { return slot }
        guard CommandDocs.byName[container]?.subcommands.contains(where: { $0.name == name }) == true else {
            return nil
        }
        subcommands.append((name, CommandFigures()))
        subcommandSlots[name] = subcommands.count - 1
        return subcommands.count - 1
    }

    /// Every command's and subcommand's figures, by full name, in name order.
    func allFigures() -> [(name: String, figures: CommandFigures)] {
        (Dispatcher.rows.filter { !isContainer[$0.id] }.map { ($0.name, latencies.figures($0.id)) } + subcommands)
            .sorted { $0.name < $1.name }
    }

    /// Command `command` was refused before it ran (arity, AUTH).
    func recordRejection(_ command: Int) {
        latencies.reject(command)
    }

    /// Counts one error reply with `code` that no writer carries (a
    /// script's refused call, whose error is the script's to raise).
    func countError(code: String) {
        errors[code, default: 0] += 1
        totalErrorReplies += 1
    }

    /// Takes the error codes `out` wrote since the last call.
    @inline(__always)
    func takeErrors(_ out: inout ReplyWriter) {
        guard !out.errorCodes.isEmpty else { return }
        for code in out.errorCodes { errors[String(decoding: code, as: UTF8.self), default: 0] += 1 }
        totalErrorReplies += out.errorCodes.count
        out.errorCodes.removeAll()
    }

    /// CONFIG RESETSTAT: every figure back to zero, as Redis's resetstat
    /// (SLOWLOG's entries stay, as in Redis).
    func reset() {
        latencies.reset()
        subcommands = subcommands.map { ($0.name, CommandFigures()) }
        errors = [:]
        totalErrorReplies = 0
        commandsProcessed = 0
    }

    /// INFO commandstats: Redis 7's lines, for the commands called or refused.
    func commandStatsLines() -> [String] {
        allFigures().compactMap { name, figures in
            guard figures.calls > 0 || figures.rejected > 0 || figures.failed > 0 else { return nil }
            let micros = Int(figures.nanoseconds / 1000)
            let perCall = figures.calls == 0 ? 0 : Double(micros) / Double(figures.calls)
            return "cmdstat_\(name):calls=\(figures.calls),usec=\(micros),usec_per_call=\(fixed(perCall, 2))"
                + ",rejected_calls=\(figures.rejected),failed_calls=\(figures.failed)"
        }
    }

    /// INFO errorstats: one line per error code seen.
    func errorStatsLines() -> [String] {
        errors.sorted { $0.key < $1.key }.map { "errorstat_\($0.key):count=\($0.value)" }
    }

    /// INFO latencystats: Redis 7's lines, the configured percentiles in microseconds.
    func latencyStatsLines() -> [String] {
        allFigures().filter { $0.figures.histogram.count > 0 }.map { name, figures in
            let histogram = figures.histogram
            let points = latencyPercentiles.map { percentile in
                // Redis's "%.3f" of microseconds: nanoseconds are exact thousandths.
                let nanoseconds = histogram.value(at: percentile / 100)
                return
                    "p\(percentileLabel(percentile))=\(nanoseconds / 1000).\(String(nanoseconds % 1000).leftPadded(to: 3))"
            }
            return "latency_percentiles_usec_\(name):" + points.joined(separator: ",")
        }
    }
}

/// A percentile as Redis's "%f" trimmed of trailing zeros (50, 99.9).
func percentileLabel(_ value: Double) -> String {
    var text = fixed(value, 6)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}

/// `value` with `digits` decimals, as C's "%.Nf" prints it.
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard digits > 0 else { return sign + String(whole) }
    return sign + "\(whole)." + String(fraction).leftPadded(to: digits)
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
