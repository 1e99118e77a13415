// ObservabilityTests.swift: what a loop tells about itself: queue-delay and
// run-time histograms, slow jobs by name, stalls by name while they last,
// and the urgent lane that overtakes a full mailbox.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(3))) struct ObservabilityTests {
    // MARK: - Latency figures

    @Test func theHistogramIsWithinItsRelativeErrorOverEveryScale() {
        var histogram = LatencyHistogram()
        var value: UInt64 = 1
        while value < 1 << 42 {
            histogram.reset()
            histogram.record(value)
            let reported = histogram.value(at: 0.5)
            #expect(reported >= value, "\(value) reported as \(reported)")
            #expect(Double(reported - value) <= Double(value) / 64, "\(value) reported as \(reported)")
            value = value * 3 / 2 + 1
        }
        histogram.reset()
        for value in 1...1000 as ClosedRange<UInt64> { histogram.record(value * 1000) }
        #expect(histogram.summary.count == 1000)
        let p99 = histogram.value(at: 0.99)
        #expect(p99 >= 990_000 && p99 <= 990_000 + 990_000 / 64)
    }

    // The documented rates: every 256th post through a bounded mailbox;
    // through an unbounded one's lane, three in each block of 1,023 jobs.
    // Counted on a loop whose posts all run before the figures are read, so
    // every sample taken is published (the figures go out when a batch ends).
    @Test(arguments: [100_000, nil] as [Int?])
    func oneJobInTheDocumentedNumberIsSampled(capacity: Int?) throws {
        let loop = try EventLoop.spawn(name: "rate", mailboxCapacity: capacity)
        defer { stopAndWait(loop) }
        let posts = 10_230
        let done = Locked(0)
        for _ in 0..<posts { try loop.post { done.withValue { $0 += 1 } } }
        #expect(eventually { done.current == posts })
        try loop.postAndWait {}
        try loop.postAndWait {}
        let stats = loop.stats
        // Every post the loop took counts, the round trips' too: the last
        // one's sample, if it is one, may not be published yet.
        let taken = Int(stats.posted)
        let expected = capacity == nil ? taken / 1023 * 3 + min(taken % 1023 / 256, 3) : taken / 256
        #expect(
            (expected - 1...expected).contains(stats.queueDelay.count),
            "\(stats.queueDelay.count) samples of \(taken) posts")
    }

    @Test func queueDelayAndRunTimeAreMeasuredAndResetZeroesThem() throws {
        try withSpawnedLoop("latency") { loop in
            let gate = try Gate.occupy(loop)
            // 4,096 posts wait behind the gate for 30 ms or more: the
            // sampled ones (about one in 300) say so. Compared with the wait
            // measured here (from the last post to the gate's opening), not
            // with the nap's length.
            let done = Locked(0)
            for _ in 0..<4_096 { try loop.post { done.withValue { $0 += 1 } } }
            let clock = ContinuousClock()
            let queued = clock.now
            sleep(milliseconds: 30)
            let waited = clock.now - queued
            gate.open()
            #expect(eventually { done.current == 4_096 })
            // Jobs that each run 1 ms, enough of them (two sampling
            // intervals) that one is sampled: its run time says so.
            for _ in 0..<520 { try loop.post { usleep(1000) } }
            // Figures are published when a batch ends: a second round trip
            // lands in a later batch than the jobs above.
            try loop.postAndWait {}
            try loop.postAndWait {}
            let stats = loop.stats
            #expect(stats.queueDelay.count >= 10, "\(stats.queueDelay)")
            #expect(stats.queueDelay.max >= waited, "waited \(waited): \(stats.queueDelay)")
            #expect(stats.runTime.max >= .milliseconds(1), "\(stats.runTime)")
            #expect(stats.runTime.count == stats.queueDelay.count)
            #expect(stats.queueDelay.buckets.reduce(0) { $0 + $1.count } == stats.queueDelay.count)
            loop.resetStats()
            #expect(loop.stats.queueDelay == .empty && loop.stats.runTime == .empty)
            #expect(loop.stats.posted == stats.posted)  // the counters are kept
        }
    }

    @Test func aLoopWithoutLatencyStatsMeasuresNothing() throws {
        let loop = try EventLoop.spawn(name: "no-latency", latencyStats: false)
        defer { stopAndWait(loop) }
        for _ in 0..<1000 { try loop.post {} }
        try loop.postAndWait {}
        #expect(loop.stats.queueDelay == .empty && loop.stats.runTime == .empty)
        // spawn's own post, 1000, the postAndWait; counted once their batch ends.
        #expect(eventually { loop.stats.executed == 1002 })
    }

    // MARK: - Slow jobs

    @Test func aSlowJobIsReportedOnceWithThePostersFileAndLine() throws {
        try withSpawnedLoop("slow") { loop in
            let reports = Locked<[SlowJobReport]>([])
            let reportThreads = Locked<Set<Bool>>([])
            // Wall-clock lines: scaled under a sanitizer (see sanitizerFactor).
            let threshold = Duration.milliseconds(20).scaledForSanitizers
            try loop.onSlowJob(threshold: threshold) { report in
                reports.withValue { $0.append(report) }
                reportThreads.withValue { _ = $0.insert(loop.inLoop) }
            }
            // The quick jobs time themselves: one preempted past the line by
            // a loaded machine may be reported, and only then.
            let longestQuick = Locked(Duration.zero)
            let quick: @Sendable () -> Void = {
                let clock = ContinuousClock()
                let start = clock.now
                longestQuick.withValue { $0 = max($0, clock.now - start) }
            }
            try loop.post(quick)  // fast: not reported
            let line = #line + 1
            try loop.post { usleep(UInt32(50_000 * sanitizerFactor)) }
            try loop.postAndWait(quick)
            try loop.postAndWait(quick)
            let label = "MainLoopTests/ObservabilityTests.swift:\(line)"
            let got = reports.current.filter { $0.label == label }
            #expect(got.count == 1, "\(reports.current)")
            #expect(
                reports.current.count == 1 || longestQuick.current >= threshold,
                "a quick job was reported: \(reports.current)")
            #expect((got.first?.runTime ?? .zero) >= .milliseconds(50 * sanitizerFactor))
            #expect(reportThreads.current == [true])  // called on the loop thread
            // With a handler installed every job is timed: run time counts them all.
            #expect(loop.stats.runTime.count >= 3)
        }
    }

    // An actor pinned to a named executor, and a task that prefers one, are
    // named in slow-job and stall reports; the plain executor's jobs say
    // what they are.
    @Test func jobsOfANamedExecutorCarryItsNameIntoReports() async throws {
        try await withSpawnedLoopAsync("named") { loop in
            let reports = Locked<[SlowJobReport]>([])
            let stalls = Locked<[StallReport]>([])
            // Wall-clock lines: scaled under a sanitizer (see sanitizerFactor).
            let factor = sanitizerFactor
            try loop.onSlowJob(threshold: .milliseconds(20 * factor)) { report in
                reports.withValue { $0.append(report) }
            }
            let dog = try loop.watchdog(timeout: .milliseconds(40 * factor)) { report in
                stalls.withValue { $0.append(report) }
            }
            defer { dog.cancel() }
            let store = NamedStore(loop: loop)
            #expect(await store.runsOnTheLoop())
            // Blocks until the watchdog has reported it (a condition, not a
            // length: a starved watchdog thread once missed a 150 ms stall),
            // so it is also longer than the slow-job line.
            await store.block(until: { !stalls.current.isEmpty })
            await Task(executorPreference: loop.executor(named: "import")) { _ = usleep(UInt32(50_000 * factor)) }.value
            await Task(executorPreference: loop.executor) { _ = usleep(UInt32(50_000 * factor)) }.value
            try loop.postAndWait {}
            let labels = reports.current.map(\.label)
            #expect(labels == ["NamedStore", "import", "a Swift concurrency job"], "\(labels)")
            #expect(stalls.current.first?.label == "NamedStore", "\(stalls.current)")
            #expect(loop.executor(named: "NamedStore") === loop.executor(named: "NamedStore"))
            #expect(loop.executor(named: "import").name == "import" && loop.executor.name == nil)
        }
    }

    // MARK: - Watchdog

    // "Only once" is checked against a witness, not a sleep: a second
    // watchdog with four times the timeout reports the same stall only once
    // it has lasted that long, by which time the first one has looked at it
    // a dozen more times (every quarter of its timeout).
    @Test func aBlockedJobIsReportedWhileItBlocksOncePerStall() throws {
        try withSpawnedLoop("stalls") { loop in
            let timeout = Duration.milliseconds(40).scaledForSanitizers
            let reports = Locked<[StallReport]>([]), witnessed = Locked(0)
            let dog = try loop.watchdog(timeout: timeout) { report in reports.withValue { $0.append(report) } }
            defer { dog.cancel() }
            let witness = try loop.watchdog(timeout: timeout * 4) { _ in witnessed.withValue { $0 += 1 } }
            defer { witness.cancel() }
            try loop.postAndWait {}  // the watchdog's activity is attached
            let release = Locked(false)
            let line = #line + 1
            try loop.post { while !release.current { usleep(1000) } }
            // Reported while it is still blocked, and only once.
            #expect(eventually(within: .seconds(5)) { reports.current.count == 1 })
            #expect(eventually(within: .seconds(5)) { witnessed.current == 1 })
            #expect(reports.current.count == 1)
            #expect(reports.current.first?.label == "MainLoopTests/ObservabilityTests.swift:\(line)")
            #expect((reports.current.first?.blockedFor ?? .zero) >= timeout)
            release.set(true)
            // Quick jobs do not stall; a timer that blocks is a new stall.
            for _ in 0..<100 { try loop.post {} }
            let released = Locked(false)
            try loop.schedule(after: .milliseconds(1)) { while !released.current { usleep(1000) } }
            #expect(eventually(within: .seconds(5)) { reports.current.count == 2 })
            #expect(reports.current.last?.label == "a timer callback")
            #expect(eventually(within: .seconds(5)) { witnessed.current == 2 })
            #expect(reports.current.count == 2)
            released.set(true)
            try loop.postAndWait {}
        }
    }

    // MARK: - Urgent lane

    @Test func urgentPostsOvertakeAFullMailboxOf100kPostsInFIFOOrder() throws {
        let loop = try EventLoop.spawn(name: "urgent", mailboxCapacity: 100_000)
        defer { stopAndWait(loop) }
        let order = Locked<[Int]>([])
        order.withValue { $0.reserveCapacity(100_010) }
        let gate = try Gate.occupy(loop)
        for i in 0..<100_000 { try loop.post { order.withValue { $0.append(i) } } }
        #expect(throws: EventLoopError.full) { try loop.tryPost {} }
        for u in 1...3 { try loop.postUrgent { order.withValue { $0.append(-u) } } }
        gate.open()
        #expect(eventually { order.current.count == 100_003 })
        #expect(order.current == [-1, -2, -3] + Array(0..<100_000))
        loop.stop()
        #expect(throws: EventLoopError.shutDown) { try loop.postUrgent {} }
    }

    @Test func anUrgentPostRunsBeforeTheRestOfTheCurrentBatch() throws {
        try withSpawnedLoop("urgent-batch") { loop in
            let order = Locked<[Int]>([])
            let gate = try Gate.occupy(loop)
            for i in 0..<10 {
                try loop.post {
                    order.withValue { $0.append(i) }
                    if i == 3 { try? loop.postUrgent { order.withValue { $0.append(100) } } }
                }
            }
            // Posted before the gate opens, so ahead of every pending job:
            // an urgent post through a LoopBound runs before 0...9.
            let bound = LoopBound(0, on: loop)
            try bound.postUrgent { _ in order.withValue { $0.append(200) } }
            gate.open()
            try loop.postAndWait {}
            // 100 runs right after 3, before 4...9 of the same batch.
            #expect(order.current == [200, 0, 1, 2, 3, 100, 4, 5, 6, 7, 8, 9])
        }
    }

    @Test func aFloodOfUrgentPostsDoesNotStarveTimers() throws {
        try withSpawnedLoop("urgent-flood") { loop in
            let stop = Locked(false)
            let flooder = TestThread {
                while !stop.current { try? loop.postUrgent {} }
            }
            let fired = Locked(false)
            try loop.schedule(after: .milliseconds(10)) { fired.set(true) }
            #expect(eventually(within: .seconds(5)) { fired.current })
            stop.set(true)
            flooder.join("the urgent flooder")
        }
    }
}

/// An actor pinned to its loop through a named executor.
actor NamedStore {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        loop.executor(named: "NamedStore").asUnownedSerialExecutor()
    }
    func runsOnTheLoop() -> Bool { loop.inLoop }
    /// Holds the loop until `done` (polled every millisecond, at most 20 s).
    func block(until done: @Sendable () -> Bool) {
        for _ in 0..<20_000 where !done() { usleep(1000) }
    }
}
