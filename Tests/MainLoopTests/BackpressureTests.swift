// BackpressureTests.swift: bounded mailboxes: producers wait for room in
// FIFO order, nothing is lost, tryPost and post(timeout:) refuse cleanly,
// and stop() releases producers blocked for room.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct BackpressureTests {
    @Test func boundedMailboxSlowsProducersAndLosesNothing() throws {
        let capacity = 1_000, producers = 4, perProducer = 5_000
        let loop = try EventLoop.spawn(name: "bounded", mailboxCapacity: capacity)
        defer { stopAndWait(loop) }
        // Loop thread only.
        let last = Locked([Int](repeating: -1, count: producers))
        let violations = Locked(0)
        let maxPendingSeen = Locked(0)
        let threads = (0..<producers).map { p in
            TestThread {
                for n in 0..<perProducer {
                    try! loop.post {
                        // A deliberately slow consumer.
                        var spin = timespec(); for _ in 0..<200 { clock_gettime(CLOCK_MONOTONIC, &spin) }
                        last.withValue { seen in
                            if seen[p] != n - 1 { violations.withValue { $0 += 1 } }
                            seen[p] = n
                        }
                    }
                    let pending = loop.stats.pending
                    maxPendingSeen.withValue { $0 = max($0, pending) }
                }
            }
        }
        threads.join("producers blocked for room in a bounded mailbox")
        try loop.postAndWait {}
        #expect(violations.current == 0)
        #expect(last.current == [Int](repeating: perProducer - 1, count: producers))
        let stats = loop.stats
        #expect(stats.capacity == capacity)
        #expect(stats.highWaterMark <= capacity, "\(stats)")
        #expect(maxPendingSeen.current <= capacity)
        #expect(stats.postsThatWaited > 0, "producers never had to wait: \(stats)")
        #expect(eventually { loop.stats.posted == loop.stats.executed })
    }

    @Test func tryPostOnAFullMailboxThrowsFullAndEnqueuesNothing() throws {
        let loop = try EventLoop.spawn(name: "try", mailboxCapacity: 2)
        defer { stopAndWait(loop) }
        let gate = try Gate.occupy(loop)
        let ran = Locked(0)
        try loop.tryPost { ran.withValue { $0 += 1 } }
        try loop.tryPost { ran.withValue { $0 += 1 } }
        let before = loop.stats
        #expect(throws: EventLoopError.full) { try loop.tryPost { ran.withValue { $0 += 100 } } }
        #expect(loop.stats.posted == before.posted)
        #expect(loop.stats.pending == 2)
        gate.open()
        try loop.postAndWait {}
        #expect(ran.current == 2)
    }

    @Test func postWithTimeoutOnAFullMailboxTimesOutAndTheWorkNeverRuns() throws {
        let loop = try EventLoop.spawn(name: "timeout", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let gate = try Gate.occupy(loop)
        let ran = Locked<[Int]>([])
        try loop.post { ran.withValue { $0.append(1) } }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: EventLoopError.timedOut) {
            try loop.post(timeout: .milliseconds(30)) { ran.withValue { $0.append(2) } }
        }
        #expect(clock.now - start >= .milliseconds(30))
        #expect(throws: EventLoopError.timedOut) {
            try loop.postAndWait(timeout: .milliseconds(10)) { ran.withValue { $0.append(3) } }
        }
        gate.open()
        try loop.postAndWait {}
        #expect(ran.current == [1])
    }

    @Test func postsFromTheLoopsOwnThreadAreAlwaysAdmitted() throws {
        let loop = try EventLoop.spawn(name: "own-thread", mailboxCapacity: 2)
        defer { stopAndWait(loop) }
        let ran = Locked(0)
        try loop.postAndWait {
            for _ in 0..<10 { try! loop.tryPost { ran.withValue { $0 += 1 } } }
        }
        try loop.postAndWait {}
        #expect(ran.current == 10)
    }

    @Test func producersBlockedForRoomAreServedInTheOrderTheyBlocked() throws {
        let loop = try EventLoop.spawn(name: "fifo", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let gate = try Gate.occupy(loop)
        try loop.post {}  // the mailbox is now full
        let order = Locked<[Int]>([])
        var threads: [TestThread] = []
        for p in 0..<5 {
            threads.append(TestThread { try! loop.post { order.withValue { $0.append(p) } } })
            // Each producer is blocked before the next one starts.
            #expect(eventually { loop.stats.postsThatWaited == UInt64(p + 1) })
        }
        gate.open()
        threads.join("5 producers waiting for room in FIFO order")
        try loop.postAndWait {}
        #expect(order.current == [0, 1, 2, 3, 4])
    }

    @Test func stopReleasesProducersBlockedForRoomWithShutDown() throws {
        let loop = try EventLoop.spawn(name: "stop-full", mailboxCapacity: 1)
        let gate = try Gate.occupy(loop)
        try loop.post {}
        let outcomes = Locked<[EventLoopError]>([])
        let ran = Locked(0)
        let threads = (0..<4).map { _ in
            TestThread {
                do { try loop.post { ran.withValue { $0 += 1 } } } catch {
                    outcomes.withValue { $0.append(error as! EventLoopError) }
                }
            }
        }
        #expect(eventually { loop.stats.postsThatWaited == 4 })
        loop.stop()
        threads.join("4 producers blocked for room when stop() came")
        #expect(outcomes.current == [EventLoopError](repeating: .shutDown, count: 4))
        gate.open()
        #expect(eventually { loop.hasStopped })
        #expect(ran.current == 0)
    }

    @Test func capacityMustBePositive() {
        #expect(throws: EventLoopError.self) { try EventLoop(mailboxCapacity: 0) }
    }

    @Test func mainLoopCapacityCanOnlyBeSetBeforeItsFirstUse() throws {
        _ = EventLoop.main.name
        #expect(throws: EventLoopError.self) { try EventLoop.configureMain(mailboxCapacity: 10) }
        let (exit, output) = try runHelper("main-bounded")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(output.contains("capacity=8 high_water=8"), "\(output)")
    }

    /// A job is released after the mailbox's lock: a producer that
    /// withdraws after waiting for room holds the only reference to its
    /// job, and what the job releases may use the mailbox (here `isClosed`,
    /// which locks it; a deinitializer that posts to the loop does the
    /// same). Released under the lock, it was a thread locking a mutex it
    /// holds, and this test hung until its bound.
    @Test func aWithdrawnJobIsReleasedAfterTheMailboxUnlocks() {
        /// Reads the mailbox's state from its deinitializer.
        final class ReadsWhenReleased: @unchecked Sendable {
            let mailbox: Mailbox
            let sawClosed: Locked<Bool?>
            init(_ mailbox: Mailbox, _ sawClosed: Locked<Bool?>) {
                self.mailbox = mailbox
                self.sawClosed = sawClosed
            }
            deinit { sawClosed.set(mailbox.isClosed) }
        }
        let mailbox = Mailbox(capacity: 1)
        let sawClosed = Locked<Bool?>(nil)
        let producer = TestThread {
            _ = try? mailbox.offer(.work {}, site: .none)
            let room = Completion()
            let offer = try? mailbox.offer(
                .work { [held = ReadsWhenReleased(mailbox, sawClosed)] in _ = held }, site: .none, orWaitWith: room)
            guard case .full = offer else { return }
            _ = mailbox.withdraw(room)
        }
        producer.join(within: .seconds(10), "a producer withdrawing a job that locks the mailbox when released")
        #expect(sawClosed.current == false)
    }
}
