// LoopBoundInvocationTests.swift: the performSelector family on a mutable,
// non-Sendable Invocable core through its LoopBound (no `@unchecked`
// anywhere), and a waiting performSelector named `Type.selector` in reports.
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// A mutable single-threaded core: not Sendable, no locks, no annotations.
final class Tally: Invocable {
    static let methods = MethodTable<Tally>()
        .method("add:", Tally.add)
        .method("total", Tally.currentTotal)
        .method("refuse:", Tally.refuse)
        .method("spin:", Tally.spin)
        .method("hold:", Tally.hold)
    var total = 0
    var order: [Int] = []
    var threads: Set<Int32> = []
    func add(_ value: Int) -> Int {
        total += value
        order.append(value)
        threads.insert(currentThreadID())
        return total
    }
    func currentTotal() -> Int { total }
    func refuse(_ why: String) throws { throw Refused(reason: why) }
    /// Holds the loop until `release` is set: a stall.
    func hold(_ release: Locked<Bool>) {
        while !release.current { sched_yield() }
    }
    /// Busy for `milliseconds`: a slow job.
    func spin(_ milliseconds: Int) {
        let clock = ContinuousClock()
        let until = clock.now + .milliseconds(milliseconds)
        while clock.now < until {}
    }
}

@Suite(.timeLimit(.minutes(5))) struct LoopBoundInvocationTests {
    @Test func everyFormRunsOnTheOwningLoopInOrder() throws {
        try withSpawnedLoop("tally") { loop in
            let tally = LoopBound(Tally(), on: loop)
            let loopThread = try loop.postAndWait { currentThreadID() }
            try tally.performSelector("add:", waitUntilDone: false, withObjects: 1)
            let untyped = try tally.performSelector("add:", waitUntilDone: true, withObjects: 2)
            #expect(untyped as? Int == 3)
            try tally.tryPerformSelector("add:", withObjects: 3)
            let typed = try tally.performSelector("add:", withObjects: 4, returning: Int.self)
            #expect(typed == 10)
            try tally.performSelector("add:", waitUntilDone: true, withArguments: [5])
            let (order, threads) = try tally.postAndWait { ($0.order, $0.threads) }
            #expect(order == [1, 2, 3, 4, 5])
            #expect(threads == [loopThread])
        }
    }

    @Test func aBadCallIsRefusedOnTheCallersThreadBeforeAnythingIsPosted() throws {
        try withSpawnedLoop("tally-bad") { loop in
            let tally = LoopBound(Tally(), on: loop)
            #expect(throws: InvocationError.argumentTypeMismatch("add:", index: 0, expected: "Int", actual: "Double")) {
                try tally.performSelector("add:", waitUntilDone: false, withObjects: 1.5)
            }
            #expect(
                throws: InvocationError.unrecognizedSelector(
                    "launch", targetType: "Tally", answers: Tally.methods.selectors)
            ) {
                try tally.performSelector("launch", waitUntilDone: true)
            }
            #expect(throws: InvocationError.returnTypeMismatch("total", expected: "Int", actual: "String")) {
                try tally.performSelector("total", returning: String.self)
            }
            let posted = loop.stats.posted
            let total = try tally.performSelector("total", returning: Int.self)
            #expect(total == 0)
            #expect(loop.stats.posted == posted + 1, "a refused call was posted")
        }
    }

    @Test func aWaitingCallRethrowsAndANonWaitingOneReportsToTheErrorHandler() throws {
        try withSpawnedLoop("tally-errors") { loop in
            let reports = Locked<[String]>([])
            loop.errorHandler = { report in reports.withValue { $0.append("\(report.label): \(report.error)") } }
            let tally = LoopBound(Tally(), on: loop)
            #expect(throws: Refused(reason: "now")) {
                try tally.performSelector("refuse:", waitUntilDone: true, withObjects: "now")
            }
            try tally.performSelector("refuse:", waitUntilDone: false, withObjects: "later")
            try loop.postAndWait {}
            #expect(reports.current == ["Tally.refuse:: Refused(reason: \"later\")"])
        }
    }

    @Test func aDelayedCallRunsOnTheOwningLoopUnlessCancelled() throws {
        try withSpawnedLoop("tally-delayed") { loop in
            let tally = LoopBound(Tally(), on: loop)
            let other = LoopBound(Tally(), on: loop)
            // From a thread that runs no loop: the owning loop performs them.
            try tally.performSelector("add:", afterDelay: .milliseconds(1), withObjects: 7)
            #expect(eventually { (try? tally.postAndWait { $0.order }) == [7] })
            // The loop is held while the next ones are scheduled and
            // cancelled, so that this thread, stalled past their 30 ms (a
            // sanitizer on a busy machine), cannot see them fire first.
            // Scheduling and cancelling a timer need no turn of the loop.
            let gate = try Gate.occupy(loop)
            try tally.performSelector("add:", afterDelay: .milliseconds(30), withObjects: 100)
            let withdrawn = try tally.performSelector("add:", afterDelay: .milliseconds(30), withObjects: 1_000)
            try other.performSelector("add:", afterDelay: .milliseconds(30), withObjects: 5)
            tally.cancelPreviousPerformRequests(selector: "add:")
            withdrawn.cancel()
            // A witness on the same loop, due after the withdrawn ones (timers
            // run in deadline order): once it ran, they would have.
            try other.performSelector("add:", afterDelay: .milliseconds(60), withObjects: 6)
            gate.open()
            #expect(
                eventually { (try? other.postAndWait { $0.order }) == [5, 6] },
                "the other value's requests were cancelled too, or the witness never ran")
            #expect(try tally.postAndWait { $0.order } == [7], "a cancelled request ran")
        }
    }

    @Test func aFullBoundedMailboxRefusesTryPerformSelector() throws {
        let loop = try EventLoop.spawn(name: "tally-full", mailboxCapacity: 1)
        defer { stopAndWait(loop) }
        let tally = LoopBound(Tally(), on: loop)
        let gate = try Gate.occupy(loop)
        try tally.performSelector("add:", waitUntilDone: false, withObjects: 1)  // fills it
        #expect(throws: EventLoopError.full) { try tally.tryPerformSelector("add:", withObjects: 2) }
        #expect(throws: EventLoopError.timedOut) {
            try tally.performSelector("add:", waitUntilDone: false, withObjects: 3, timeout: .milliseconds(5))
        }
        gate.open()
        #expect(try tally.postAndWait(timeout: .seconds(20)) { $0.order } == [1])
    }

    // The docs promise that a waiting call is named by its selector in
    // slow-job reports (it used to be named by a file of the library).
    @Test func aWaitingCallIsNamedTypeDotSelectorInSlowJobReports() throws {
        try withSpawnedLoop("tally-slow") { loop in
            let reports = Locked<[String]>([])
            try loop.onSlowJob(threshold: .milliseconds(5)) { report in reports.withValue { $0.append(report.label) } }
            let tally = LoopBound(Tally(), on: loop)
            try tally.performSelector("spin:", waitUntilDone: true, withObjects: 20)
            let sleeper = Sleeper()
            try sleeper.performSelector("nap:", on: loop, waitUntilDone: true, withObjects: 20)
            try loop.postAndWait {}
            #expect(reports.current.contains("Tally.spin:"), "\(reports.current)")
            #expect(reports.current.contains("Sleeper.nap:"), "\(reports.current)")
            #expect(!reports.current.contains { $0.contains("MainLoop/") }, "\(reports.current)")
        }
    }

    // The same name in the watchdog's stall reports: the stall lasts until
    // the watchdog has reported it, so no nap decides the order.
    @Test func aStalledWaitingCallIsNamedTypeDotSelectorByTheWatchdog() throws {
        try withSpawnedLoop("tally-stall") { loop in
            let release = Locked(false)
            let labels = Locked<[String]>([])
            let dog = try loop.watchdog(timeout: .milliseconds(20)) { report in
                labels.withValue { $0.append(report.label) }
                release.set(true)  // whatever it is named: a wrong name fails, not hangs
            }
            defer { dog.cancel() }
            let tally = LoopBound(Tally(), on: loop)
            try tally.performSelector("hold:", waitUntilDone: true, withObjects: release)
            #expect(labels.current.first == "Tally.hold:", "\(labels.current)")
        }
    }
}

/// A Sendable Invocable (immutable), for the Invocable form of the family.
final class Sleeper: Invocable, Sendable {
    static let methods = MethodTable<Sleeper>().method("nap:", Sleeper.nap)
    func nap(_ milliseconds: Int) { sleep(milliseconds: milliseconds) }
}
