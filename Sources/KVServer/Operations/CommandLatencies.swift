// CommandLatencies.swift: a latency histogram per command, recorded by the
// dispatcher once per command, read by INFO latencystats and LATENCY
// HISTOGRAM.
import MainLoop

/// One latency histogram per command row (`Command.id`), in storage of its
/// own: recording one costs no exclusivity check and no copy-on-write test
/// (it runs once per command). Core loop only, with the dispatcher.
final class CommandLatencies {
    private let histograms: UnsafeMutablePointer<LatencyHistogram>
    let count: Int

    init(count: Int) {
        self.count = count
        histograms = .allocate(capacity: count)
        histograms.initialize(repeating: LatencyHistogram(), count: count)
    }

    deinit {
        histograms.deinitialize(count: count)
        histograms.deallocate()
    }

    @inline(__always)
    func record(_ nanoseconds: UInt64, for command: Int) {
        histograms[command].record(nanoseconds)
    }

    subscript(command: Int) -> LatencyHistogram { histograms[command] }
}
