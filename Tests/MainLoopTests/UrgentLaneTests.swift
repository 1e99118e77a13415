// UrgentLaneTests.swift: the urgent lane past a bounded mailbox's capacity.
//
// What happens, as these tests pin it: the urgent lane has no bound of its
// own. `postUrgent` never waits and is never refused for lack of room, however
// many urgent jobs are pending (memory grows with them, as with an unbounded
// mailbox); urgent jobs take no room from normal posts (a full mailbox stays
// exactly as full, a producer waiting for room is admitted as before) and
// do not count in the high-water mark; they all run, FIFO, before the normal
// jobs still pending. `stats.pending` counts both lanes.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct UrgentLaneTests {
    @Test func urgentPostsPastTheBoundAreAllAdmittedTakeNoRoomAndRunFirstInOrder() throws {
        let capacity = 4, urgent = 10_000
        let loop = try EventLoop.spawn(name: "urgent-past-bound", mailboxCapacity: capacity)
        defer { stopAndWait(loop) }
        let order = Locked<[Int]>([])
        let gate = try Gate.occupy(loop)
        for i in 0..<capacity { try loop.tryPost { order.withValue { $0.append(i) } } }
        // 2,500 times the capacity, from another thread whose join is
        // bounded: an urgent post that waited for room would fail here.
        let poster = TestThread {
            for u in 1...urgent { try! loop.postUrgent { order.withValue { $0.append(-u) } } }
        }
        poster.join("urgent posts to a full mailbox (they must never wait for room)")
        let full = loop.stats
        #expect(full.pending == capacity + urgent, "\(full)")
        #expect(full.highWaterMark == capacity, "urgent jobs counted in the high-water mark: \(full)")
        #expect(full.postsThatWaited == 0, "\(full)")
        // The normal lane is exactly as full as before: nothing more fits.
        #expect(throws: EventLoopError.full) { try loop.tryPost { order.withValue { $0.append(99) } } }
        #expect(throws: EventLoopError.timedOut) {
            try loop.post(timeout: .milliseconds(1)) { order.withValue { $0.append(99) } }
        }
        gate.open()
        try loop.postAndWait {}
        #expect(order.current == (1...urgent).map { -$0 } + Array(0..<capacity))
        // Counted once their batch ends (after the postAndWait returned).
        #expect(eventually { loop.stats.pending == 0 && loop.stats.executed == loop.stats.posted }, "\(loop.stats)")
    }

    @Test func aProducerWaitingForRoomIsAdmittedWhileUrgentPostsPileUpAndRunsAfterThem() throws {
        let loop = try EventLoop.spawn(name: "urgent-room-waiter", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let order = Locked<[Int]>([])
        let gate = try Gate.occupy(loop)
        try loop.tryPost { order.withValue { $0.append(1) } }
        let waiter = TestThread { try! loop.post(timeout: .seconds(30)) { order.withValue { $0.append(2) } } }
        #expect(eventually { loop.stats.postsThatWaited == 1 }, "the producer never waited for room")
        for u in 1...1_000 { try loop.postUrgent { order.withValue { $0.append(-u) } } }
        #expect(!waiter.hasFinished, "urgent posts made room for a normal one")
        gate.open()
        waiter.join("a producer waiting for room behind 1,000 urgent posts")
        try loop.postAndWait {}
        #expect(order.current == (1...1_000).map { -$0 } + [1, 2])
    }
}
