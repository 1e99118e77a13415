// PublicAPIEdgeTests.swift: the public calls at their edges: after stop(),
// inside the final drain, refused arguments, system errors, and the stats
// a drain publishes.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct PublicAPIEdgeTests {
    @Test func everyEntryPointRefusesWithShutDownAfterStop() throws {
        let loop = try EventLoop.spawn(name: "after-stop")
        stopAndWait(loop)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        #expect(throws: EventLoopError.shutDown) { try loop.tryPost {} }
        #expect(throws: EventLoopError.shutDown) { try loop.post(timeout: .seconds(1)) {} }
        #expect(throws: EventLoopError.shutDown) { _ = try loop.watch(fd: fds[0], for: .read) { _ in } }
        #expect(throws: EventLoopError.shutDown) { _ = try loop.onSignal(SIGUSR2) {} }
        #expect(throws: EventLoopError.shutDown) { try loop.schedule(every: .seconds(1)) {} }
    }

    @Test func workInTheFinalDrainIsRefusedNewWorkOfEveryKind() throws {
        let loop = try EventLoop.spawn(name: "in-drain")
        let gate = try Gate.occupy(loop)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let readFD = fds[0]
        let outcomes = Locked<[String]>([])
        try loop.post {
            func attempt(_ name: String, _ body: () throws -> Void) {
                do { try body(); outcomes.withValue { $0.append("\(name): accepted") } } catch {
                    outcomes.withValue { $0.append("\(name): \(error)") }
                }
            }
            attempt("postAndWait") { try loop.postAndWait {} }
            attempt("schedule") { try loop.schedule(after: .zero) {} }
            attempt("watch") { _ = try loop.watch(fd: readFD, for: .read) { _ in } }
        }
        loop.stop()  // the job above now runs in the final drain
        gate.open()
        try loop.join(timeout: .seconds(20))
        let refused = "\(EventLoopError.shutDown)"
        #expect(outcomes.current == ["postAndWait: \(refused)", "schedule: \(refused)", "watch: \(refused)"])
    }

    @Test func writeReadinessIsReportedAsWrite() throws {
        try withSpawnedLoop("writable") { loop in
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let seen = Locked<IOEvents>([])
            let watch = try loop.watch(fd: fds[1], for: .write) { events in seen.withValue { $0.formUnion(events) } }
            #expect(eventually { seen.current == .write })
            watch.cancel()
        }
    }

    @Test func anFdThatCannotBePolledAndAnUncatchableSignalAreSystemErrors() throws {
        try withSpawnedLoop("system-errors") { loop in
            // epoll refuses regular files with EPERM.
            let file = open("/proc/self/exe", O_RDONLY)
            #expect(file >= 0)
            defer { close(file) }
            #expect(throws: EventLoopError.system(call: "event_add", errno: EPERM)) {
                _ = try loop.watch(fd: file, for: .read) { _ in }
            }
            do {
                _ = try loop.onSignal(SIGKILL) {}
                Issue.record("onSignal(SIGKILL) was accepted")
            } catch let EventLoopError.system(call, code) {
                #expect(call == "event_add" && code != 0, "\(call) \(code)")
            }
        }
    }

    @Test func invalidArgumentsAreRefusedWithAMessageNamingThem() throws {
        try withSpawnedLoop("invalid") { loop in
            func message(_ body: () throws -> Void) -> String? {
                do { try body(); return nil } catch let EventLoopError.invalidArgument(text) { return text } catch {
                    return "\(error)"
                }
            }
            #expect(
                message { try loop.schedule(every: .zero) {} }
                    == "schedule(every:) needs a positive interval, got 0.0 seconds")
            #expect(
                message { try loop.schedule(every: .milliseconds(-1)) {} }?.hasPrefix(
                    "schedule(every:) needs a positive interval") == true)
            #expect(
                message { _ = try loop.watch(fd: -1, for: .read) { _ in } }
                    == "watch(fd:) needs a file descriptor, got -1")
            #expect(message { _ = try loop.watch(fd: 0, for: []) { _ in } } == "watch(fd: 0, for: []) watches nothing")
            #expect(message { _ = try loop.onSignal(0) {} } == "onSignal(0): not a signal number")
            #expect(
                message { _ = try EventLoop(name: "tiny", mailboxCapacity: 0) }
                    == "mailboxCapacity must be at least 1, got 0")
            #expect(
                message { try EventLoop.configureMain(mailboxCapacity: 0) }
                    == "mailboxCapacity must be at least 1, got 0")
            #expect(
                message { try EventLoop.configureMain(mailboxCapacity: -3) }
                    == "mailboxCapacity must be at least 1, got -3")
        }
    }

    @Test func installingTheMainExecutorOffTheMainThreadIsRefused() throws {
        try #require(!EventLoop.isMainThread)
        #expect(throws: EventLoopError.notOwnerThread) { try EventLoop.installMainExecutor() }
        #expect(!EventLoop.isMainExecutor)
    }

    @Test func installingTheMainExecutorTwiceIsRefused() throws {
        let (exit, output) = try runHelper("install-main-executor-twice")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(
            output.contains(
                "first=installed second=invalid argument: EventLoop.installMainExecutor() was already called"),
            "\(output)")
    }

    @Test func aNegativeDelayRunsOnTheNextTurn() throws {
        try withSpawnedLoop("negative-delay") { loop in
            let fired = Locked(false)
            let timer = try loop.schedule(after: .milliseconds(-50)) { fired.withValue { $0 = true } }
            #expect(eventually { fired.current })
            #expect(!timer.isPending)
        }
    }

    @Test func aDrainRunsEverythingPendingAsOneBatchAndCountsIt() throws {
        try withSpawnedLoop("batches") { loop in
            let gate = try Gate.occupy(loop)
            let before = loop.stats
            for _ in 0..<500 { try loop.post {} }
            gate.open()
            try loop.postAndWait {}
            #expect(eventually { loop.stats.executed == loop.stats.posted })
            let after = loop.stats
            // The gate's drain, then one drain with all 500 (the flush may join it or follow).
            #expect(after.largestBatch >= 500, "\(after)")
            #expect(after.drains - before.drains <= 3, "\(before) -> \(after)")
            #expect(after.drains > before.drains)
        }
    }

    @Test func aCycleOfFullMailboxesThrowsDeadlockToOneSide() throws {
        let a = try EventLoop.spawn(name: "full-a", mailboxCapacity: 1)
        let b = try EventLoop.spawn(name: "full-b", mailboxCapacity: 1)
        defer { stopAndWait(a); stopAndWait(b) }
        let go = Locked(false), started = Locked(0)
        let outcomes = Locked<[String]>([])
        func crossPost(on loop: EventLoop, to other: EventLoop) throws {
            try loop.post {
                started.withValue { $0 += 1 }
                while !go.current { sleep(milliseconds: 1) }
                do { try other.post {}; outcomes.withValue { $0.append("accepted") } } catch {
                    outcomes.withValue { $0.append("\(error)") }
                }
            }
        }
        try crossPost(on: a, to: b)
        try crossPost(on: b, to: a)
        #expect(eventually { started.current == 2 })
        try a.post {}  // both mailboxes are now full, and both loops busy
        try b.post {}
        go.withValue { $0 = true }
        #expect(
            eventually { outcomes.current.count == 2 }, "a cycle of loops waiting for room hung: \(outcomes.current)")
        #expect(outcomes.current.sorted() == ["\(EventLoopError.deadlock)", "accepted"].sorted())
    }
}
