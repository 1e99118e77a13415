// StressTests.swift: nothing lost under load and under races with stop(),
// cancellation and waiting, checked exactly. Bounded in count and time,
// seeded and reproducible. STRESS=long multiplies the counts by 20 (a run
// of minutes); STRESS=light divides them by 10 (the sanitizer runs).
// STRESS_SEED=n replays a run.
import Glibc
import TestKit
import Testing

@testable import MainLoop

enum Stress {
    static let mode = getenv("STRESS").map { String(cString: $0) } ?? ""
    static func scaled(_ standard: Int) -> Int {
        switch mode {
        case "long": standard * 20
        case "light": max(standard / 10, 1)
        default: standard
        }
    }
    static let seed: UInt64 = getenv("STRESS_SEED").flatMap { UInt64(String(cString: $0)) } ?? 0x5EED
}

/// Counters written only on one loop's thread and read after the loop has
/// stopped (or after a flush): plain memory, ordered by the mailbox's lock.
final class LoopCounters: @unchecked Sendable {
    let values: UnsafeMutablePointer<Int>
    let count: Int
    init(count: Int) {
        self.count = count
        values = .allocate(capacity: count)
        values.initialize(repeating: 0, count: count)
    }
    deinit { values.deallocate() }
    subscript(index: Int) -> Int {
        get { values[index] }
        set { values[index] = newValue }
    }
}

@Suite(.timeLimit(.minutes(20))) struct StressTests {
    @Test func eightProducersEveryPostRunsExactlyOnceInProducerOrder() throws {
        let producers = 8, perProducer = Stress.scaled(250_000)
        try withSpawnedLoop("stress-fifo") { loop in
            let next = LoopCounters(count: producers)  // the next sequence number expected per producer
            let violations = LoopCounters(count: 1)
            let threads = (0..<producers).map { p in
                TestThread {
                    for n in 0..<perProducer {
                        try! loop.post {
                            if next[p] != n { violations[0] += 1 }
                            next[p] = n + 1
                        }
                    }
                }
            }
            threads.join("8 producers posting")
            try loop.postAndWait {}
            #expect(violations[0] == 0)
            #expect((0..<producers).allSatisfy { next[$0] == perProducer })
            #expect(eventually { loop.stats.posted == loop.stats.executed })
        }
    }

    @Test func producersWaitersAndTimersRacingStopLoseNothing() throws {
        var rng = SeededGenerator(state: Stress.seed)
        for _ in 0..<Stress.scaled(40) {
            let loop = try EventLoop.spawn(name: "stress-stop")
            let producers = 4, perProducer = 2_000, waiters = 2
            let ran = LoopCounters(count: producers * perProducer)
            let accepted = Locked<[Int]>([])
            let waiterOutcomes = Locked<[String]>([])
            let timersFired = Locked(0), timersAccepted = Locked(0)
            var threads: [TestThread] = []
            for p in 0..<producers {
                threads.append(
                    TestThread {
                        var mine: [Int] = []
                        for n in 0..<perProducer {
                            let id = p * perProducer + n
                            do {
                                try loop.post { ran[id] += 1 }
                                mine.append(id)
                            } catch {
                                break  // refused: refused from here on, since stop() is terminal
                            }
                        }
                        accepted.withValue { $0 += mine }
                    })
            }
            for _ in 0..<waiters {
                threads.append(
                    TestThread {
                        while true {
                            do {
                                let value = try loop.postAndWait { 7 }
                                if value != 7 { waiterOutcomes.withValue { $0.append("wrong value \(value)") } }
                            } catch EventLoopError.shutDown {
                                waiterOutcomes.withValue { $0.append("shutDown") }
                                return
                            } catch {
                                waiterOutcomes.withValue { $0.append("\(error)") }
                                return
                            }
                        }
                    })
            }
            threads.append(
                TestThread {
                    for _ in 0..<200 {
                        do {
                            try loop.schedule(after: .microseconds(50)) { timersFired.withValue { $0 += 1 } }
                            timersAccepted.withValue { $0 += 1 }
                        } catch { return }
                    }
                })
            var nap = timespec(tv_sec: 0, tv_nsec: Int.random(in: 0...2_000_000, using: &rng))
            nanosleep(&nap, nil)
            loop.stop()
            threads.join("producers, waiters and timer posters racing stop()")
            #expect(eventually { loop.hasStopped })

            let acceptedIDs = Set(accepted.current)
            for id in 0..<(producers * perProducer) {
                let expected = acceptedIDs.contains(id) ? 1 : 0
                if ran[id] != expected {
                    Issue.record("post \(id): accepted=\(expected == 1) but ran \(ran[id]) times")
                    break
                }
            }
            #expect(waiterOutcomes.current == ["shutDown", "shutDown"])
            #expect(timersFired.current <= timersAccepted.current)
        }
    }

    @Test func loopsWaitingOnEachOtherGetDeadlockNeverAHang() throws {
        try withSpawnedLoop("ping") { a in
            try withSpawnedLoop("pong") { b in
                let outcomes = Locked<[String: Int]>([:])
                let deadlockText = "\(EventLoopError.deadlock)"
                // Each thread makes at least `minimum` calls, and goes on (up
                // to `maximum`) until both outcomes were seen: a run where the
                // threads never overlapped proves nothing about detection.
                let minimum = Stress.scaled(2_000), maximum = 200_000
                @Sendable func bothSeen() -> Bool {
                    outcomes.withValue { $0["ok", default: 0] > 0 && $0[deadlockText, default: 0] > 0 }
                }
                func hammer(_ from: EventLoop, _ to: EventLoop) -> TestThread {
                    TestThread {
                        var calls = 0
                        while calls < minimum || (calls < maximum && !bothSeen()) {
                            calls += 1
                            let outcome =
                                (try? from.postAndWait { () -> String in
                                    do {
                                        try to.postAndWait {}
                                        return "ok"
                                    } catch {
                                        return "\(error)"
                                    }
                                }) ?? "outer failed"
                            outcomes.withValue { $0[outcome, default: 0] += 1 }
                        }
                    }
                }
                let threads = [hammer(a, b), hammer(b, a)]
                threads.join(within: .seconds(120), "two loops waiting on each other (a deadlock went undetected)")
                let seen = outcomes.current
                #expect(Set(seen.keys).isSubset(of: ["ok", deadlockText]), "\(seen)")
                #expect(seen["ok", default: 0] > 0, "no call ever succeeded: \(seen)")
                #expect(seen[deadlockText, default: 0] > 0, "no cycle was ever detected: \(seen)")
                #expect(seen.values.reduce(0, +) >= 2 * minimum)
            }
        }
    }

    @Test func cancelRacingATimerNeverLetsItStartAfterCancelReturned() throws {
        var rng = SeededGenerator(state: Stress.seed &+ 1)
        try withSpawnedLoop("cancel-race") { loop in
            let rounds = Stress.scaled(2_000)
            let cancelReturned = Locked(Set<Int>())
            let firings = Locked([Int: Int]())
            let lateStarts = Locked(0)
            for round in 0..<rounds {
                let timer = try loop.schedule(after: .microseconds(Int64.random(in: 0...200, using: &rng))) {
                    if cancelReturned.current.contains(round) { lateStarts.withValue { $0 += 1 } }
                    firings.withValue { $0[round, default: 0] += 1 }
                }
                var nap = timespec(tv_sec: 0, tv_nsec: Int.random(in: 0...200_000, using: &rng))
                nanosleep(&nap, nil)
                timer.cancel()
                cancelReturned.withValue { _ = $0.insert(round) }
            }
            try loop.postAndWait {}
            #expect(lateStarts.current == 0)
            #expect(firings.current.values.allSatisfy { $0 == 1 })
        }
    }

    @Test func watcherCancelledFromAnotherThreadWhileReadableStopsForGood() throws {
        var rng = SeededGenerator(state: Stress.seed &+ 2)
        try withSpawnedLoop("watch-race") { loop in
            for _ in 0..<Stress.scaled(200) {
                var fds: [Int32] = [0, 0]
                #expect(pipe(&fds) == 0)
                var byte: UInt8 = 1
                _ = write(fds[1], &byte, 1)  // readable, and never read: the handler fires every turn
                let cancelled = Locked(false)
                let lateCalls = Locked(0), calls = Locked(0)
                let watch = try loop.watch(fd: fds[0], for: .read) { _ in
                    if cancelled.current { lateCalls.withValue { $0 += 1 } }
                    calls.withValue { $0 += 1 }
                }
                var nap = timespec(tv_sec: 0, tv_nsec: Int.random(in: 0...300_000, using: &rng))
                nanosleep(&nap, nil)
                watch.cancel()
                cancelled.withValue { $0 = true }
                close(fds[0])  // safe now: the handler is not running and never starts again
                close(fds[1])
                try loop.postAndWait {}
                #expect(lateCalls.current == 0)
            }
        }
    }
}
