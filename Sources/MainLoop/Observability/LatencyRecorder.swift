// LatencyRecorder.swift: a loop's two histograms, queue delay and run time.
//
// Which jobs are measured: the mailbox stamps about one post in 300 with the
// time it was accepted, as it queues it (`Mailbox.samplingInterval`); the loop
// reads the clock when that job starts and when it ends. When every job is
// timed anyway (a slow-job handler is installed), every job's run time is
// recorded; queue delay stays sampled. Samples are
// buffered on the loop thread and merged once per batch under `lock`, which
// readers (`stats`, any thread) take too.

final class LatencyRecorder: @unchecked Sendable {
    // `@unchecked Sendable`: the histograms are guarded by `lock`; the
    // buffers are loop-thread only.
    private let lock = Lock()
    private var queueDelay = LatencyHistogram()
    private var runTime = LatencyHistogram()
    /// The summaries as of the last change (guarded by `lock`): `stats` is
    /// cheap to call often, whatever the histograms' size.
    private var cached: (queueDelay: LatencySummary, runTime: LatencySummary)?
    // `@exclusivity(unchecked)`: loop-thread only, and no access to either
    // overlaps another; the runtime's check cost about 4 instructions a
    // post, spread over the sampled ones (a third of what the figures cost).
    @exclusivity(unchecked) private var bufferedQueueDelays: [UInt64] = []
    @exclusivity(unchecked) private var bufferedRunTimes: [UInt64] = []

    /// Child of fork() only, for a loop left behind in the parent.
    func remakeLockInForkedChild() { lock.remakeInForkedChild() }

    /// Loop thread: one job's figures (queue delay only for a sampled job).
    @inline(__always)
    func record(queueDelay: UInt64?, runTime: UInt64) {
        if let queueDelay { bufferedQueueDelays.append(queueDelay) }
        bufferedRunTimes.append(runTime)
    }

    /// Loop thread, after a batch: merges what it buffered.
    func flush() {
        guard !bufferedRunTimes.isEmpty || !bufferedQueueDelays.isEmpty else { return }
        lock.withLock {
            for value in bufferedQueueDelays { queueDelay.record(value) }
            for value in bufferedRunTimes { runTime.record(value) }
            cached = nil
        }
        bufferedQueueDelays.removeAll(keepingCapacity: true)
        bufferedRunTimes.removeAll(keepingCapacity: true)
    }

    /// Any thread.
    func summaries() -> (queueDelay: LatencySummary, runTime: LatencySummary) {
        lock.withLock {
            if let cached { return cached }
            let fresh = (queueDelay.summary, runTime.summary)
            cached = fresh
            return fresh
        }
    }

    /// Any thread: forgets every measurement.
    func reset() {
        lock.withLock {
            queueDelay.reset()
            runTime.reset()
            cached = nil
        }
    }
}
