// CommandLatencies.swift: each command's figures: calls, time, refusals,
// failures and a latency histogram, recorded by the dispatcher once per
// command, read by INFO commandstats and latencystats and LATENCY HISTOGRAM.
import MainLoop

/// One command's figures.
struct CommandFigures {
    var histogram = LatencyHistogram()
    var calls = 0
    var nanoseconds: UInt64 = 0
    /// Refused before running (arity, AUTH): Redis's `rejected_calls`.
    var rejected = 0
    /// Ran and answered an error: Redis's `failed_calls`.
    var failed = 0

    @inline(__always)
    mutating func record(_ nanoseconds: UInt64, failed: Bool, histogram: Bool) {
        if histogram { self.histogram.record(nanoseconds) }
        calls += 1
        self.nanoseconds &+= nanoseconds
        if failed { self.failed += 1 }
    }
}

/// The figures of every command row (`Command.id`), in storage of its
/// own: recording costs no exclusivity check and no copy-on-write test
/// (it runs once per command). Core loop only, with the dispatcher.
final class CommandLatencies {
    private let figures: UnsafeMutablePointer<CommandFigures>
    let count: Int

    init(count: Int) {
        self.count = count
        figures = .allocate(capacity: count)
        figures.initialize(repeating: CommandFigures(), count: count)
    }

    deinit {
        figures.deinitialize(count: count)
        figures.deallocate()
    }

    @inline(__always)
    func record(_ nanoseconds: UInt64, for command: Int, failed: Bool, histogram: Bool) {
        figures[command].record(nanoseconds, failed: failed, histogram: histogram)
    }

    func reject(_ command: Int) {
        figures[command].rejected += 1
    }

    func reset() {
        for index in 0..<count { figures[index] = CommandFigures() }
    }

    func figures(_ command: Int) -> CommandFigures { figures[command] }
}
