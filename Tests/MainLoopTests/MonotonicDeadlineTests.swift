// MonotonicDeadlineTests.swift: every timeout is measured on CLOCK_MONOTONIC,
// so a wall-clock change (NTP, an administrator's `date -s`) can neither
// stretch nor shrink it. Shown by reading the deadline source (a deadline
// is CLOCK_MONOTONIC now plus the timeout, nowhere near the wall clock's
// value) and by each timed wait: one that expires never ends before its
// timeout has passed on CLOCK_MONOTONIC (a wait on another clock, handed a
// monotonic deadline, ends at once, since that moment is decades past on
// the wall clock) and does end (bounded: handed a wall-clock deadline, a
// monotonic wait would last decades).
import CLibevent
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// `duration` in nanoseconds (positive durations).
private func nanoseconds(of duration: Duration) -> UInt64 {
    UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
}

@Suite(.timeLimit(.minutes(5))) struct MonotonicDeadlineTests {
    @Test func aTimeoutBecomesCLOCK_MONOTONICNowPlusTheTimeoutNotAWallClockTime() {
        for timeout: Duration in [.milliseconds(1), .seconds(1), .seconds(3_600)] {
            let nanoseconds = nanoseconds(of: timeout)
            let before = now(CLOCK_MONOTONIC)
            let deadline = monotonicDeadline(after: timeout)
            let after = now(CLOCK_MONOTONIC)
            let wall = now(CLOCK_REALTIME)
            #expect(deadline.map { $0 >= before + nanoseconds && $0 <= after + nanoseconds } == true)
            // The wall clock counts from 1970, the monotonic one from boot:
            // a deadline taken from the wall clock would be decades larger.
            #expect(deadline.map { $0 < wall / 2 } == true, "deadline \(String(describing: deadline)), wall \(wall)")
        }
    }

    /// Runs `wait`, which must throw `.timedOut` after `timeout`, on a
    /// thread of its own (a wait on the wrong clock could last decades: the
    /// join is bounded) and checks it did not end early on CLOCK_MONOTONIC.
    private func expectTimesOutOnTheMonotonicClock(
        _ what: String, after timeout: Duration = .milliseconds(30),
        sourceLocation: SourceLocation = #_sourceLocation, _ wait: @escaping @Sendable (Duration) throws -> Void
    ) {
        let elapsed = Locked<UInt64?>(nil), error = Locked<String?>(nil)
        let waiter = TestThread {
            let start = now(CLOCK_MONOTONIC)
            do {
                try wait(timeout)
                error.set("returned instead of timing out")
            } catch EventLoopError.timedOut {
                elapsed.set(now(CLOCK_MONOTONIC) - start)
            } catch let other {
                error.set("threw \(other)")
            }
        }
        waiter.join(within: .seconds(20), "\(what) with a timeout of \(timeout)", sourceLocation: sourceLocation)
        #expect(error.current == nil, "\(what): \(error.current ?? "")", sourceLocation: sourceLocation)
        let bound = nanoseconds(of: timeout)
        if let elapsed = elapsed.current {
            #expect(
                elapsed >= bound, "\(what) timed out after \(elapsed) ns of a \(bound) ns timeout",
                sourceLocation: sourceLocation)
        }
    }

    @Test func everyTimedWaitLastsItsTimeoutOnTheMonotonicClock() throws {
        let loop = try EventLoop.spawn(name: "monotonic", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let gate = try Gate.occupy(loop)
        try loop.tryPost {}  // the mailbox is full, and the loop busy
        let bound = LoopBound(0, on: loop)
        expectTimesOutOnTheMonotonicClock("postAndWait(timeout:)") { try loop.postAndWait(timeout: $0) {} }
        expectTimesOutOnTheMonotonicClock("post(timeout:)") { try loop.post(timeout: $0) {} }
        expectTimesOutOnTheMonotonicClock("LoopBound.postAndWait(timeout:)") {
            try bound.postAndWait(timeout: $0) { _ in }
        }
        expectTimesOutOnTheMonotonicClock("LoopBound.post(timeout:)") { try bound.post(timeout: $0) { _ in } }
        expectTimesOutOnTheMonotonicClock("join(timeout:)") { try loop.join(timeout: $0) }
        gate.open()
    }
}
