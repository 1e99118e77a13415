// ConcurrencyTests.swift: loops as Swift concurrency executors, perform,
// the ordering promise across posts, invocations and executor jobs, and
// (in child processes) MainActor and DispatchQueue.main on EventLoop.main.
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// An actor pinned to a loop of its own.
actor PinnedCounter {
    let loop: EventLoop
    private(set) var values: [Int] = []
    private(set) var threads: Set<Int32> = []

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    func add(_ value: Int) {
        values.append(value)
        threads.insert(currentThreadID())
    }
}

/// A global actor whose executor is a spawned loop.
@globalActor
actor LoopActor {
    static let shared = LoopActor()
    static let loop = try! EventLoop.spawn(name: "loop-actor")
    nonisolated var unownedExecutor: UnownedSerialExecutor { Self.loop.executor.asUnownedSerialExecutor() }
}

struct Boom: Error, Equatable {}

@Suite(.timeLimit(.minutes(5))) struct ConcurrencyTests {
    @Test func actorPinnedToALoopRunsOnItsThread() async throws {
        let loop = try EventLoop.spawn(name: "pinned")
        defer { stopAndWait(loop) }
        let loopThread = try loop.postAndWait { currentThreadID() }
        let counter = PinnedCounter(loop: loop)
        for i in 0..<100 { await counter.add(i) }
        #expect(await counter.values == Array(0..<100))
        #expect(await counter.threads == [loopThread])
    }

    @Test func assumeIsolatedWorksFromAPlainLoopCallback() throws {
        let loop = try EventLoop.spawn(name: "assume")
        defer { stopAndWait(loop) }
        let counter = PinnedCounter(loop: loop)
        let count = try loop.postAndWait {
            counter.assumeIsolated { isolated in
                isolated.add(1)
                return isolated.values.count
            }
        }
        #expect(count == 1)
    }

    // The trap itself (SIGILL, with checkIsolated's message), not any failing
    // exit: a spawn that threw would also end the child with a failure.
    @Test func checkIsolatedTrapsOffTheLoop() async {
        let result = await #expect(processExitsWith: .signal(SIGILL), observing: [\.standardErrorContent]) {
            let loop = try EventLoop.spawn(name: "off-loop")
            loop.executor.checkIsolated()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("expected to run on loop 'off-loop', but the caller is not its thread"), "\(text)")
    }

    @Test func performReturnsTheValueAndRethrows() async throws {
        let loop = try EventLoop.spawn(name: "perform")
        defer { stopAndWait(loop) }
        let (value, onLoop) = try await loop.perform { (21 * 2, loop.inLoop) }
        #expect(value == 42 && onLoop)
        await #expect(throws: Boom()) { try await loop.perform { () throws -> Int in throw Boom() } }
    }

    @Test func performCancelledBeforeItStartsIsWithdrawn() async throws {
        let loop = try EventLoop.spawn(name: "perform-cancel")
        defer { stopAndWait(loop) }
        let gate = try Gate.occupy(loop)
        let ran = Locked(false)
        let task = Task { try await loop.perform { ran.withValue { $0 = true } } }
        #expect(await eventuallyAsync { loop.stats.pending == 1 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        gate.open()
        try loop.postAndWait {}
        #expect(ran.current == false)
    }

    // The task is cancelled before perform suspends (its record is not armed
    // yet): the cancellation still withdraws the work, and the task resumes.
    @Test func performInAnAlreadyCancelledTaskIsWithdrawnAtOnce() async throws {
        let loop = try EventLoop.spawn(name: "perform-precancelled")
        defer { stopAndWait(loop) }
        let ran = Locked(false)
        let before = loop.stats.posted
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await loop.perform { ran.withValue { $0 = true } }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        try loop.postAndWait {}
        #expect(ran.current == false, "the work of a cancelled task ran")
        #expect(loop.stats.posted == before + 1, "the withdrawn work was posted anyway: \(loop.stats)")
    }

    @Test func performOnAStoppedLoopThrowsShutDown() async throws {
        let loop = try EventLoop.spawn(name: "perform-stopped")
        stopAndWait(loop)
        await #expect(throws: EventLoopError.shutDown) { try await loop.perform { 1 } }
    }

    @Test func postsLoopBoundBodiesInvocationsAndExecutorJobsFromOneThreadKeepTheirOrder() async throws {
        final class Recorder: Invocable, Sendable {
            static let methods = MethodTable<Recorder>().method("note:", Recorder.note)
            let order = Locked<[Int]>([])
            func note(_ value: Int) { order.withValue { $0.append(value) } }
        }
        let loop = LoopActor.loop
        final class Core {
            var bodies = 0
        }
        let recorder = Recorder()
        let bound = LoopBound(Core(), on: loop)
        let rounds = 250
        let poster = TestThread {
            for round in 0..<rounds {
                let base = round * 5
                try! loop.post { recorder.note(base) }
                Task { @LoopActor in recorder.note(base + 1) }
                try! recorder.performSelector("note:", on: loop, waitUntilDone: false, withObjects: base + 2)
                try! bound.post { core in
                    core.bodies += 1
                    recorder.note(base + 3)
                }
                try! loop.post { recorder.note(base + 4) }
            }
        }
        poster.join("the poster thread")
        #expect(await eventuallyAsync { recorder.order.current.count == rounds * 5 })
        #expect(recorder.order.current == Array(0..<(rounds * 5)))
        #expect(try bound.postAndWait { $0.bodies } == rounds)
    }

    @Test func executorJobsAndPerformAreAdmittedPastAFullBoundedMailbox() async throws {
        let loop = try EventLoop.spawn(name: "full-admits", mailboxCapacity: 1)
        defer { loop.stop() }
        let gate = try Gate.occupy(loop)
        try loop.post {}  // the one place
        #expect(throws: EventLoopError.full) { try loop.tryPost {} }
        let pinned = PinnedToLoop(loop)
        async let onLoop = pinned.touch()
        async let performed = loop.perform { 42 }
        // Both are queued past the capacity: neither waits for room.
        #expect(await eventuallyAsync { loop.stats.pending == 3 }, "\(loop.stats)")
        gate.open()
        #expect(await onLoop)
        #expect(try await performed == 42)
        #expect(loop.stats.postsThatWaited == 0, "\(loop.stats)")
        #expect(loop.stats.executed >= 4, "\(loop.stats)")
    }

    @Test func mainActorAndDispatchMainRunOnTheMainLoop() throws {
        let (exit, output) = try runHelper("concurrency")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(
            output.contains("dispatch=200 mainactor=200 mainactor_run=1 assume=1 mailbox=200 off_main=0"), "\(output)")
    }

    @Test func mainActorJobsGoThroughTheMailboxWithTheOptInMainExecutor() throws {
        let (exit, output) = try runHelper("concurrency-main-executor")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(
            output.contains("dispatch=200 mainactor=200 mainactor_run=1 assume=1 mailbox=200 off_main=0"), "\(output)")
        #expect(output.contains("main_executor=true"), "\(output)")
    }
}

/// An actor pinned to whatever loop it is given.
actor PinnedToLoop {
    let loop: EventLoop
    init(_ loop: EventLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
    func touch() -> Bool { loop.inLoop }
}

@Suite(.timeLimit(.minutes(5))) struct StoppedLoopExecutorTests {
    @Test func usingAnActorPinnedToAStoppedLoopTrapsNamingTheLoopAndTheRemedy() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop.spawn(name: "io")
            loop.stop()
            try loop.join(timeout: .seconds(20))
            _ = await PinnedToLoop(loop).touch()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "loop 'io' has stopped; an actor or task pinned to it can never run again: stop it only after its actors are done"
            ), "\(text)")
    }
}

/// Nonisolated async code: where it runs is the task executor's choice.
nonisolated func whereAmI() async -> String? { EventLoop.current?.name }

@Suite(.timeLimit(.minutes(5))) struct TaskExecutorTests {
    @Test func aTaskThatPrefersTheLoopRunsItsNonisolatedCodeThere() async throws {
        try await withSpawnedLoopAsync("preferred") { loop in
            let names = await Task(executorPreference: loop.executor) { () async -> [String?] in
                let first = await whereAmI()
                try? await Task.sleep(for: .milliseconds(1))  // after a suspension, still there
                let second = await whereAmI()
                return [first, second]
            }.value
            #expect(names == ["preferred", "preferred"])
        }
    }

    @Test func withTaskExecutorPreferenceRunsTheBodyOnTheLoop() async throws {
        try await withSpawnedLoopAsync("preference-scope") { loop in
            let name = await withTaskExecutorPreference(loop.executor) { await whereAmI() }
            #expect(name == "preference-scope")
            let outside = await whereAmI()
            #expect(outside == nil)
        }
    }

    @Test func checkIsolatedAndIsIsolatingStayRightForTaskExecutorJobs() async throws {
        try await withSpawnedLoopAsync("isolation") { loop in
            let seen = await Task(executorPreference: loop.executor) { () -> Bool? in
                loop.executor.isIsolatingCurrentContext()
            }.value
            #expect(seen == true)
            #expect(loop.executor.isIsolatingCurrentContext() == false)
        }
    }
}
