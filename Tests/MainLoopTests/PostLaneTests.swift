// PostLaneTests.swift: the unbounded mailbox's lock-free queue on its own,
// with producers racing a consumer across many blocks (and so through the
// recycled ones), a close in the middle, sites switched on mid-stream, and
// the wake-up rule. Every job is counted and its order checked exactly.
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
/// job; returns how many jobs and how many sampled jobs it took.
private func consume(_ lane: PostLane, until done: () -> Bool) -> (jobs: Int, samples: Int) {
    var buffer = JobBuffer()
    var jobs = 0
    var samples = 0
    var limit = 1
    while true {
        let finished = done()
        // Vary the batch size: one job, a few, a block's worth and more.
        limit = limit >= 3000 ? 1 : limit * 7
        let taken = lane.take(into: &buffer, limit: limit)
        samples += buffer.samples.count
        for index in 0..<buffer.count { buffer.take(index).run() }
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
/// latency figures: the slots at offsets 0, 64, ... of each block.
private func sampledJobs(_ count: Int) -> Int {
    (0..<count).filter { ($0 % LaneBlock.slots) & 63 == 0 }.count
}

@Suite struct PostLaneTests {
    @Test func everyPushIsTakenOnceInItsProducersOrderAcrossBlocks() {
        let producers = 4
        let perProducer = Stress.scaled(40_000)
        let lane = PostLane(sampling: true)
        let seen = Seen(producers: producers)
        let finished = Locked(0)
        let threads = (0..<producers).map { producer in
            TestThread {
                for sequence in 0..<perProducer {
                    let outcome = lane.push(.work { seen.byProducer[producer].append(sequence) }, site: .none)
                    if case .closed = outcome { Issue.record("an open lane refused a push") }
                }
                finished.withValue { $0 += 1 }
            }
        }
        let (jobs, samples) = consume(lane) { finished.current == producers }
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
        while taken < 5 * LaneBlock.slots {
            taken += lane.take(into: &early, limit: 500)
            for index in 0..<early.count { early.take(index).run() }
            early.reset()
        }
        early.deallocate()
        lane.close()
        threads.join(within: .seconds(60), "producers")
        let (rest, _) = consume(lane) { true }
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
            buffer.removeAll { $0.run() }
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
        buffer.removeAll { $0.run() }
        buffer.deallocate()
        lane.destroy()
    }
}
