// LifecycleTests.swift: run, stop, and what happens to work, timers, watchers
// and blocked callers when a loop stops.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct LifecycleTests {
    @Test func stopRunsEverythingAcceptedBeforeItThenRefuses() throws {
        let loop = try EventLoop.spawn(name: "final-drain")
        let gate = try Gate.occupy(loop)
        let ran = Locked(0)
        let refusedInDrain = Locked(0)
        for _ in 0..<1_000 {
            try loop.post {
                ran.withValue { $0 += 1 }
                do { try loop.post {} } catch { refusedInDrain.withValue { $0 += 1 } }
            }
        }
        loop.stop()
        #expect(throws: EventLoopError.shutDown) { try loop.post {} }
        gate.open()
        #expect(eventually { loop.hasStopped })
        #expect(ran.current == 1_000)
        #expect(refusedInDrain.current == 1_000)
    }

    @Test func stopReleasesEveryBlockedCallerWithItsResult() throws {
        let loop = try EventLoop.spawn(name: "release")
        let gate = try Gate.occupy(loop)
        let results = Locked<[Int: Result<Int, EventLoopError>]>([:])
        let callers = (0..<8).map { i in
            TestThread {
                do {
                    let v = try loop.postAndWait { i }
                    results.withValue { $0[i] = .success(v) }
                } catch {
                    results.withValue { $0[i] = .failure(error as! EventLoopError) }
                }
            }
        }
        #expect(eventually { loop.stats.pending >= 8 }, "\(loop.stats)")
        loop.stop()
        gate.open()
        callers.join("8 callers blocked in postAndWait when stop() came")
        // Every caller was accepted before stop(): each gets its own result.
        #expect(results.current.count == 8)
        for (i, result) in results.current { #expect(result == .success(i)) }
        #expect(eventually { loop.hasStopped })
    }

    @Test func stopBeforeRunDiscardsQueuedWorkAndReleasesBlockedCallers() throws {
        let loop = try EventLoop(name: "never-ran")
        let ran = Locked(false)
        try loop.post { ran.withValue { $0 = true } }
        let outcome = Locked<EventLoopError?>(nil)
        let caller = TestThread {
            do { try loop.postAndWait { ran.withValue { $0 = true } } } catch {
                outcome.withValue { $0 = error as? EventLoopError }
            }
        }
        #expect(eventually { loop.stats.pending == 2 })
        loop.stop()
        caller.join("a postAndWait caller on a loop stopped before it ran")
        #expect(outcome.current == .shutDown)
        #expect(ran.current == false)
        #expect(loop.hasStopped)
        #expect(throws: EventLoopError.shutDown) { try loop.run() }
    }

    @Test func stopCancelsPendingTimersAndRemovesWatchers() throws {
        let loop = try EventLoop.spawn(name: "teardown")
        let fired = Locked(false)
        let timer = try loop.schedule(after: .seconds(3600)) { fired.withValue { $0 = true } }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let watch = try loop.watch(fd: fds[0], for: .read) { _ in }
        #expect(timer.isPending && watch.isActive)
        stopAndWait(loop)
        #expect(!timer.isPending)
        #expect(!watch.isActive)
        #expect(fired.current == false)
        timer.cancel()  // still safe after the loop stopped
        watch.cancel()
    }

    @Test func runTwiceThrowsAlreadyRunningAndStopIsIdempotent() throws {
        let loop = try EventLoop.spawn(name: "twice")
        #expect(throws: EventLoopError.alreadyRunning) { try loop.run() }
        let inner = try loop.postAndWait { () -> EventLoopError? in
            do { try loop.run(); return nil } catch { return error as? EventLoopError }
        }
        #expect(inner == .alreadyRunning)
        loop.stop()
        loop.stop()
        #expect(eventually { loop.hasStopped })
        loop.stop()
        #expect(loop.hasStopped)
    }

    @Test func joinOfASpawnedLoopReturnsOnlyAfterItsLastWorkAndItsThreadAreDone() throws {
        let loop = try EventLoop.spawn(name: "live-join-spawned")
        let lastJobDone = Locked(false)
        let loopThread = try loop.postAndWait { currentThreadID() }
        // The loop's last work runs in its final drain, after stop() returned,
        // and is held there: join must time out until the test releases it.
        let release = Locked(false)
        try loop.post {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(60)
            while !release.current && clock.now < deadline { sleep(milliseconds: 1) }
            lastJobDone.withValue { $0 = true }
        }
        loop.stop()
        #expect(throws: EventLoopError.timedOut) { try loop.join(timeout: .milliseconds(20)) }
        #expect(!lastJobDone.current)
        release.set(true)
        try loop.join(timeout: .seconds(10))
        #expect(lastJobDone.current, "join returned before the final drain had run")
        #expect(loop.hasStopped)
        // The thread opens the latch as its last act, then exits (bounded).
        #expect(eventually { access("/proc/self/task/\(loopThread)", F_OK) != 0 }, "the loop's thread is still alive")
    }

    @Test func joinTimesOutOnARunningLoopAndRefusesItsOwnThread() throws {
        try withSpawnedLoop("join-bounds") { loop in
            #expect(throws: EventLoopError.timedOut) { try loop.join(timeout: .milliseconds(20)) }
            let own = try loop.postAndWait { () -> EventLoopError? in
                do throws(EventLoopError) { try loop.join(timeout: .seconds(1)); return nil } catch { return error }
            }
            #expect(own == .deadlock)
        }
    }

    @Test func mainLoopRefusesToRunOffTheMainThread() throws {
        try #require(currentThreadID() != mainThreadID(), "this test must run off the main thread")
        #expect(throws: EventLoopError.notOwnerThread) { try EventLoop.main.run() }
    }

    @Test func errorsNameWhatFailed() {
        #expect(
            EventLoopError.system(call: "eventfd", errno: EMFILE).description
                == "eventfd failed: Too many open files (errno 24)")
        #expect("\(EventLoopError.shutDown)".contains("stopped"))
    }
}
