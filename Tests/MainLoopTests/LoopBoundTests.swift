// LoopBoundTests.swift: a non-Sendable core handed to worker threads through
// LoopBound, in Swift 6 mode with no `@unchecked` in the user's code: the
// calls compile as the README shows them, run on the owning loop, in order,
// and refuse access from any other thread.
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// An ordinary class: not Sendable, no locks, no annotations.
final class Database {
    var rows = 0
    var log: [Int] = []
    var threads: Set<Int32> = []
    func insert() { rows += 1 }
    func append(_ value: Int) {
        log.append(value)
        threads.insert(currentThreadID())
    }
}

/// Counts its instances' deinitialisations, and what they had seen.
final class Tracked {
    let ended: Locked<[Int]>
    var seen = 0
    init(_ ended: Locked<[Int]>) { self.ended = ended }
    deinit { ended.withValue { $0.append(seen) } }
}

@Suite(.timeLimit(.minutes(5))) struct LoopBoundTests {
    // Jobs reference the value without retaining it (a shared reference
    // count would cost every post a cache-line transfer), so dropping the
    // last handle must hand the value to the loop, which lets it go only
    // after every job queued before has run. Run under ASan in make test.
    @Test func droppingTheLastHandleWithJobsQueuedReleasesTheValueAfterThem() throws {
        let loop = try EventLoop(name: "retire")
        let ended = Locked<[Int]>([])
        do {
            let handle = LoopBound(Tracked(ended), on: loop)
            for _ in 0..<1_000 { try handle.post { $0.seen += 1 } }
        }
        #expect(ended.current == [], "the value was released while jobs still referenced it")
        try loop.post { loop.stop() }
        let runner = TestThread { try? loop.run() }
        runner.join("the loop running the queued jobs")
        #expect(ended.current == [1_000], "the value ended before all its jobs ran, or never")
    }

    @Test func aHandleDroppedDuringTheFinalDrainReleasesTheValueAfterIt() throws {
        let loop = try EventLoop(name: "retire-drain")
        let ended = Locked<[Int]>([])
        let handle = Locked<LoopBound<Tracked>?>(LoopBound(Tracked(ended), on: loop))
        for _ in 0..<100 { try handle.current!.post { $0.seen += 1 } }
        // Runs in the final drain (the mailbox is closed): the handle goes
        // away there, with 100 more jobs behind it.
        try loop.post {
            loop.stop()
            handle.set(nil)
        }
        for _ in 0..<100 { try handle.current?.post { $0.seen += 1 } }
        let runner = TestThread { try? loop.run() }
        runner.join("the loop's final drain")
        #expect(ended.current == [200], "the value ended before its jobs ran, or never")
    }

    // The loop calls a job's body without a reference to the value's
    // storage of its own (Job.run): the storage must outlive a body that
    // drops the last handle, while the loop runs and in its final drain.
    // Run under ASan in make test, which would report the freed storage.
    @Test func aBodyThatDropsTheLastHandleKeepsTheValueUntilItReturns() throws {
        for stopping in [false, true] {
            let loop = try EventLoop.spawn(name: "retire-inside")
            let ended = Locked<[Int]>([])
            let endedInside = Locked<[Int]?>(nil)
            let handle = Locked<LoopBound<Tracked>?>(LoopBound(Tracked(ended), on: loop))
            try handle.current!.post { value in
                if stopping { loop.stop() }
                handle.set(nil)
                value.seen += 1
                endedInside.set(ended.current)
            }
            #expect(eventually { ended.current == [1] }, "the value was never released (stopping: \(stopping))")
            #expect(endedInside.current == [], "the value ended inside its own body (stopping: \(stopping))")
            stopAndWait(loop)
        }
    }

    @Test func theReadmesCallsCompileAndRunOnTheOwningLoop() async throws {
        let loop = try EventLoop.spawn(name: "db")
        defer { stopAndWait(loop) }
        let db = LoopBound(Database(), on: loop)
        try db.post { $0.insert() }
        let n = try db.postAndWait { $0.rows }
        try db.tryPost { $0.insert() }
        try db.post(timeout: .milliseconds(5)) { $0.insert() }
        let m = try await db.perform { $0.rows }
        #expect(n == 1)
        #expect(m == 3)
        #expect(db.loop === loop)
        let onLoop = try loop.postAndWait { db.withValue { $0.rows } }
        #expect(onLoop == 3)
    }

    @Test func postsFromManyThreadsRunExactlyOnceInEachThreadsOrder() throws {
        let loop = try EventLoop.spawn(name: "db-order")
        defer { stopAndWait(loop) }
        let db = LoopBound(Database(), on: loop)
        let loopThread = try loop.postAndWait { currentThreadID() }
        let producers = 4, perProducer = 5_000
        let threads = (0..<producers).map { p in
            TestThread {
                for n in 0..<perProducer { try! db.post { $0.append(p * perProducer + n) } }
            }
        }
        threads.join("4 threads posting to a LoopBound")
        let (log, threadsSeen) = try db.postAndWait { ($0.log, $0.threads) }
        #expect(log.count == producers * perProducer)
        #expect(Set(log).count == log.count, "a post ran twice")
        for p in 0..<producers {
            let mine = log.filter { $0 / perProducer == p }
            #expect(mine == Array((p * perProducer)..<((p + 1) * perProducer)), "producer \(p) out of order")
        }
        #expect(threadsSeen == [loopThread])
    }

    @Test func itSharesTheLoopsBoundAndStopSemantics() throws {
        let loop = try EventLoop.spawn(name: "db-bounded", mailboxCapacity: 1)
        let db = LoopBound(Database(), on: loop)
        let gate = try Gate.occupy(loop)
        try db.post { $0.insert() }  // full
        #expect(throws: EventLoopError.full) { try db.tryPost { $0.insert() } }
        #expect(throws: EventLoopError.timedOut) { try db.post(timeout: .milliseconds(10)) { $0.insert() } }
        gate.open()
        #expect(try db.postAndWait(timeout: .seconds(20)) { $0.rows } == 1)
        stopAndWait(loop)
        #expect(throws: EventLoopError.shutDown) { try db.post { $0.insert() } }
        #expect(throws: EventLoopError.shutDown) { try db.postAndWait { $0.rows } }
    }

    @Test func errorsFromTheBodyReachTheWaitingCaller() async throws {
        struct Refusal: Error, Equatable {}
        try await withSpawnedLoopAsync("db-errors") { loop in
            let db = LoopBound(Database(), on: loop)
            #expect(throws: Refusal()) { try db.postAndWait { _ -> Int in throw Refusal() } }
            await #expect(throws: Refusal()) { try await db.perform { _ -> Int in throw Refusal() } }
        }
    }

    // Each state has its own cause and remedy: before the loop runs, while
    // it runs on another thread, and after it stopped (only the thread that
    // ran it may reach the value then).
    @Test func withValueOffTheLoopTrapsNamingTheCauseBeforeRun() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "owner")
            let db = LoopBound(Database(), on: loop)
            db.withValue { $0.insert() }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains("LoopBound<Database>: the value belongs to loop 'owner', which has not started running"),
            "\(text)")
    }

    @Test func withValueOffTheLoopTrapsNamingTheCauseWhileRunning() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop.spawn(name: "owner")
            let db = LoopBound(Database(), on: loop)
            db.withValue { $0.insert() }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "LoopBound<Database>: the value belongs to loop 'owner', which is running on another thread; withValue works only there"
            ), "\(text)")
        #expect(text.contains("use post, postAndWait or perform"), "\(text)")
    }

    @Test func withValueOffTheLoopTrapsNamingTheCauseAfterRunReturned() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop.spawn(name: "owner")
            let db = LoopBound(Database(), on: loop)
            loop.stop()
            try loop.join(timeout: .seconds(20))
            db.withValue { $0.insert() }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "LoopBound<Database>: loop 'owner' has stopped; after its run() returned, only the thread that ran it may reach the value"
            ), "\(text)")
    }

    @Test func theValueIsReachableOnTheThreadThatRanTheLoopOnceRunReturned() throws {
        let loop = try EventLoop(name: "after-run")
        let db = LoopBound(Database(), on: loop)
        for _ in 0..<10 { try db.post { $0.insert() } }
        try loop.post { loop.stop() }
        let seen = Locked<Int?>(nil)
        let runner = TestThread {
            try? loop.run()
            // The final drain is over: this thread, and only it, may look.
            seen.set(db.withValue { $0.rows })
        }
        runner.join("the loop's run and the look after it")
        #expect(seen.current == 10)
    }

    // The old error handler may hold the last handle of a LoopBound on the
    // same loop; releasing it retires the value, which takes the loop's
    // state lock. Released under that lock (it was), the setter deadlocked
    // on itself once the loop had stopped.
    @Test func replacingAnErrorHandlerThatHoldsTheLastHandleDoesNotDeadlock() throws {
        let loop = try EventLoop.spawn(name: "handler-release")
        let ended = Locked<[Int]>([])
        do {
            let tracked = LoopBound(Tracked(ended), on: loop)
            loop.errorHandler = { _ in try? tracked.post { $0.seen += 1 } }
        }
        loop.stop()
        try loop.join(timeout: .seconds(20))
        let setter = TestThread { loop.errorHandler = nil }
        setter.join(within: .seconds(10), "errorHandler = nil after the loop stopped")
        #expect(ended.current == [0], "the value held by the old handler was not released")
    }

    @Test func aThrowingPostHandsItsErrorToTheLoopsErrorHandler() throws {
        struct Refusal: Error {}
        try withSpawnedLoop("db-throwing") { loop in
            let reports = Locked<[String]>([])
            loop.errorHandler = { report in reports.withValue { $0.append("\(report.label) \(report.error)") } }
            let db = LoopBound(Database(), on: loop)
            let line = #line + 1
            try db.post { database in
                database.insert()
                if database.rows == 1 { throw Refusal() }
            }
            try db.post { $0.insert() }  // the non-throwing overload, after it
            #expect(try db.postAndWait { $0.rows } == 2)
            #expect(reports.current == ["MainLoopTests/LoopBoundTests.swift:\(line) Refusal()"])
        }
    }

    @Test func performTakesItsCallSiteAndATimeout() async throws {
        try await withSpawnedLoopAsync("db-perform") { loop in
            let reports = Locked<[String]>([])
            try loop.onSlowJob(threshold: .milliseconds(5)) { report in reports.withValue { $0.append(report.label) } }
            let db = LoopBound(Database(), on: loop)
            let line = #line + 1
            let rows = try await db.perform(timeout: .seconds(20)) { database -> Int in
                let clock = ContinuousClock()
                let until = clock.now + .milliseconds(20)
                while clock.now < until {}  // a slow job, named by its call site
                return database.rows
            }
            #expect(rows == 0)
            try loop.postAndWait {}
            // Only the slow job is named so (another, preempted, may be reported too).
            #expect(reports.current.filter { $0 == "MainLoopTests/LoopBoundTests.swift:\(line)" }.count == 1)
        }
    }
}

/// `withSpawnedLoop` for async bodies.
func withSpawnedLoopAsync(_ name: String, _ body: (EventLoop) async throws -> Void) async throws {
    let loop = try EventLoop.spawn(name: name)
    do {
        try await body(loop)
    } catch {
        stopAndWait(loop)
        throw error
    }
    stopAndWait(loop)
}
