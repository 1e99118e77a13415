// JobMonitor.swift: what the loop does around a job when somebody watches:
// the latency sample, the slow-job check, and the activity word the
// watchdog reads. Owned by LoopCore; its handlers are set by posts to the
// loop, so every field but `activity`'s atomics is loop-thread only.
import CLibevent

final class JobMonitor: @unchecked Sendable {
    // `@unchecked Sendable`: loop-thread only, but for `activity` (atomics)
    // and `recorder` (its own lock).
    // `@exclusivity(unchecked)` on the loop-thread fields, read around
    // every job that is watched: no access to them overlaps another.
    let recorder: LatencyRecorder?
    @exclusivity(unchecked) private(set) var slowJob: (threshold: UInt64, handler: @Sendable (SlowJobReport) -> Void)?
    @exclusivity(unchecked) private(set) var activity: LoopActivity?

    init(latencyStats: Bool) {
        recorder = latencyStats ? LatencyRecorder() : nil
    }

    /// Loop thread (see `LoopCore.watchEveryJob`, which also has every job
    /// sent through `run(_:site:acceptedAt:)` from then on).
    func setSlowJobHandler(threshold: UInt64, _ handler: @escaping @Sendable (SlowJobReport) -> Void) {
        slowJob = (threshold, handler)
    }

    /// Loop thread, likewise.
    func attach(_ activity: LoopActivity) {
        self.activity = activity
    }

    /// Loop thread: runs `job`, measuring what is asked for. `acceptedAt`
    /// is set for a sampled job (its queue delay is recorded).
    func run(_ job: UnsafeMutablePointer<Job>, site: PostSite, acceptedAt: UInt64?) {
        let kind = job.pointee.kind
        activity?.begin(site: site, kind: kind)
        let start = mainloop_monotonic_ns()
        Job.run(job)
        let end = mainloop_monotonic_ns()
        let ran = end &- start
        if let recorder, acceptedAt != nil || slowJob != nil {
            recorder.record(queueDelay: acceptedAt.map { start &- Swift.min($0, start) }, runTime: ran)
        }
        if let slowJob, ran > slowJob.threshold {
            slowJob.handler(
                SlowJobReport(
                    label: jobLabel(site: site, kind: kind),
                    runTime: .nanoseconds(Int64(clamping: ran))))
        }
    }

    /// Loop thread: a libevent callback (timer, watch, signal) starts; the
    /// watchdog sees it as busy until `end`.
    @inline(__always)
    func beginCallback(_ kind: JobKind) {
        activity?.begin(site: .none, kind: kind)
    }

    /// Loop thread: back to the event loop (a batch or a callback ended).
    @inline(__always)
    func end() {
        activity?.end()
        recorder?.flush()
    }
}
