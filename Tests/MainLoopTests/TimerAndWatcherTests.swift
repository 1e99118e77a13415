// TimerAndWatcherTests.swift: schedule, watch, onSignal and their cancellation.
//
// "Did not fire (again)" is checked against a witness, not after a sleep: a
// timer (or a readable pipe) on the same loop that is due after the moment
// the checked one would have fired. libevent runs due timers in deadline
// order, and reports every ready descriptor of one poll in the same turn,
// so once the witness has run, the checked one had its chance.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct TimerAndWatcherTests {
    @Test func oneShotTimerFiresOnceOnTheLoopNoEarlierThanAsked() throws {
        try withSpawnedLoop("once") { loop in
            let clock = ContinuousClock()
            let start = clock.now
            let firings = Locked<[(Duration, Bool)]>([])
            let timer = try loop.schedule(after: .milliseconds(30)) {
                firings.withValue { $0.append((clock.now - start, loop.inLoop)) }
            }
            #expect(eventually { firings.current.count == 1 })
            // A second firing would be due 30 ms after the first; the witness is due after that.
            let witness = Locked(false)
            try loop.schedule(after: .milliseconds(60)) { witness.set(true) }
            #expect(eventually { witness.current })
            let seen = firings.current
            #expect(seen.count == 1)
            #expect(seen[0].0 >= .milliseconds(30))
            #expect(seen[0].1)
            #expect(!timer.isPending)
        }
    }

    @Test func repeatingTimerFiresUntilCancelled() throws {
        try withSpawnedLoop("every") { loop in
            let count = Locked(0)
            let timer = try loop.schedule(every: .milliseconds(2)) { count.withValue { $0 += 1 } }
            #expect(eventually { count.current >= 5 })
            timer.cancel()
            let after = count.current
            // Due after the repeating timer's next firing (2 ms), had it not been cancelled.
            let witness = Locked(false)
            try loop.schedule(after: .milliseconds(10)) { witness.set(true) }
            #expect(eventually { witness.current })
            #expect(count.current == after)
        }
    }

    @Test func cancelledTimerNeverFires() throws {
        try withSpawnedLoop("cancel") { loop in
            let fired = Locked(false)
            // The loop is held until the timer is cancelled, so that this
            // thread, stalled past the 20 ms, cannot see it fire first.
            let gate = try Gate.occupy(loop)
            let timer = try loop.schedule(after: .milliseconds(20)) { fired.withValue { $0 = true } }
            timer.cancel()
            // Scheduled after it and due later: once it has run, the cancelled one would have.
            let witness = Locked(false)
            try loop.schedule(after: .milliseconds(40)) { witness.set(true) }
            gate.open()
            #expect(eventually { witness.current })
            #expect(fired.current == false)
        }
    }

    @Test func nonPositiveIntervalIsAnInvalidArgument() throws {
        try withSpawnedLoop("bad-interval") { loop in
            #expect(throws: EventLoopError.self) { try loop.schedule(every: .zero) {} }
            #expect(throws: EventLoopError.self) { try loop.watch(fd: -1, for: .read) { _ in } }
            #expect(throws: EventLoopError.self) { try loop.watch(fd: 0, for: []) { _ in } }
            #expect(throws: EventLoopError.self) { try loop.onSignal(0) {} }
        }
    }

    @Test func watchReportsReadinessAndStopsAfterCancel() throws {
        try withSpawnedLoop("watch") { loop in
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            let readFD = fds[0], writeFD = fds[1]
            let seen = Locked<[IOEvents]>([])
            let watch = try loop.watch(fd: readFD, for: .read) { events in
                var buffer = [UInt8](repeating: 0, count: 16)
                _ = read(readFD, &buffer, 16)
                seen.withValue { $0.append(events) }
            }
            var byte: UInt8 = 7
            #expect(write(writeFD, &byte, 1) == 1)
            #expect(eventually { seen.current == [.read] })
            watch.cancel()
            // After cancel() returns no handler runs again: the pipe is made
            // readable, then a witness pipe; once the witness's handler has
            // run, the loop has polled with both ready.
            #expect(write(writeFD, &byte, 1) == 1)
            var witnessFDs: [Int32] = [0, 0]
            #expect(pipe(&witnessFDs) == 0)
            let witnessed = Locked(false)
            let witness = try loop.watch(fd: witnessFDs[0], for: .read) { _ in witnessed.set(true) }
            #expect(write(witnessFDs[1], &byte, 1) == 1)
            #expect(eventually { witnessed.current })
            witness.cancel()
            try loop.postAndWait {}  // the turn that ran the witness is over
            #expect(seen.current == [.read])
            // And the fd may be closed once cancel() has returned.
            for fd in [readFD, writeFD] + witnessFDs { close(fd) }
        }
    }

    @Test func cancelFromAnotherThreadWaitsForARunningHandler() throws {
        try withSpawnedLoop("cancel-wait") { loop in
            let inHandler = Locked(false)
            let handlerDone = Locked(false)
            let timer = try loop.schedule(after: .zero) {
                inHandler.withValue { $0 = true }
                sleep(milliseconds: 50)
                handlerDone.withValue { $0 = true }
            }
            #expect(eventually { inHandler.current })
            timer.cancel()
            #expect(handlerDone.current, "cancel() returned while the handler was still running")
        }
    }

    // The signal goes to one thread of the test's own, which raises it to
    // itself with SIGUSR2 unblocked (the loop's thread, started from a test
    // thread, inherits a mask that blocks it): sent to the whole process, it
    // could interrupt another test's blocking read (SO_RCVTIMEO), which then
    // reads as EOF. (SignalStormTests sends process-directed storms in a
    // child process.)
    @Test func signalHandlerRunsOnTheLoop() throws {
        try withSpawnedLoop("signals") { loop in
            let hits = Locked(0)
            let watch = try loop.onSignal(SIGUSR2) {
                if loop.inLoop { hits.withValue { $0 += 1 } }
            }
            defer { watch.cancel() }
            let sender = TestThread {
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, SIGUSR2)
                pthread_sigmask(SIG_UNBLOCK, &set, nil)
                raise(SIGUSR2)
            }
            sender.join("the thread that raised SIGUSR2")
            #expect(eventually { hits.current == 1 })
        }
    }
}
