// TimerQueueTests.swift: the loop's own timer heap and its timerfd
// (Events/TimerQueue.swift): order, removal from the middle of the heap,
// a pass that cannot starve the loop, and no timer system call per turn.
import CLibevent
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(2))) struct TimerQueueTests {
    @Test func timersWithTheSameDelayRunInTheOrderTheyWereScheduled() throws {
        try withSpawnedLoop("same-delay") { loop in
            // 300 with one deadline to the nanosecond (the clock read once
            // for all), so that only the order they were added in can
            // decide; then 100 from this test's thread, each call after the last.
            let order = Locked<[Int]>([])
            let now = mainloop_monotonic_ns()
            for index in 0..<300 {
                _ = try LoopEvent.startTimer(
                    on: loop, after: .milliseconds(5), every: nil,
                    handler: { order.withValue { $0.append(index) } }, onEnd: nil, now: now)
            }
            for index in 300..<400 {
                try loop.schedule(after: .milliseconds(5)) { order.withValue { $0.append(index) } }
            }
            #expect(eventually { order.current.count == 400 })
            #expect(order.current == Array(0..<400))
        }
    }

    @Test func cancellingHalfOfManyTimersFiresExactlyTheOthersOnceEach() throws {
        try withSpawnedLoop("cancel-half") { loop in
            // Deadlines in a scrambled order, cancelled from this thread in
            // another scrambled order while the earliest may already fire:
            // every cancel takes a timer out of the middle of the heap, and
            // the heap must stay ordered, each timer knowing its place.
            let count = 600
            let fired = Locked<[Int]>(Array(repeating: 0, count: count))
            let queue = try loop.core().timers
            var timers: [Scheduled] = []
            for index in 0..<count {
                let delay = Duration.microseconds(20_000 + (index * 7_919) % 100_000)
                timers.append(try loop.schedule(after: delay) { fired.withValue { $0[index] += 1 } })
            }
            #expect(queue.isConsistent)
            var cancelled = Set<Int>()
            var consistent = true
            for step in 0..<count / 2 {
                let index = (step * 389 + 11) % count
                timers[index].cancel()
                // Cancelled before it fired, or fired just before the cancel.
                if fired.current[index] == 0 { cancelled.insert(index) }
                consistent = consistent && queue.isConsistent
            }
            #expect(consistent, "the heap lost its order after a cancel")
            #expect(!cancelled.isEmpty, "no cancel came before its deadline")
            let expected = (0..<count).filter { !cancelled.contains($0) }
            #expect(eventually { expected.allSatisfy { fired.current[$0] == 1 } })
            // The heap empty: a cancelled timer is not in it, so it can never fire.
            #expect(eventually { queue.count == 0 })
            #expect(fired.current.enumerated().filter { cancelled.contains($0.offset) }.allSatisfy { $0.element == 0 })
            #expect(fired.current.allSatisfy { $0 <= 1 })
            #expect(try loop.postAndWait { try loop.core().timers.count } == 0)
        }
    }

    @Test func aTimerThatReschedulesItselfWithNoDelayDoesNotStarvePostsOrIO() throws {
        try withSpawnedLoop("self-rescheduling") { loop in
            // Each run schedules the next, due at once: counted from a clock
            // reading taken before the pass, as a clock that did not move
            // would give. If a pass ran a timer added during the pass, it
            // would never end, and neither the post nor the watched pipe
            // below would get a turn.
            let runs = Locked(0)
            let stop = Locked(false)
            let start = mainloop_monotonic_ns()
            @Sendable func again() {
                runs.withValue { $0 += 1 }
                guard !stop.current else { return }
                _ = try? LoopEvent.startTimer(
                    on: loop, after: .zero, every: nil, handler: { again() }, onEnd: nil, now: start)
            }
            try loop.schedule(after: .zero) { again() }
            #expect(eventually { runs.current > 100 })
            let posted = Locked(false)
            try loop.post { posted.withValue { $0 = true } }
            #expect(eventually(within: .seconds(5)) { posted.current })
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let readable = Locked(false)
            let watch = try loop.watch(fd: fds[0], for: .read) { _ in readable.withValue { $0 = true } }
            defer { watch.cancel() }
            var byte: UInt8 = 1
            #expect(write(fds[1], &byte, 1) == 1)
            #expect(eventually(within: .seconds(5)) { readable.current })
            stop.withValue { $0 = true }
        }
    }

    @Test func aLoopTurnMakesNoTimerSystemCall() throws {
        try withSpawnedLoop("no-arming-per-turn") { loop in
            // A timer far out, then many turns of the loop (each round trip
            // wakes it and lets it sleep again): the timerfd is set when the
            // timer is added and never again (libevent's precise timer set
            // it on every turn).
            let timers = try loop.core().timers
            let before = timers.armings
            let far = try loop.schedule(after: .seconds(3_600)) {}
            defer { far.cancel() }
            #expect(timers.armings == before + 1)
            for _ in 0..<2_000 { try loop.postAndWait {} }
            #expect(timers.armings == before + 1)
            // A nearer timer sets it once more, its firing once more for
            // the far one; a later timer than the armed one does not.
            let fired = Locked(false)
            try loop.schedule(after: .milliseconds(2)) { fired.withValue { $0 = true } }
            let later = try loop.schedule(after: .seconds(7_200)) {}
            defer { later.cancel() }
            #expect(eventually { fired.current })
            #expect(eventually { timers.armings == before + 3 })
            for _ in 0..<2_000 { try loop.postAndWait {} }
            #expect(timers.armings == before + 3)
            // Due at once, from a job on the loop's thread: not inside the job.
            let ranInside = try loop.postAndWait { () -> Bool in
                let ran = Locked(false)
                _ = try? loop.schedule(after: .zero) { ran.set(true) }
                return ran.current
            }
            #expect(!ranInside, "a zero delay ran inside the job that scheduled it")
            // Activated, not set.
            let atOnce = Locked(0)
            let reads = timers.reads
            for _ in 0..<100 {
                try loop.postAndWait { _ = try? loop.schedule(after: .zero) { atOnce.withValue { $0 += 1 } } }
            }
            #expect(eventually { atOnce.current == 100 })
            #expect(timers.armings == before + 3)
            #expect(timers.reads == reads, "an activated pass read the timerfd")
        }
    }

    @Test func aLoopOpensOneTimerfdItsTimersShareAndLibeventNone() throws {
        // In a child process, where no other test's loops come and go.
        let (exit, output) = try runHelper("timerfds")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(output.contains("running=3 with_timers=3"), "\(output)")
        #expect(output.hasSuffix("OK\n"), "\(output)")
    }

    @Test func aPeriodicTimerRunsOnceAfterAStallNotOnceForEachPeriodMissed() throws {
        try withSpawnedLoop("stall") { loop in
            let interval = Duration.milliseconds(5)
            let runs = Locked<[Duration]>([])
            let timer = try loop.schedule(every: interval) { runs.withValue { $0.append(monotonicNow()) } }
            defer { timer.cancel() }
            #expect(eventually { runs.current.count >= 3 })
            // Twenty periods in one job.
            let stallEnd = try loop.postAndWait { () -> Duration in
                sleep(milliseconds: 100)
                return monotonicNow()
            }
            // Wait until the window below has passed.
            #expect(eventually { runs.current.contains { $0 >= stallEnd + interval * 5 } })
            // One run at once for the missed periods, then one an interval
            // after another: the k-th after the stall is at least k - 1
            // intervals after its end, so at most 5 in the first 4.5
            // intervals (a slow machine gives fewer); one run for each of
            // the 20 periods missed would give about 20.
            let window = runs.current.filter { $0 >= stallEnd && $0 < stallEnd + interval * 4.5 }
            #expect(window.count <= 5, "runs after the stall: \(window.map { $0 - stallEnd })")
        }
    }

    @Test func aTimerCancelledFromAnotherLoopRunInsideItsHandlerDoesNotWaitForItself() throws {
        try withSpawnedLoop("outer") { outer in
            // The handler runs a second loop on the outer loop's thread, and
            // a job there cancels the handler's own timer: the same thread,
            // though that thread's current loop is now the inner one.
            let inner = try EventLoop(name: "inner")
            let cancelled = Locked(false)
            let scheduled = Locked<Scheduled?>(nil)
            let timer = try outer.schedule(after: .milliseconds(50)) {
                // The handle, once this test's thread has stored it (bounded).
                #expect(eventually(within: .seconds(5)) { scheduled.current != nil })
                try? inner.post {
                    cancelled.set(scheduled.current != nil)
                    scheduled.current?.cancel()
                    inner.stop()
                }
                try? inner.run()
            }
            scheduled.set(timer)
            #expect(eventually(within: .seconds(5)) { cancelled.current })
            #expect(!timer.isPending)
        }
    }
}
