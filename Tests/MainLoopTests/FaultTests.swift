// FaultTests.swift: faults injected on purpose: a full eventfd counter,
// signal storms (EINTR everywhere), and a trapping handler in a child process.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct FaultTests {
    // What this shows: a producer whose eventfd write fails with EAGAIN (the
    // counter is at its maximum) neither traps nor throws, and the loop, once
    // it has reset the counter, is woken by later writes. It does not show a
    // wake-up that would otherwise be lost: a full counter is readable, so the
    // loop is woken whatever the failed write does.
    @Test func aFullEventfdCounterNeitherTrapsThePosterNorBreaksLaterWakeUps() throws {
        let loop = try EventLoop(name: "full-eventfd")
        // The counter at its maximum: a further write fails with EAGAIN.
        var nearlyMax: UInt64 = 0xFFFF_FFFF_FFFF_FFFE
        #expect(write(try loop.core().eventFD, &nearlyMax, 8) == 8)
        var one: UInt64 = 1
        #expect(write(try loop.core().eventFD, &one, 8) == -1 && errno == EAGAIN)
        let ran = Locked(0)
        for _ in 0..<100 { try loop.post { ran.withValue { $0 += 1 } } }  // the first one's write hits EAGAIN
        let runner = TestThread { try? loop.run() }
        #expect(eventually { ran.current == 100 })
        // The drain that ran them published its count in the same critical
        // section that declared the loop asleep: from here a post must write.
        #expect(eventually { loop.stats.executed == 100 && loop.stats.pending == 0 })
        let before = loop.stats.wakeUpsWritten
        try loop.post { ran.withValue { $0 += 1 } }
        #expect(loop.stats.wakeUpsWritten == before + 1, "the post after the reset wrote no wake-up")
        #expect(eventually { ran.current == 101 }, "the loop was not woken after it reset the counter")
        loop.stop()
        runner.join("run() after stop()")
    }

    @Test func signalStormsInterruptNothing() throws {
        // A handler without SA_RESTART: every blocking call in the way sees EINTR.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0
        sigemptyset(&action.sa_mask)
        var old = sigaction()
        sigaction(SIGUSR1, &action, &old)
        defer { sigaction(SIGUSR1, &old, nil) }

        try withSpawnedLoop("storm") { loop in
            let loopThread = try loop.postAndWait { pthread_self() }
            let poster = Locked<pthread_t?>(nil)
            let wrong = Locked(0), done = Locked(false)
            let caller = TestThread {
                poster.withValue { $0 = pthread_self() }
                for i in 0..<Stress.scaled(5_000) {
                    let value = try! loop.postAndWait(timeout: .seconds(30)) { i }
                    if value != i { wrong.withValue { $0 += 1 } }
                    try! loop.post {}
                }
                done.withValue { $0 = true }
            }
            var sent = 0
            // Bounded: a caller that hangs ends the storm, and its join fails.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(60)
            while !done.current && clock.now < deadline {
                pthread_kill(loopThread, SIGUSR1)
                if let target = poster.current { pthread_kill(target, SIGUSR1) }
                sent += 1
                var nap = timespec(tv_sec: 0, tv_nsec: 20_000)
                nanosleep(&nap, nil)
            }
            caller.join("a postAndWait caller under a signal storm")
            #expect(wrong.current == 0)
            #expect(sent > 10, "the storm was too short to mean anything")
        }
    }

    @Test func aTrappingHandlerIsReportedWithItsLoopAndSelector() throws {
        for scenario in ["trap", "trap-async"] {
            let (exit, output) = try runHelper(scenario)
            // The trap's own signal, not any failure (a sanitizer's exit, the
            // scenario's "FAIL" exit 3, a crash elsewhere).
            #expect(exit == .signalled(SIGILL), "\(exit): \(output)")
            #expect(
                output.contains("MainLoop: loop 'worker' crashed (signal 4) while performing Bomb.explode:"),
                "\(output)")
            #expect(output.contains("Fatal error: explode: 42"))
        }
    }
}
