// TimeoutEdgeTests.swift: the timeouts at their edges, on every entry point
// that takes one: `.zero` and negative durations withdraw what has not
// started (or only look, for join), and a duration past the monotonic
// clock's range is the same as none (no overflow, no trap, no early expiry).
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// Past the monotonic clock's range: the deadline arithmetic overflows.
let hugeTimeout = Duration.seconds(Int64.max)
/// A few hundred years: inside the range.
let longTimeout = Duration.seconds(10_000_000_000)

@Suite(.timeLimit(.minutes(5))) struct TimeoutEdgeTests {
    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-3_600)])
    func postAndWaitWithANonPositiveTimeoutWithdrawsWorkThatHasNotStarted(timeout: Duration) throws {
        try withSpawnedLoop("edge-wait") { loop in
            let ran = Locked(0)
            let gate = try Gate.occupy(loop)
            #expect(throws: EventLoopError.timedOut) {
                try loop.postAndWait(timeout: timeout) { ran.withValue { $0 += 1 } }
            }
            gate.open()
            try loop.postAndWait {}  // everything queued before has run (or was withdrawn)
            #expect(ran.current == 0, "withdrawn work ran")
        }
    }

    @Test(arguments: [hugeTimeout, longTimeout])
    func postAndWaitWithAHugeTimeoutWaitsAsLongAsItTakes(timeout: Duration) throws {
        try withSpawnedLoop("edge-wait-huge") { loop in
            let gate = try Gate.occupy(loop)
            let opener = TestThread {
                sleep(milliseconds: 20)  // the wait below must outlast this: no early expiry
                gate.open()
            }
            #expect(try loop.postAndWait(timeout: timeout) { 7 } == 7)
            opener.join("the gate opener")
        }
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-3_600)])
    func postWithANonPositiveTimeoutIsRefusedWhenFullAndAcceptedWithRoom(timeout: Duration) throws {
        let loop = try EventLoop.spawn(name: "edge-post", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let ran = Locked<[Int]>([])
        let gate = try Gate.occupy(loop)
        try loop.post(timeout: timeout) { ran.withValue { $0.append(1) } }  // room: accepted
        #expect(throws: EventLoopError.timedOut) { try loop.post(timeout: timeout) { ran.withValue { $0.append(2) } } }
        gate.open()
        try loop.postAndWait(timeout: .seconds(20)) {}
        #expect(ran.current == [1])
    }

    @Test(arguments: [hugeTimeout, longTimeout])
    func postWithAHugeTimeoutWaitsForRoom(timeout: Duration) throws {
        let loop = try EventLoop.spawn(name: "edge-post-huge", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let ran = Locked<[Int]>([])
        let gate = try Gate.occupy(loop)
        try loop.post { ran.withValue { $0.append(1) } }
        let opener = TestThread {
            sleep(milliseconds: 20)
            gate.open()
        }
        try loop.post(timeout: timeout) { ran.withValue { $0.append(2) } }  // waits for room
        opener.join("the gate opener")
        try loop.postAndWait(timeout: .seconds(20)) {}
        #expect(ran.current == [1, 2])
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-3_600), .milliseconds(10)])
    func performWithATimeoutWithdrawsWorkThatHasNotStarted(timeout: Duration) async throws {
        try await withSpawnedLoopAsync("edge-perform") { loop in
            let ran = Locked(0)
            let gate = try Gate.occupy(loop)
            await #expect(throws: EventLoopError.timedOut) {
                try await loop.perform(timeout: timeout) { ran.withValue { $0 += 1 } }
            }
            gate.open()
            try await loop.perform {}
            #expect(ran.current == 0, "withdrawn work ran")
        }
    }

    @Test(arguments: [hugeTimeout, longTimeout])
    func performWithAHugeTimeoutWaitsAsLongAsItTakes(timeout: Duration) async throws {
        try await withSpawnedLoopAsync("edge-perform-huge") { loop in
            let gate = try Gate.occupy(loop)
            let opener = TestThread {
                sleep(milliseconds: 20)
                gate.open()
            }
            #expect(try await loop.perform(timeout: timeout) { 7 } == 7)
            opener.join("the gate opener")
        }
    }

    @Test func performThatStartedInTimeReturnsItsResultAfterTheTimeout() async throws {
        try await withSpawnedLoopAsync("edge-perform-started") { loop in
            // The timeout bounds the start, not the run: a job that runs past
            // it still returns. (Generous: an idle loop must start it in
            // time even when a sanitizer on a busy machine holds its thread
            // off for a second.) The job runs until the deadline has passed,
            // and records that it started before it.
            let timeout = Duration.seconds(2)
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            let value = try await loop.perform(timeout: timeout) { () -> (Int, ContinuousClock.Instant) in
                let started = clock.now
                // Past the library's deadline too, which it set after ours.
                while clock.now < started + timeout + .milliseconds(50) { sleep(milliseconds: 5) }
                return (9, started)
            }
            #expect(value.0 == 9)
            #expect(value.1 < deadline, "the job started after the deadline: the test proved nothing")
        }
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-3_600)])
    func joinWithANonPositiveTimeoutOnlyLooks(timeout: Duration) throws {
        let loop = try EventLoop.spawn(name: "edge-join")
        #expect(throws: EventLoopError.timedOut) { try loop.join(timeout: timeout) }
        loop.stop()
        try loop.join(timeout: .seconds(20))
        try loop.join(timeout: timeout)  // finished: returns at once
    }

    @Test(arguments: [hugeTimeout, longTimeout])
    func joinWithAHugeTimeoutWaitsAsLongAsItTakes(timeout: Duration) throws {
        let loop = try EventLoop.spawn(name: "edge-join-huge")
        try loop.post {
            sleep(milliseconds: 20)
            loop.stop()
        }
        try loop.join(timeout: timeout)
        #expect(loop.hasStopped)
    }
}

@Suite(.timeLimit(.minutes(5))) struct JoinDeadlockTests {
    // A's job joins B while B's thread is blocked in a postAndWait to A:
    // neither could ever go on. The join is an edge of the wait-for graph.
    @Test func joiningALoopThatWaitsOnTheCallersLoopThrowsDeadlock() throws {
        let a = try EventLoop.spawn(name: "join-a")
        let b = try EventLoop.spawn(name: "join-b")
        defer {
            stopAndWait(a)
            stopAndWait(b)
        }
        let outcome = Locked<String>("")
        let gate = try Gate.occupy(a)
        // Queued on A before B's request, so A runs it while B waits on A.
        try a.post {
            do {
                try b.join(timeout: .seconds(10))
                outcome.set("joined")
            } catch {
                outcome.set("\(error)")
            }
        }
        try b.post { _ = try? a.postAndWait { 1 } }
        #expect(eventually { WaitForGraph.target(of: b) === a }, "B never blocked on A")
        gate.open()
        #expect(eventually { !outcome.current.isEmpty })
        #expect(outcome.current == "\(EventLoopError.deadlock)")
    }

    // The same when B waits for room in A's full mailbox. Room comes when A
    // takes its batch, so B posts on and on: whichever side closes the
    // cycle (A's join, or B's next wait for room) gets .deadlock; neither
    // waits out its timeout.
    @Test func joiningALoopThatWaitsForRoomInTheCallersMailboxThrowsDeadlock() throws {
        let a = try EventLoop.spawn(name: "join-full-a", mailboxCapacity: 1)
        let b = try EventLoop.spawn(name: "join-full-b")
        defer {
            stopAndWait(a)
            stopAndWait(b)
        }
        let outcomes = Locked<[String]>([])
        let gate = try Gate.occupy(a)
        try a.post {  // fills A's mailbox
            do {
                try b.join(timeout: .seconds(10))
                outcomes.withValue { $0.append("a: joined") }
            } catch {
                outcomes.withValue { $0.append("a: \(error)") }
            }
        }
        try b.post {
            for _ in 0..<1_000_000 {
                do { try a.post(timeout: .seconds(10)) {} } catch {
                    outcomes.withValue { $0.append("b: \(error)") }
                    b.stop()  // lets A's join end, if A is the one still waiting
                    return
                }
            }
        }
        #expect(eventually { WaitForGraph.target(of: b) === a }, "B never waited for room in A")
        gate.open()
        #expect(eventually { outcomes.current.contains { $0.hasPrefix("a: ") } })
        let deadlock = "\(EventLoopError.deadlock)"
        let seen = outcomes.current.sorted()
        #expect(seen == ["a: \(deadlock)"] || seen == ["a: joined", "b: \(deadlock)"], "\(seen)")
    }

    // Two loops whose jobs join each other: the second join closes the cycle.
    @Test func loopsJoiningEachOtherThrowDeadlockInsteadOfHanging() throws {
        let a = try EventLoop.spawn(name: "join-each-a")
        let b = try EventLoop.spawn(name: "join-each-b")
        let outcomes = Locked<[String]>([])
        let gateA = try Gate.occupy(a)
        try a.post {
            do { try b.join(timeout: .seconds(10)) } catch { outcomes.withValue { $0.append("a: \(error)") } }
        }
        gateA.open()
        #expect(eventually { WaitForGraph.target(of: a) === b }, "A never started joining B")
        try b.post {
            do { try a.join(timeout: .seconds(10)) } catch { outcomes.withValue { $0.append("b: \(error)") } }
            b.stop()  // releases A's join
        }
        #expect(eventually { outcomes.current.count == 1 })
        #expect(outcomes.current == ["b: \(EventLoopError.deadlock)"])
        try b.join(timeout: .seconds(20))
        stopAndWait(a)
    }
}
