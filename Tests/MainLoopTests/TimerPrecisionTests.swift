// TimerPrecisionTests.swift: timers never fire early, checked where a
// coarse clock would make them: many short timers at once, and a periodic
// one.
//
// The loop's timers (TimerQueue) count on CLOCK_MONOTONIC. libevent's own
// timers counted on CLOCK_MONOTONIC_COARSE unless the base had its precise
// timer: that clock lags CLOCK_MONOTONIC by up to 4 ms here, a deadline
// counted from it passes before the precise one, and with the flag dropped
// most of the staggered timers below fired early (up to 1.5 ms). A queue
// that read such a clock, or rounded a delay down, fails them the same way.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(2))) struct TimerPrecisionTests {
    @Test func staggeredOneShotTimersNeverFireEarly() throws {
        try withSpawnedLoop("not-early") { loop in
            // Five rounds of delays from 0.25 ms to 10 ms, each timed from
            // before its schedule call. Each firing wakes the loop, and the
            // loop then checks every other timer against its clock.
            let delays = (0..<200).map { Duration.microseconds(250 * ($0 % 40 + 1)) }
            let late = Locked<[Duration?]>(Array(repeating: nil, count: delays.count))
            for round in 0..<5 {
                for index in (40 * round)..<(40 * round + 40) {
                    let (start, delay) = (monotonicNow(), delays[index])
                    try loop.schedule(after: delay) {
                        let elapsed = monotonicNow() - start
                        late.withValue { $0[index] = elapsed - delay }
                    }
                }
                #expect(eventually { late.current[(40 * round)..<(40 * round + 40)].allSatisfy { $0 != nil } })
            }
            let early = late.current.enumerated().filter { ($0.element ?? .zero) < .zero }
            #expect(early.isEmpty, "fired early: \(early.map { "\(delays[$0.offset]) by \(.zero - $0.element!)" })")
        }
    }

    @Test func periodicTimerFiresNoEarlierThanEachOfItsPeriods() throws {
        try withSpawnedLoop("periodic") { loop in
            // Another timer wakes the loop every 250 us, so that the loop
            // checks the periodic one against its clock far more often than
            // that one's own deadlines would.
            let waker = try loop.schedule(every: .microseconds(250)) {}
            defer { waker.cancel() }
            let period = Duration.microseconds(2_700)
            let firings = Locked<[Duration]>([])
            let start = monotonicNow()
            let timer = try loop.schedule(every: period) { firings.withValue { $0.append(monotonicNow() - start) } }
            #expect(eventually { firings.current.count >= 30 })
            timer.cancel()
            // The k-th firing (from 1) is due k periods after the schedule call.
            let early = firings.current.enumerated().filter { $0.element < period * ($0.offset + 1) }
            #expect(early.isEmpty, "early firings (number, at): \(early.map { ($0.offset + 1, $0.element) })")
        }
    }
}
