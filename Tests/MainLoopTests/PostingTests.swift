// PostingTests.swift: post, order, the loop thread, and work posted before run().
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct PostingTests {
    @Test func workPostedBeforeRunRunsOnceRunStarts() throws {
        let loop = try EventLoop(name: "before-run")
        let ran = Locked<[Int]>([])
        for i in 0..<100 {
            try loop.post { ran.withValue { $0.append(i) } }
        }
        #expect(ran.current.isEmpty)
        let runner = TestThread { try? loop.run() }
        #expect(eventually { ran.current.count == 100 })
        #expect(ran.current == Array(0..<100))
        loop.stop()
        runner.join("run() after stop()")
        #expect(loop.hasStopped)
    }

    @Test func postsFromEachThreadRunInOrderOnTheLoopThread() throws {
        try withSpawnedLoop("order") { loop in
            let loopThread = try loop.postAndWait { currentThreadID() }
            let producers = 4, perProducer = 20_000
            // Loop thread only: the last sequence number seen per producer.
            let last = Locked([Int](repeating: -1, count: producers))
            let violations = Locked(0)
            let threads = (0..<producers).map { p in
                TestThread {
                    for n in 0..<perProducer {
                        try! loop.post {
                            let onLoop = currentThreadID() == loopThread && loop.inLoop
                            last.withValue { seen in
                                if seen[p] != n - 1 || !onLoop { violations.withValue { $0 += 1 } }
                                seen[p] = n
                            }
                        }
                    }
                }
            }
            threads.join("4 producers posting 20,000 each")
            try loop.postAndWait {}  // a flush: everything posted before it has run
            #expect(violations.current == 0)
            #expect(last.current == [Int](repeating: perProducer - 1, count: producers))
            // Counters are published at the end of each drain.
            #expect(eventually { loop.stats.posted == loop.stats.executed && loop.stats.pending == 0 })
            #expect(loop.stats.posted >= UInt64(producers * perProducer))
        }
    }

    @Test func currentAndInLoopNameTheRunningLoop() throws {
        try withSpawnedLoop("current") { loop in
            #expect(!loop.inLoop)
            #expect(EventLoop.current == nil)
            let seen = try loop.postAndWait { (EventLoop.current === loop, loop.inLoop) }
            #expect(seen.0 && seen.1)
        }
    }

    @Test func postAfterStopIsRefusedWithShutDown() throws {
        let loop = try EventLoop.spawn(name: "refuse")
        stopAndWait(loop)
        #expect(throws: EventLoopError.shutDown) { try loop.post {} }
        #expect(throws: EventLoopError.shutDown) { try loop.postAndWait {} }
        #expect(throws: EventLoopError.shutDown) { try loop.schedule(after: .zero) {} }
        #expect(throws: EventLoopError.shutDown) { try loop.run() }
    }

    @Test func wakeUpsCoalesceWhileTheLoopIsBusy() throws {
        try withSpawnedLoop("coalesce") { loop in
            let gate = try Gate.occupy(loop)
            let count = Locked(0)
            let before = loop.stats.wakeUpsWritten
            for _ in 0..<100_000 { try loop.post { count.withValue { $0 += 1 } } }
            gate.open()
            try loop.postAndWait {}
            #expect(count.current == 100_000)
            let written = loop.stats.wakeUpsWritten - before
            #expect(written <= 1, "100,000 posts to a busy loop wrote \(written) wake-ups")
        }
    }

    @Test func rePostingWorkDoesNotStarveTimersOrReadableFds() throws {
        try withSpawnedLoop("fair") { loop in
            let spins = Locked(0)
            let keepGoing = Locked(true)
            @Sendable func spin() {
                spins.withValue { $0 += 1 }
                if keepGoing.current { try? loop.post(spin) }
            }
            try loop.post(spin)
            #expect(eventually { spins.current > 1000 })

            let timerFired = Locked(false)
            try loop.schedule(after: .milliseconds(5)) { timerFired.withValue { $0 = true } }
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let readable = Locked(false)
            let watch = try loop.watch(fd: fds[0], for: .read) { _ in readable.withValue { $0 = true } }
            var byte: UInt8 = 1
            #expect(write(fds[1], &byte, 1) == 1)

            #expect(eventually { timerFired.current && readable.current })
            watch.cancel()
            keepGoing.withValue { $0 = false }
        }
    }
}
