// LivenessTests.swift: every blocking API releases its caller. Each test
// parks a caller in the API, makes the release due, and waits for it with a
// bound: a broken release fails the test, naming the API, instead of
// hanging CI. `make liveness-proof` builds the library with every release
// dropped (FaultInjection.swift) and shows each of these failing in time.
//
// The loops here are run by plain test threads, not `spawn`: `spawn` itself
// waits (with postAndWait) for its loop to start, so in the broken build it
// would hang before the test could observe anything.
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// How long a release may take before the test calls it lost. Generous: a
/// loaded 2-core machine under a sanitizer is slow, but never this slow.
/// `make liveness-proof` sets `LIVENESS_RELEASE_BOUND_MS` to 2000: its build
/// drops every release, so a long bound only makes each test fail later.
private let releaseBound = Duration.milliseconds(
    getenv("LIVENESS_RELEASE_BOUND_MS").flatMap { Int(String(cString: $0)) } ?? 10_000)

/// A loop run by a plain thread; stopped and joined (bounded) at the end.
private func withRunningLoop(
    _ name: String, mailboxCapacity: Int? = nil,
    _ body: (EventLoop) throws -> Void
) throws {
    let loop = try EventLoop(name: name, mailboxCapacity: mailboxCapacity)
    let runner = TestThread { try? loop.run() }
    defer {
        loop.stop()
        runner.join(within: releaseBound, "run() of loop '\(name)' after stop()")
    }
    #expect(hasStarted(loop), "loop '\(name)' never started")
    try body(loop)
}

/// True once `loop` has run a post (a plain post: no release involved).
private func hasStarted(_ loop: EventLoop) -> Bool {
    let started = Locked(false)
    guard (try? loop.post { started.withValue { $0 = true } }) != nil else { return false }
    return eventually { started.current }
}

@Suite(.timeLimit(.minutes(2))) struct LivenessTests {
    @Test func postAndWaitReleasesItsCallerWithTheResult() throws {
        try withRunningLoop("live-wait") { loop in
            let gate = try Gate.occupy(loop)
            let result = Locked<Int?>(nil)
            let caller = TestThread {
                let value = try? loop.postAndWait { 42 }  // not inside the lock: the test reads it meanwhile
                result.withValue { $0 = value }
            }
            #expect(eventually { loop.stats.pending == 1 })
            gate.open()
            caller.join(within: releaseBound, "a postAndWait caller after its work ran")
            #expect(result.current == 42)
        }
    }

    @Test func postWithTimeoutReturnsWhenRoomArrivesInTime() throws {
        try withRunningLoop("live-room-timeout", mailboxCapacity: 1) { loop in
            let gate = try Gate.occupy(loop)
            try loop.post {}  // full
            let outcome = Locked<String?>(nil)
            let ran = Locked(false)
            let producer = TestThread {
                do {
                    try loop.post(timeout: .seconds(60)) { ran.withValue { $0 = true } }
                    outcome.withValue { $0 = "accepted" }
                } catch {
                    outcome.withValue { $0 = "\(error)" }
                }
            }
            #expect(eventually { loop.stats.postsThatWaited == 1 })
            gate.open()
            producer.join(within: releaseBound, "post(timeout:) waiting for room after the loop drained")
            #expect(outcome.current == "accepted")
            #expect(eventually { ran.current })
        }
    }

    @Test func aProducerWaitingForRoomIsReleasedWhenTheLoopDrains() throws {
        try withRunningLoop("live-room", mailboxCapacity: 1) { loop in
            let gate = try Gate.occupy(loop)
            try loop.post {}
            let accepted = Locked(false)
            let producer = TestThread {
                do {
                    try loop.post {}
                    accepted.withValue { $0 = true }
                } catch {}
            }
            #expect(eventually { loop.stats.postsThatWaited == 1 })
            gate.open()
            producer.join(within: releaseBound, "post waiting for room after the loop drained")
            #expect(accepted.current)
        }
    }

    @Test func stopReleasesAProducerWaitingForRoom() throws {
        let loop = try EventLoop(name: "live-room-stop", mailboxCapacity: 1)
        try loop.post {}  // full, and never drained: the loop never runs
        let outcome = Locked<EventLoopError?>(nil)
        let producer = TestThread {
            do { try loop.post {} } catch { outcome.withValue { $0 = error as? EventLoopError } }
        }
        #expect(eventually { loop.stats.postsThatWaited == 1 })
        loop.stop()
        producer.join(within: releaseBound, "post waiting for room after stop()")
        #expect(outcome.current == .shutDown)
    }

    @Test func performResumesItsTaskWithTheResult() async throws {
        let loop = try EventLoop(name: "live-perform")
        let runner = TestThread { try? loop.run() }
        let result = Locked<Int?>(nil)
        // The task runs on a loop of its own, not on the cooperative pool,
        // which other tests' synchronous waits can starve on 2 cores (seen
        // under the thread sanitizer): only perform's release is measured.
        // Run by a plain thread too: spawn waits for its loop with a
        // postAndWait, which the broken build never releases.
        let taskLoop = try EventLoop(name: "live-perform-task")
        let taskRunner = TestThread { try? taskLoop.run() }
        defer {
            taskLoop.stop()
            taskRunner.join(within: releaseBound, "run() of the task's loop after stop()")
        }
        Task(executorPreference: taskLoop.executor) {
            let value = try? await loop.perform { 7 }
            result.withValue { $0 = value }
        }
        let released = await eventuallyAsync(within: releaseBound) { result.current != nil }
        #expect(released, "perform did not resume its task within \(releaseBound)")
        #expect(result.current == 7)
        loop.stop()
        runner.join(within: releaseBound, "run() after stop()")
    }

    @Test func joinReturnsOnceTheLoopHasStopped() throws {
        let loop = try EventLoop(name: "live-join")
        let runner = TestThread { try? loop.run() }
        let joined = Locked<String?>(nil)
        let joiner = TestThread {
            do {
                try loop.join()
                joined.withValue { $0 = "returned" }
            } catch {
                joined.withValue { $0 = "\(error)" }
            }
        }
        #expect(hasStarted(loop))
        #expect(!joiner.hasFinished, "join returned while the loop was running")
        loop.stop()
        joiner.join(within: releaseBound, "join() after stop()")
        #expect(joined.current == "returned")
        #expect(loop.hasStopped)
        runner.join(within: releaseBound, "run() after stop()")
    }

    @Test func terminatedResumesOnceTheLoopHasStopped() async throws {
        let loop = try EventLoop(name: "live-terminated")
        let runner = TestThread { try? loop.run() }
        let done = Locked(false), waiting = Locked(false)
        Task {
            waiting.set(true)
            await loop.terminated()
            done.withValue { $0 = true }
        }
        // Not a sleep: the waiter has reached terminated(), and the loop has
        // run 100 jobs since, so a wait that ended early has had them. (Plain
        // posts, which release nobody: the broken build of make
        // liveness-proof must fail this test, not hang in a round trip.)
        #expect(await eventuallyAsync(within: releaseBound) { waiting.current })
        let ran = Locked(0)
        for _ in 0..<100 { try loop.post { ran.withValue { $0 += 1 } } }
        #expect(await eventuallyAsync(within: releaseBound) { ran.current == 100 })
        #expect(!done.current, "terminated() returned while the loop was running")
        loop.stop()
        let released = await eventuallyAsync(within: releaseBound) { done.current }
        #expect(released, "terminated() did not resume within \(releaseBound) of stop()")
        runner.join(within: releaseBound, "run() after stop()")
    }

    @Test func cancelWaitingForARunningTimerHandlerIsReleasedWhenItReturns() throws {
        try withRunningLoop("live-cancel") { loop in
            let entered = Locked(false), leave = Locked(false)
            let timer = try loop.schedule(after: .zero) {
                entered.set(true)
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(60)
                while !leave.current && clock.now < deadline { sleep(milliseconds: 1) }
            }
            #expect(eventually { entered.current })
            let canceller = TestThread { timer.cancel() }
            sleep(milliseconds: 50)
            #expect(!canceller.hasFinished, "cancel() returned while the handler was running")
            leave.set(true)
            canceller.join(within: releaseBound, "cancel() of a timer after its running handler returned")
        }
    }

    @Test func joinOfALoopStoppedBeforeItRanReturnsAtOnce() throws {
        let loop = try EventLoop(name: "never-ran-join")
        loop.stop()
        try loop.join(timeout: .seconds(5))
    }
}
