// CommandStats.swift: what the commands cost: the request count, each
// command's latency histogram and SLOWLOG's candidates, recorded by the
// dispatcher around every command, and the figures it publishes for other
// threads after every batch. INFO, LATENCY and SLOWLOG read them.

/// The commands' statistics. Core loop only, with the dispatcher.
final class CommandStats {
    // `@exclusivity(unchecked)` on what every request touches: one thread
    // (the core loop's), and no access to these is ever open across a call.
    /// How many requests have been executed (refused and queued ones too).
    @exclusivity(unchecked) private(set) var commandsProcessed = 0
    /// Each command's run time, for INFO latencystats and LATENCY HISTOGRAM.
    let latencies = CommandLatencies(count: Dispatcher.rows.count)
    /// SLOWLOG: what is logged, and the entries, newest first.
    @exclusivity(unchecked) var slowlog = Slowlog()
    /// The figures other threads may read.
    let counters = DispatcherCounters()

    /// A request reached the dispatcher.
    @inline(__always)
    func countRequest() {
        commandsProcessed += 1
    }

    /// Command `command` (its `Command.id`) ran `request` of `session` in
    /// `nanoseconds`.
    @inline(__always)
    func record(_ command: Int, _ request: Request, took nanoseconds: UInt64, by session: ClientSession) {
        latencies.record(nanoseconds, for: command)
        slowlog.note(request, took: nanoseconds, by: session)
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
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
