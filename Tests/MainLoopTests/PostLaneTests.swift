// PostLaneTests.swift: the unbounded mailbox's lock-free queue on its own,
// with producers racing a consumer across many blocks (and so through the
// recycled ones), a close in the middle, sites switched on mid-stream, and
// the wake-up rule. Every job is counted and its order checked exactly.
import CLibevent
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// What the consumer saw: per producer, the sequence numbers in the order run.
private final class Seen: @unchecked Sendable {
    // Written only by the job bodies, which run on the consumer thread.
    var byProducer: [[Int]]
    init(producers: Int) { byProducer = Array(repeating: [], count: producers) }
}

/// Takes from `lane` until `done` says stop and nothing is left, running each
/// job; returns how many jobs and how many sampled jobs it took. Every
/// sample's stamp must lie between `since` (taken before the first push)
/// and the moment it is read: a stamp the producer wrote for another slot
/// than the loop reads is a word never written. Gives up (a recorded
/// failure) after 60 s: a slot never published must fail the test, not
/// hang it.
private func consume(_ lane: PostLane, since: UInt64, until done: () -> Bool) -> (jobs: Int, samples: Int) {
    var buffer = JobBuffer()
    var jobs = 0
    var samples = 0
    var limit = 1
    let deadline = ContinuousClock.now + .seconds(60)
    while true {
        if ContinuousClock.now > deadline {
            Issue.record("the lane still had work after 60 s: \(lane.pending) jobs pending, \(jobs) taken")
            break
        }
        let finished = done()
        // Vary the batch size: one job, a few, a block's worth and more.
        limit = limit >= 3000 ? 1 : limit * 7
        let taken = lane.take(into: &buffer, limit: limit)
        samples += buffer.samples.count
        let now = mainloop_monotonic_ns()
        for sample in buffer.samples where sample.acceptedAt < since || sample.acceptedAt > now {
            Issue.record("a sample stamped \(sample.acceptedAt), outside \(since)...\(now)")
        }
        for index in 0..<buffer.count { Job.run(buffer.slot(index)) }
        buffer.reset()
        jobs += taken
        if taken == 0 {
            if finished && !lane.hasWork { break }
            sched_yield()
        }
    }
    buffer.deallocate()
    return (jobs, samples)
}

/// Jobs among the first `count` pushed to a lane that are stamped for the
/// latency figures: those at positions 255 mod 256, where each block's
/// last position (1,023 mod 1,024) is its sentinel, not a job.
private func sampledJobs(_ count: Int) -> Int {
    var jobs = 0
    var sampled = 0
    var position = 0
    while jobs < count {
        if position % 1024 != 1023 {
            if position % 256 == 255 { sampled += 1 }
            jobs += 1
        }
        position += 1
    }
    return sampled
}

@Suite struct PostLaneTests {
    @Test func everyPushIsTakenOnceInItsProducersOrderAcrossBlocks() {
        let producers = 4
        let perProducer = Stress.scaled(40_000)
        let lane = PostLane(sampling: true)
        let seen = Seen(producers: producers)
        let finished = Locked(0)
        let since = mainloop_monotonic_ns()
        let threads = (0..<producers).map { producer in
            TestThread {
                for sequence in 0..<perProducer {
                    let outcome = lane.push(.work { seen.byProducer[producer].append(sequence) }, site: .none)
                    if case .closed = outcome { Issue.record("an open lane refused a push") }
                }
                finished.withValue { $0 += 1 }
            }
        }
        let (jobs, samples) = consume(lane, since: since) { finished.current == producers }
        threads.join(within: .seconds(60), "producers")
        #expect(jobs == producers * perProducer)
        for producer in 0..<producers {
            #expect(seen.byProducer[producer] == Array(0..<perProducer), "producer \(producer) out of order or lost")
        }
        #expect(samples == sampledJobs(producers * perProducer))
        #expect(lane.pushed == UInt64(producers * perProducer))
        #expect(lane.pending == 0)
        lane.destroy()
    }

    @Test func aCloseRefusesEveryLaterPushAndKeepsEveryEarlierOne() {
        let producers = 3
        let lane = PostLane(sampling: false)
        let seen = Seen(producers: producers)
        let accepted = Locked([Int](repeating: 0, count: producers))
        let threads = (0..<producers).map { producer in
            TestThread {
                var sequence = 0
                while true {
                    let value = sequence
                    guard case .closed = lane.push(.work { seen.byProducer[producer].append(value) }, site: .none)
                    else {
                        sequence += 1
                        if sequence == 5_000_000 {
                            Issue.record("producer \(producer): the lane was never closed")
                            break
                        }
                        continue
                    }
                    // Once refused, refused for good.
                    for _ in 0..<100 {
                        guard case .closed = lane.push(.work {}, site: .none) else {
                            Issue.record("a push after the close was accepted")
                            break
                        }
                    }
                    break
                }
                accepted.withValue { $0[producer] = sequence }
            }
        }
        // Let them cross a few blocks, then close while they push.
        var early = JobBuffer()
        var taken = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while taken < 5 * LaneBlock.slots && ContinuousClock.now < deadline {
            taken += lane.take(into: &early, limit: 500)
            for index in 0..<early.count { Job.run(early.slot(index)) }
            early.reset()
        }
        early.deallocate()
        #expect(taken >= 5 * LaneBlock.slots, "the producers stopped early")
        lane.close()
        threads.join(within: .seconds(60), "producers")
        let (rest, _) = consume(lane, since: 0) { true }
        let counts = accepted.current
        #expect(taken + rest == counts.reduce(0, +))
        for producer in 0..<producers {
            #expect(seen.byProducer[producer] == Array(0..<counts[producer]), "producer \(producer)")
        }
        lane.destroy()
    }

    @Test func sitesAreKeptFromTheMomentLabellingStarts() {
        let lane = PostLane(sampling: false)
        let site = PostSite(file: #fileID, line: 42)
        for _ in 0..<10 { _ = lane.push(.work {}, site: site) }
        lane.startLabelling()
        for _ in 0..<10 { _ = lane.push(.work {}, site: site) }
        var buffer = JobBuffer()
        #expect(lane.take(into: &buffer, limit: .max) == 20)
        #expect(
            (0..<20).map { buffer.site($0) } == Array(repeating: .none, count: 10) + Array(repeating: site, count: 10))
        buffer.removeAll { _ in }
        buffer.deallocate()
        lane.destroy()
    }

    @Test func oneProducerOfManyWakesASleepingLoop() {
        let lane = PostLane(sampling: false)
        var buffer = JobBuffer()
        for round in 0..<200 {
            // The loop drained everything and declares sleep.
            while lane.take(into: &buffer, limit: .max) > 0 {}
            for index in 0..<buffer.count { Job.run(buffer.slot(index)) }
            buffer.reset()
            lane.declareSleep()
            #expect(!lane.hasWork)
            let wakes = Locked(0)
            let ready = Locked(0)
            let threads = (0..<4).map { _ in
                TestThread {
                    // All four start together, so that their first pushes race.
                    ready.withValue { $0 += 1 }
                    while ready.current < 4 {}
                    for _ in 0..<10 {
                        if case .queuedWakeLoop = lane.push(.work {}, site: .none) { wakes.withValue { $0 += 1 } }
                    }
                }
            }
            threads.join(within: .seconds(20), "producers")
            #expect(wakes.current == 1, "round \(round): \(wakes.current) wake-ups for one sleep")
            #expect(!lane.cancelSleep(), "the producer that woke the loop left it asleep")
        }
        #expect(lane.wakeUps == 200)
        // Work found after declaring sleep: the loop takes its sleep back,
        // and no producer is told to wake it.
        lane.declareSleep()
        lane.declareSleep()
        #expect(lane.cancelSleep())
        if case .queuedWakeLoop = lane.push(.work {}, site: .none) { Issue.record("woke a loop that was awake") }
        while lane.take(into: &buffer, limit: .max) > 0 {}
        for index in 0..<buffer.count { Job.run(buffer.slot(index)) }
        buffer.reset()
        buffer.deallocate()
        lane.destroy()
    }

    // MARK: The mailbox around a lane

    @Test func aCloseOfASleepingLoopsMailboxHandsOutOneWakeUpAndCountsIt() {
        let mailbox = Mailbox(capacity: nil)
        let (wakeLoop, refused) = mailbox.close()
        #expect(wakeLoop)
        #expect(refused.isEmpty)
        #expect(mailbox.counters().wakeUpsWritten == 1)
        #expect(throws: EventLoopError.shutDown) { try mailbox.admit(.work {}, site: .none) }
        #expect(mailbox.counters().posted == 0)
    }

    @Test func aDrainGoesToSleepWakesForUrgentJobsAndEndsClosedAndEmpty() throws {
        let mailbox = Mailbox(capacity: nil)
        let ran = Locked(0)
        // The loop sleeps: the first post wakes it, the rest do not.
        var offers: [Mailbox.Offer] = []
        for _ in 0..<3 { offers.append(try mailbox.admit(.work { ran.withValue { $0 += 1 } }, site: .none)) }
        #expect(offers.map { "\($0)" } == ["queuedWakeLoop", "queued", "queued"])
        guard case .idle = drainAsTheLoopDoes(mailbox) else {
            Issue.record("a drained lane did not go to sleep")
            return
        }
        #expect(ran.current == 3)
        // Asleep again: an urgent job wakes it, and the next drain runs it.
        #expect("\(try mailbox.offerUrgent(.work { ran.withValue { $0 += 10 } }, site: .none))" == "queuedWakeLoop")
        guard case .idle = drainAsTheLoopDoes(mailbox) else {
            Issue.record("a drain of urgent jobs did not go to sleep")
            return
        }
        #expect(ran.current == 13)
        // Closed while asleep: the close wakes it, and the drain ends it.
        #expect(mailbox.close().wakeLoop)
        guard case .closedAndEmpty = drainAsTheLoopDoes(mailbox) else {
            Issue.record("a closed, empty lane did not end the loop")
            return
        }
        let stats = mailbox.counters()
        #expect(stats.posted == 4 && stats.executed == 4 && stats.pending == 0, "\(stats)")
        #expect(stats.wakeUpsWritten == 3, "\(stats)")
    }

    /// The loop's batch buffer goes round, and back to the spare: a drain
    /// that hands a fresh buffer on (an urgent job's turn) must not drop the
    /// spare's storage. 10,000 such turns with 300 jobs each grew the process
    /// by 5-6 KB a turn when it did; counted in a process of its own, by its peak resident size.
    @Test func drainsThatRunOnlyUrgentJobsKeepOneBatchBuffer() async {
        await #expect(processExitsWith: .success) {
            let mailbox = Mailbox(capacity: nil)
            var before = 0
            for turn in 0..<10_000 {
                if turn == 100 { before = residentBytes() }
                for _ in 0..<300 { _ = try mailbox.admit(.work {}, site: .none) }
                var urgentPosted = false
                _ = drainAsTheLoopDoes(mailbox) {
                    // Once per turn, an urgent job arrives while a batch runs.
                    if !urgentPosted {
                        urgentPosted = true
                        _ = try? mailbox.offerUrgent(.work {}, site: .none)
                    }
                }
            }
            let grown = residentBytes() - before
            if grown > 8 << 20 { fatalError("the resident size grew by \(grown) bytes in 9,900 turns") }
        }
    }
}

/// The loop's side of a mailbox, as LoopCore runs it, without libevent:
/// takes a batch, runs urgent jobs and then the batch (calling `afterBatch`),
/// and goes on while the mailbox says there is more. Returns how it ended.
private func drainAsTheLoopDoes(_ mailbox: Mailbox, afterBatch: () -> Void = {}) -> Mailbox.DrainOutcome {
    var (batch, _) = mailbox.takeBatch()
    while true {
        var urgent = mailbox.takeUrgent()
        let urgentCount = urgent.count
        for index in 0..<urgentCount { Job.run(urgent.slot(index)) }
        urgent.reset()
        mailbox.finishUrgent(urgent, ran: urgentCount)
        let ran = batch.count
        for index in 0..<ran { Job.run(batch.slot(index)) }
        batch.reset()
        afterBatch()
        let outcome = mailbox.finishDrain(batch, ran: ran)
        guard case .more(let next, _) = outcome else { return outcome }
        batch = next
    }
}

/// The most this process has had resident (a leak only adds to it).
private func residentBytes() -> Int {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss * 1024
}
