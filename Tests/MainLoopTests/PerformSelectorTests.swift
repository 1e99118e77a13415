// PerformSelectorTests.swift: the performSelector family on loops: waiting,
// not waiting, errors, retention, order, afterDelay and its cancellation.
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// A target whose methods record which thread ran them.
final class Ledger: Invocable, @unchecked Sendable {
    // `@unchecked Sendable`: every field is touched only on the loop that
    // performs the selectors (each method asserts that it is on a loop).
    static let methods = MethodTable<Ledger>()
        .method("record:", Ledger.record)
        .method("fail:", Ledger.fail)
        .method("keep:", Ledger.keep)
        .method("entries", Ledger.allEntries)

    var entries: [Int] = []
    var loopsSeen: Set<String> = []
    var kept: [any AnyObject & Sendable] = []

    func record(_ value: Int) -> Int {
        loopsSeen.insert(EventLoop.current?.name ?? "none")
        entries.append(value)
        return entries.count
    }
    func fail(_ reason: String) throws -> Int { throw Refused(reason: reason) }
    func keep(_ object: any AnyObject & Sendable) { kept.append(object) }
    func allEntries() -> [Int] { entries }
}

@Suite(.timeLimit(.minutes(5))) struct PerformSelectorTests {
    @Test func waitingReturnsTheResultComputedOnTheLoop() throws {
        try withSpawnedLoop("ledger") { loop in
            let ledger = Ledger()
            let count = try ledger.performSelector("record:", on: loop, waitUntilDone: true, withObjects: 7)
            #expect(count as? Int == 1)
            let entries = try ledger.performSelector("entries", on: loop, waitUntilDone: true)
            #expect(entries as? [Int] == [7])
            #expect(try loop.postAndWait { ledger.loopsSeen } == ["ledger"])
        }
    }

    @Test func waitingRethrowsTheMethodsError() throws {
        try withSpawnedLoop("throws") { loop in
            #expect(throws: Refused(reason: "no")) {
                try Ledger().performSelector("fail:", on: loop, waitUntilDone: true, withObjects: "no")
            }
        }
    }

    @Test func notWaitingReturnsNilAndHandsALaterErrorToTheHandler() throws {
        try withSpawnedLoop("async-errors") { loop in
            let reported = Locked<[String]>([])
            loop.errorHandler = { report in
                reported.withValue { $0.append("\(report.loop.name) \(report.label) \(report.error)") }
            }
            let ledger = Ledger()
            let failing = try ledger.performSelector("fail:", on: loop, waitUntilDone: false, withObjects: "later")
            let recording = try ledger.performSelector("record:", on: loop, waitUntilDone: false, withObjects: 1)
            #expect(failing == nil && recording == nil)
            #expect(eventually { reported.current.count == 1 })
            #expect(reported.current == ["async-errors Ledger.fail: Refused(reason: \"later\")"])
        }
    }

    @Test func badCallsAreRefusedOnTheCallersThreadBeforeAnythingIsPosted() throws {
        try withSpawnedLoop("checked") { loop in
            try loop.postAndWait {}
            let before = loop.stats.posted
            let ledger = Ledger()
            #expect(
                throws: InvocationError.argumentTypeMismatch("record:", index: 0, expected: "Int", actual: "String")
            ) {
                try ledger.performSelector("record:", on: loop, waitUntilDone: false, withObjects: "seven")
            }
            #expect(throws: InvocationError.self) {
                try ledger.performSelector("nope", on: loop, waitUntilDone: true)
            }
            #expect(loop.stats.posted == before)
        }
    }

    @Test func anArgumentWithNoOtherOwnerIsAliveWhenTheInvocationRuns() throws {
        final class Token: Sendable {}
        try withSpawnedLoop("retain") { loop in
            let ledger = Ledger()
            let gate = try Gate.occupy(loop)
            weak var watched: Token?
            do {
                let token = Token()
                watched = token
                try ledger.performSelector("keep:", on: loop, waitUntilDone: false, withObjects: token)
            }
            let identity = watched.map(ObjectIdentifier.init)
            #expect(identity != nil)  // only the queued invocation owns it now
            gate.open()
            // The method received that very object (not a copy, not nil).
            let kept = try loop.postAndWait { ledger.kept.map(ObjectIdentifier.init) }
            #expect(kept == [identity])
        }
    }

    // A posted invocation holds its arguments in its own record and moves
    // them into the call: each must be released exactly once, whether the
    // method returned or threw, and none before the method saw it.
    @Test func everyArgumentOfAPostedInvocationIsReleasedExactlyOnceAfterTheCall() throws {
        let released = Locked(0)
        final class Token: Sendable {
            let released: Locked<Int>
            init(_ released: Locked<Int>) { self.released = released }
            deinit { released.withValue { $0 += 1 } }
        }
        final class Pairs: Invocable, @unchecked Sendable {
            // `@unchecked Sendable`: `seen` is touched on the loop only.
            static let methods = MethodTable<Pairs>().method("take:and:fail:", Pairs.take)
            var seen: [ObjectIdentifier] = []
            func take(_ first: Token, _ second: Token, _ fail: Bool) throws {
                seen += [ObjectIdentifier(first), ObjectIdentifier(second)]
                if fail { throw Refused(reason: "odd") }
            }
        }
        let calls = 500
        try withSpawnedLoop("released") { loop in
            let failures = Locked(0)
            loop.errorHandler = { _ in failures.withValue { $0 += 1 } }
            let pairs = Pairs()
            let gate = try Gate.occupy(loop)
            var posted: [ObjectIdentifier] = []
            for call in 0..<calls {
                let first = Token(released), second = Token(released)
                posted += [ObjectIdentifier(first), ObjectIdentifier(second)]
                try pairs.performSelector(
                    "take:and:fail:", on: loop, waitUntilDone: false, withObjects: first, second, call % 2 == 1)
            }
            // Only the queued records own the tokens now.
            #expect(released.current == 0)
            gate.open()
            let seen = try loop.postAndWait { pairs.seen }
            #expect(seen == posted)
            #expect(released.current == 2 * calls)
            #expect(failures.current == calls / 2)
        }
    }

    @Test func invocationsAndPostsFromOneThreadKeepTheirOrder() throws {
        try withSpawnedLoop("mixed-order") { loop in
            let ledger = Ledger()
            for i in 0..<3_000 {
                if i % 2 == 0 {
                    try ledger.performSelector("record:", on: loop, waitUntilDone: false, withObjects: i)
                } else {
                    try loop.post { _ = ledger.record(i) }
                }
            }
            let entries = try ledger.performSelector("entries", on: loop, waitUntilDone: true) as? [Int]
            #expect(entries == Array(0..<3_000))
        }
    }

    @Test func afterDelayFiresOnTheCallingLoopNoEarlierThanAsked() throws {
        final class Stopwatch: Invocable, @unchecked Sendable {
            static let methods = MethodTable<Stopwatch>().method("lap:", Stopwatch.lap)
            let start = ContinuousClock.now
            let laps = Locked<[(Duration, String?)]>([])
            func lap(_ label: String) {
                laps.withValue { $0.append((ContinuousClock.now - start, EventLoop.current?.name)) }
            }
        }
        try withSpawnedLoop("delayed") { loop in
            let watch = Stopwatch()
            _ = try loop.postAndWait {
                try watch.performSelector("lap:", afterDelay: .milliseconds(30), withObjects: "one")
            }
            #expect(eventually { watch.laps.current.count == 1 })
            let (elapsed, loopName) = watch.laps.current[0]
            #expect(elapsed >= .milliseconds(30))
            #expect(loopName == "delayed")
            #expect(eventually { DelayedPerformRequests.count(forTarget: watch) == 0 })
        }
    }

    @Test func afterDelayOffAnyLoopThrowsNoCurrentLoopSayingWhatToDoInstead() {
        #expect(throws: EventLoopError.noCurrentLoop) {
            try Ledger().performSelector("record:", afterDelay: .zero, withObjects: 1)
        }
        let message = "\(EventLoopError.noCurrentLoop)"
        #expect(message.contains("performSelector(_:afterDelay:withObjects:)"), "\(message)")
        #expect(message.contains("EventLoop.main.post"), "\(message)")
    }

    @Test func cancelPreviousPerformRequestsForOneSelectorWithdrawsOnlyThatSelector() throws {
        try withSpawnedLoop("cancel-selector") { loop in
            let failures = Locked<[String]>([])
            loop.errorHandler = { report in failures.withValue { $0.append("\(report.label): \(report.error)") } }
            let ledger = Ledger()
            // Cancelled in the job that scheduled them, so before any timer
            // can fire: no 20 ms timer races the cancel.
            try loop.postAndWait {
                try ledger.performSelector("record:", afterDelay: .milliseconds(20), withObjects: 1)
                // Due later than record:, so once it has run, record: would have too.
                try ledger.performSelector("fail:", afterDelay: .milliseconds(60), withObjects: "kept")
                Ledger.cancelPreviousPerformRequests(withTarget: ledger, selector: "record:")
            }
            #expect(
                eventually { failures.current.count == 1 }, "the fail: request of the same target was withdrawn too")
            #expect(
                failures.current.first?.hasPrefix("Ledger.fail:: ") == true && failures.current[0].contains("kept"),
                "\(failures.current)")
            #expect(try loop.postAndWait { ledger.entries } == [], "the withdrawn record: request ran")
        }
    }

    @Test func cancelPreviousPerformRequestsWithdrawsEveryRequestOfTheTargetAndNoOther() throws {
        try withSpawnedLoop("cancel-all") { loop in
            let failures = Locked<[String]>([])
            loop.errorHandler = { report in failures.withValue { $0.append(report.label) } }
            let ledger = Ledger(), other = Ledger()
            // Cancelled in the job that scheduled them, before any timer can fire.
            try loop.postAndWait {
                try ledger.performSelector("record:", afterDelay: .milliseconds(20), withObjects: 1)
                try ledger.performSelector("fail:", afterDelay: .milliseconds(20), withObjects: "x")
                // A sentinel due after both: when it has run, they would have run too.
                try other.performSelector("record:", afterDelay: .milliseconds(60), withObjects: 2)
                Ledger.cancelPreviousPerformRequests(withTarget: ledger)
            }
            #expect(
                eventually { (try? loop.postAndWait { other.entries }) == [2] },
                "the other target's request was withdrawn")
            #expect(try loop.postAndWait { ledger.entries } == [])
            #expect(failures.current == [])
        }
    }

    @Test func stoppingTheLoopEndsItsDelayedRequests() throws {
        let loop = try EventLoop.spawn(name: "stop-delayed")
        let ledger = Ledger()
        _ = try loop.postAndWait { try ledger.performSelector("record:", afterDelay: .seconds(3600), withObjects: 1) }
        #expect(DelayedPerformRequests.count(forTarget: ledger) == 1)
        stopAndWait(loop)
        #expect(eventually { DelayedPerformRequests.count(forTarget: ledger) == 0 })
    }

    @Test func afterDelayChecksTheCallBeforeSchedulingIt() throws {
        try withSpawnedLoop("delayed-errors") { loop in
            let ledger = Ledger()
            let error = try loop.postAndWait { () -> String in
                do {
                    try ledger.performSelector("record:", afterDelay: .milliseconds(1), withObjects: "not an Int")
                    return "accepted"
                } catch { return "\(error)" }
            }
            #expect(error == "'record:' argument 0 must be Int, got String")
            #expect(DelayedPerformRequests.count(forTarget: ledger) == 0, "a refused request was registered")
        }
    }

    @Test func seedScenarioOnTheRealMainThread() throws {
        let (exit, output) = try runHelper("perform-selector")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(output.contains("result=3 on_main=true arguments=2,nil,3"), "\(output)")
        #expect(output.contains("MainLoop: loop 'main': Greeter.refuse threw: refused"), "\(output)")
    }
}

@Suite(.timeLimit(.minutes(5))) struct PerformSelectorEdgeTests {
    @Test func waitingOnTheLoopsOwnThreadRunsInlineBeforeQueuedWork() throws {
        try withSpawnedLoop("inline-selector") { loop in
            let ledger = Ledger()
            let result = try loop.postAndWait { () throws -> ((any Sendable)?, [Int]) in
                try ledger.performSelector("record:", on: loop, waitUntilDone: false, withObjects: 1)  // queued
                // Inline:
                let count = try ledger.performSelector("record:", on: loop, waitUntilDone: true, withObjects: 2)
                return (count, ledger.entries)
            }
            #expect(result.0 as? Int == 1)
            #expect(result.1 == [2])
            #expect(try loop.postAndWait { ledger.entries } == [2, 1])
        }
    }

    @Test func performingOnAStoppedLoopThrowsShutDown() throws {
        let loop = try EventLoop.spawn(name: "stopped-selector")
        stopAndWait(loop)
        let ledger = Ledger()
        #expect(throws: EventLoopError.shutDown) {
            try ledger.performSelector("record:", on: loop, waitUntilDone: true, withObjects: 1)
        }
        #expect(throws: EventLoopError.shutDown) {
            try ledger.performSelector("record:", on: loop, waitUntilDone: false, withObjects: 1)
        }
        #expect(ledger.entries == [])
    }
}

/// A target whose methods return typed results.
final class Typed: Invocable, @unchecked Sendable {
    // `@unchecked Sendable`: stateless.
    static let methods = MethodTable<Typed>()
        .method("double:", Typed.double)
        .method("maybe:", Typed.maybe)
        .method("nothing", Typed.nothing)
    func double(_ x: Int) -> Int { 2 * x }
    func maybe(_ x: Int) -> String? { x > 0 ? "yes" : nil }
    func nothing() {}
}

@Suite(.timeLimit(.minutes(5))) struct TypedPerformSelectorTests {
    @Test func typedResultsComeBackAsTheirType() throws {
        try withSpawnedLoop("typed") { loop in
            let typed = Typed()
            let doubled: Int = try typed.performSelector("double:", on: loop, withObjects: 21, returning: Int.self)
            #expect(doubled == 42)
            #expect(try typed.performSelector("maybe:", on: loop, withObjects: 1, returning: String?.self) == "yes")
            #expect(try typed.performSelector("maybe:", on: loop, withObjects: 0, returning: String?.self) == nil)
            try typed.performSelector("nothing", on: loop, returning: Void.self)
        }
    }

    @Test func aResultTypeThatDoesNotMatchIsRefusedBeforeAnythingIsPosted() throws {
        try withSpawnedLoop("typed-mismatch") { loop in
            let before = loop.stats.posted
            #expect(throws: InvocationError.returnTypeMismatch("double:", expected: "Int", actual: "String")) {
                try Typed().performSelector("double:", on: loop, withObjects: 1, returning: String.self)
            }
            #expect(throws: InvocationError.returnTypeMismatch("nothing", expected: "()", actual: "Int")) {
                try Typed().performSelector("nothing", on: loop, returning: Int.self)
            }
            #expect(
                "\(InvocationError.returnTypeMismatch("double:", expected: "Int", actual: "String"))"
                    == "'double:' returns Int, not String")
            #expect(loop.stats.posted == before)
        }
    }

    @Test func aMainActorClassIsPerformedOnTheMainThreadAndRefusedElsewhere() throws {
        let (exit, output) = try runHelper("mainactor-invocable")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(
            output.contains(
                "typed=5,7 plain=3 elsewhere=MainCounter.add: is MainActor-isolated: perform it on the main thread (EventLoop.main), not on loop 'io'"
            ), "\(output)")
    }
}

@Suite(.timeLimit(.minutes(5))) struct ErrorHandlerTests {
    private struct Broke: Error, CustomStringConvertible {
        let what: String
        var description: String { "broke: \(what)" }
    }

    @Test func errorsOfWorkNobodyWaitsForReachTheHandlerWithWhereItCameFrom() throws {
        try withSpawnedLoop("errors") { loop in
            let reports = Locked<[String]>([])
            loop.errorHandler = { report in
                reports.withValue { $0.append("\(report.loop.name)|\(report.label)|\(report.error)") }
            }
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            try loop.post { () throws in throw Broke(what: "post") }; let postLine = #line
            try loop.schedule(after: .zero) { () throws in throw Broke(what: "timer") }; let timerLine = #line
            let watch = try loop.watch(fd: fds[1], for: .write) { (_: IOEvents) throws in throw Broke(what: "watch") }
            let watchLine = #line - 1
            let file = "MainLoopTests/PerformSelectorTests.swift"
            let expected: Set = [
                "errors|\(file):\(postLine)|broke: post", "errors|\(file):\(timerLine)|broke: timer",
                "errors|\(file):\(watchLine)|broke: watch",
            ]
            // The watch is level-triggered: it may report again before the
            // post's and the timer's reports come (it did under TSan), so
            // each report is looked for among all of them.
            #expect(eventually { expected.isSubset(of: Set(reports.current)) })
            watch.cancel()
            let seen = Set(reports.current)
            for report in expected.sorted() { #expect(seen.contains(report), "\(reports.current)") }
            #expect(seen.isSubset(of: expected), "\(reports.current)")
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct PerformSelectorBackpressureTests {
    // A mailbox bounded at 2, held by a gate job: two more posts fill it.
    private func fullLoop(_ name: String) throws -> (EventLoop, Gate) {
        let loop = try EventLoop.spawn(name: name, mailboxCapacity: 2)
        let gate = try Gate.occupy(loop)
        try loop.post {}
        try loop.post {}
        return (loop, gate)
    }

    /// Runs `call` on a thread of its own and returns what it threw; a call
    /// that blocks fails the test (naming `what`) instead of hanging it.
    private func outcome(_ what: String, _ call: @escaping @Sendable () throws -> Void) -> EventLoopError? {
        let thrown = Locked<EventLoopError?>(nil)
        let caller = TestThread {
            do { try call() } catch { thrown.set(error as? EventLoopError) }
        }
        caller.join(within: .seconds(10), what)
        return thrown.current
    }

    @Test func tryPerformSelectorOnAFullMailboxThrowsFullAndQueuesNothing() throws {
        let (loop, gate) = try fullLoop("try-perform")
        defer { stopAndWait(loop) }
        let ledger = Ledger()
        let before = loop.stats.posted
        let refused = outcome("tryPerformSelector on a full mailbox") {
            try ledger.tryPerformSelector("record:", on: loop, withObjects: 1)
        }
        #expect(refused == .full)
        #expect(loop.stats.posted == before)
        gate.open()
        try loop.postAndWait {}
        try ledger.tryPerformSelector("record:", on: loop, withObjects: 2)
        let entries = try ledger.performSelector("entries", on: loop, waitUntilDone: true)
        #expect(entries as? [Int] == [2], "the refused call ran, or the accepted one did not")
    }

    @Test func fireAndForgetWithATimeoutGivesUpWhenNoRoomComes() throws {
        let (loop, gate) = try fullLoop("perform-room")
        defer { stopAndWait(loop) }
        let ledger = Ledger()
        let refused = outcome("performSelector(waitUntilDone: false, timeout:) on a full mailbox") {
            try ledger.performSelector(
                "record:", on: loop, waitUntilDone: false, withObjects: 1, timeout: .milliseconds(50))
        }
        #expect(refused == .timedOut)
        gate.open()
        let entries = try ledger.performSelector("entries", on: loop, waitUntilDone: true)
        #expect(entries as? [Int] == [], "a call refused for lack of room ran anyway")
    }

    @Test func aWaitingCallNotStartedInTimeIsWithdrawnAndNeverRuns() throws {
        let loop = try EventLoop.spawn(name: "perform-timeout")
        defer { stopAndWait(loop) }
        let gate = try Gate.occupy(loop)
        let ledger = Ledger()
        let refused = outcome("performSelector(waitUntilDone: true, timeout:) behind a busy loop") {
            try ledger.performSelector(
                "record:", on: loop, waitUntilDone: true, withObjects: 1, timeout: .milliseconds(50))
        }
        #expect(refused == .timedOut)
        gate.open()
        let entries = try ledger.performSelector("entries", on: loop, waitUntilDone: true)
        #expect(entries as? [Int] == [], "the withdrawn call ran")
    }
}
