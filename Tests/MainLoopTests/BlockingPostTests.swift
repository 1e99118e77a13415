// BlockingPostTests.swift: postAndWait's results, inline runs, timeouts and deadlock detection.
import Glibc
import TestKit
import Testing

@testable import MainLoop

private struct WorkFailed: Error, Equatable { let code: Int }

@Suite(.timeLimit(.minutes(5))) struct BlockingPostTests {
    @Test func postAndWaitReturnsTheValueComputedOnTheLoopThread() throws {
        try withSpawnedLoop("value") { loop in
            let (value, thread) = try loop.postAndWait { (6 * 7, currentThreadID()) }
            #expect(value == 42)
            #expect(thread != currentThreadID())
        }
    }

    @Test func postAndWaitRethrowsTheWorksError() throws {
        try withSpawnedLoop("rethrow") { loop in
            #expect(throws: WorkFailed(code: 7)) {
                try loop.postAndWait { () throws -> Int in throw WorkFailed(code: 7) }
            }
        }
    }

    @Test func postAndWaitOnTheLoopThreadRunsInline() throws {
        try withSpawnedLoop("inline") { loop in
            let result = try loop.postAndWait { () throws -> (Int, Bool) in
                var order: [Int] = []
                order.append(1)
                let inner = try loop.postAndWait {
                    order.append(2); return 2
                }
                order.append(3)
                return (inner, order == [1, 2, 3])
            }
            #expect(result.0 == 2 && result.1)
        }
    }

    @Test func timedOutWorkIsWithdrawnAndNeverRuns() throws {
        try withSpawnedLoop("timeout") { loop in
            let gate = try Gate.occupy(loop)
            let ran = Locked(false)
            #expect(throws: EventLoopError.timedOut) {
                try loop.postAndWait(timeout: .milliseconds(20)) { ran.withValue { $0 = true } }
            }
            gate.open()
            try loop.postAndWait {}  // everything queued before this has been processed
            #expect(ran.current == false)
        }
    }

    @Test func workStartedBeforeTheTimeoutDeliversItsResult() throws {
        try withSpawnedLoop("started") { loop in
            // The start bound is generous (a sanitizer on a loaded machine may
            // hold the loop's thread off for a second); the work then runs
            // until past it.
            // What is checked is that the work started before the deadline
            // (recorded by the work itself: otherwise this test would show
            // nothing) and that the caller still got its result.
            let timeout = Duration.seconds(2)
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            let value = try loop.postAndWait(timeout: timeout) { () -> (Int, ContinuousClock.Instant) in
                let started = clock.now
                // Past the library's deadline too, which it set after ours.
                while clock.now < started + timeout + .milliseconds(50) { sleep(milliseconds: 5) }
                return (9, started)
            }
            #expect(value.0 == 9)
            #expect(value.1 < deadline, "the work started after the deadline: the test proved nothing")
        }
    }

    @Test func directWaitCycleThrowsDeadlock() throws {
        try withSpawnedLoop("a") { a in
            try withSpawnedLoop("b") { b in
                let inner = try a.postAndWait { () -> EventLoopError? in
                    try b.postAndWait { () -> EventLoopError? in
                        do {
                            try a.postAndWait(timeout: .seconds(30)) {}
                            return nil
                        } catch let error as EventLoopError {
                            return error
                        }
                    }
                }
                #expect(inner == .deadlock)
                // The edges are gone: both loops still serve blocking posts.
                #expect(try a.postAndWait { try b.postAndWait { 1 } } == 1)
            }
        }
    }

    @Test func waitCycleThroughAChainThrowsDeadlock() throws {
        try withSpawnedLoop("a") { a in
            try withSpawnedLoop("b") { b in
                try withSpawnedLoop("c") { c in
                    let inner = try a.postAndWait {
                        try b.postAndWait {
                            try c.postAndWait { () -> EventLoopError? in
                                do { try a.postAndWait(timeout: .seconds(30)) {}; return nil } catch let e
                                    as EventLoopError
                                { return e }
                            }
                        }
                    }
                    #expect(inner == .deadlock)
                }
            }
        }
    }

    /// The result is built on the loop's thread straight into the caller's
    /// frame (a blocking post) or a box of its own (`perform`): an object
    /// made there must reach the caller once and be released once, and a
    /// throwing work must leave nothing behind, also through a generic
    /// caller that does not know the type.
    @Test func aResultMadeOnTheLoopReachesTheCallerOnceAndIsReleasedOnce() async throws {
        final class Tracked: Sendable {
            let ended: Locked<Int>
            let name: String
            init(_ ended: Locked<Int>, _ name: String) { (self.ended, self.name) = (ended, name) }
            deinit { ended.withValue { $0 += 1 } }
        }
        func viaGeneric<T: Sendable>(_ loop: EventLoop, _ make: @escaping @Sendable () throws -> T) throws -> T {
            try loop.postAndWait { try make() }
        }
        let loop = try EventLoop.spawn(name: "result")
        defer { stopAndWait(loop) }
        let ended = Locked(0)
        do {
            let direct = try loop.postAndWait { Tracked(ended, "direct") }
            let generic = try viaGeneric(loop) { (Tracked(ended, "generic"), [1, 2, 3]) }
            let awaited = try await loop.perform { Tracked(ended, "awaited") }
            #expect(direct.name == "direct" && generic.0.name == "generic" && generic.1 == [1, 2, 3])
            #expect(awaited.name == "awaited")
            #expect(ended.current == 0, "the caller holds all three")
        }
        #expect(ended.current == 3, "each was released once, when the caller let go")
        #expect(throws: WorkFailed(code: 3)) {
            try viaGeneric(loop) { () throws -> Tracked in
                _ = Tracked(ended, "dropped")
                throw WorkFailed(code: 3)
            }
        }
        await #expect(throws: WorkFailed(code: 4)) {
            try await loop.perform { () throws -> Tracked in throw WorkFailed(code: 4) }
        }
        try loop.postAndWait {}
        #expect(ended.current == 4, "the object made before the throw was released, and nothing else was made")
        // Inline on the loop's own thread, and a wait that times out before
        // its work starts (nothing is made, nothing is read).
        let inline = try loop.postAndWait { try loop.postAndWait { Tracked(ended, "inline") }.name }
        #expect(inline == "inline" && ended.current == 5)
        let gate = try Gate.occupy(loop)
        #expect(throws: EventLoopError.timedOut) {
            try loop.postAndWait(timeout: .milliseconds(20)) { Tracked(ended, "never") }
        }
        gate.open()
        try loop.postAndWait {}
        #expect(ended.current == 5, "the withdrawn work never ran")
    }

    /// A stopped loop abandons what was queued: the blocked caller gets
    /// `.shutDown` and no result is read from its frame.
    @Test func aWaitAbandonedByStopThrowsAndLeavesNoResult() throws {
        final class Marker: Sendable {}
        let loop = try EventLoop(name: "abandoned")  // never run: the wait is abandoned by stop
        let outcome = Locked<String?>(nil)
        let caller = TestThread {
            do {
                _ = try loop.postAndWait { Marker() }
                outcome.withValue { $0 = "returned" }
            } catch {
                outcome.withValue { $0 = "\(error)" }
            }
        }
        #expect(eventually(within: .seconds(10)) { loop.stats.posted == 1 }, "the caller's post was queued")
        loop.stop()
        caller.join(within: .seconds(10), "the caller blocked on a stopped loop")
        #expect(outcome.current == "\(EventLoopError.shutDown)")
    }

    @Test func blockingPostCanWaitForANonCapturedClosureWithoutEscaping() throws {
        // withoutActuallyEscaping traps if any copy of the closure outlives the
        // call: repeat enough round trips, and timeouts (a withdrawn post must
        // let go of the closure before its caller wakes), to catch a leak.
        try withSpawnedLoop("escape") { loop in
            var local = 0
            for i in 0..<2_000 {
                local = try loop.postAndWait { i }
            }
            #expect(local == 1_999)
            let gate = try Gate.occupy(loop)
            let ran = Locked(0)
            var timedOut = 0
            for _ in 0..<1_000 {
                do {
                    try loop.postAndWait(timeout: .microseconds(50)) { ran.withValue { $0 += 1 } }
                } catch EventLoopError.timedOut {
                    timedOut += 1
                }
            }
            gate.open()
            try loop.postAndWait {}
            #expect(timedOut == 1_000, "the loop was held: every one of them had to time out")
            #expect(ran.current == 0)
        }
    }
}
