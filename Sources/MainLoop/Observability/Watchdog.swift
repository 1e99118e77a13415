// Watchdog.swift: a thread that notices a loop stuck in one job, while it
// is stuck.
//
// The loop publishes its activity in `LoopActivity.word`: a sequence number
// that grows by one for every job or callback it starts, shifted left, with
// the low bit set while it is inside one. Two relaxed stores per job, no
// syscall, no clock read. The watchdog thread looks every quarter of the
// timeout: a word that is busy and unchanged since it was first seen has
// been stuck that long. It reports a stall once, when it passes the
// timeout, and again only for a later stall (the word must change first).
import CLibevent
import Synchronization

/// What a loop is doing, for its watchdog. Written by the loop thread
/// (relaxed stores), read by the watchdog thread.
final class LoopActivity: Sendable {
    private let word = Atomic<UInt64>(0)
    private let site = Atomic<UInt>(0)
    private let kind = Atomic<UInt8>(0)
    // Loop thread only: the sequence number of the last job begun.
    private let sequence = Atomic<UInt64>(0)

    /// Loop thread: a job or callback starts.
    @inline(__always)
    func begin(site: PostSite, kind: JobKind) {
        let next = sequence.load(ordering: .relaxed) &+ 1
        sequence.store(next, ordering: .relaxed)
        self.site.store(site.bits, ordering: .relaxed)
        self.kind.store(kind.rawValue, ordering: .relaxed)
        word.store(next << 1 | 1, ordering: .releasing)
    }

    /// Loop thread: back in the event loop.
    @inline(__always)
    func end() {
        word.store(sequence.load(ordering: .relaxed) << 1, ordering: .releasing)
    }

    /// Watchdog thread: the word (sequence << 1 | busy).
    func read() -> UInt64 {
        word.load(ordering: .acquiring)
    }

    /// Watchdog thread: what is running (read only for a report).
    func label() -> String {
        jobLabel(
            site: PostSite(bits: site.load(ordering: .relaxed)),
            kind: JobKind(rawValue: kind.load(ordering: .relaxed)) ?? .closure)
    }
}

/// A running watchdog; see ``EventLoop/watchdog(timeout:_:)``.
public final class Watchdog: Sendable {
    private let stopped = Atomic<Bool>(false)

    /// Stops the watchdog thread (it ends within a quarter of its timeout).
    /// It also stops by itself once its loop has stopped.
    public func cancel() {
        stopped.store(true, ordering: .relaxed)
    }

    var isCancelled: Bool { stopped.load(ordering: .relaxed) }
}

extension EventLoop {
    /// Starts a thread that calls `handler` when this loop has been inside
    /// one job, or has not returned to its event loop, for longer than
    /// `timeout`, while that is still the case.
    ///
    /// The handler runs on the watchdog's thread (the loop is stuck), once
    /// per stall: it is called again only after the loop has moved on and
    /// stalled anew. The loop's cost is two relaxed stores per job and no
    /// system call; the watchdog checks every quarter of `timeout`, so
    /// ``StallReport/blockedFor`` is within that of the truth.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` for a timeout under
    ///   1 ms; ``EventLoopError/shutDown`` once the loop has stopped.
    @discardableResult
    public func watchdog(timeout: Duration, _ handler: @escaping @Sendable (StallReport) -> Void) throws -> Watchdog {
        guard timeout >= .milliseconds(1) else {
            throw EventLoopError.invalidArgument("watchdog timeout must be at least 1 ms, got \(timeout)")
        }
        let core = try self.core()
        let activity = try core.activity()
        let dog = Watchdog()
        let limit = timeout.clampedNanoseconds
        let period = Swift.max(limit / 4, 250_000)
        let loop = self
        try startDetachedThread(name: "\(name)-watchdog") {
            var lastWord: UInt64 = 0
            var since: UInt64 = 0
            var reported = false
            while !dog.isCancelled && !loop.hasStopped {
                mainloop_sleep_ns(period)
                let now = mainloop_monotonic_ns()
                let word = activity.read()
                guard word & 1 == 1 else {
                    lastWord = word
                    reported = false
                    continue
                }
                if word != lastWord {
                    lastWord = word
                    since = now
                    reported = false
                } else if !reported && now - since >= limit {
                    reported = true
                    handler(
                        StallReport(label: activity.label(), blockedFor: .nanoseconds(Int64(clamping: now - since))))
                }
            }
        }
        return dog
    }
}
