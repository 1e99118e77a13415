// TimerAndWatcherTests.swift: schedule, watch, onSignal and their cancellation.
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
            sleep(milliseconds: 60)
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
            sleep(milliseconds: 30)
            #expect(count.current == after)
        }
    }

    @Test func cancelledTimerNeverFires() throws {
        try withSpawnedLoop("cancel") { loop in
            let fired = Locked(false)
            let timer = try loop.schedule(after: .milliseconds(20)) { fired.withValue { $0 = true } }
            timer.cancel()
            sleep(milliseconds: 60)
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
            // After cancel() returns the fd may be closed, and no handler runs again.
            #expect(write(writeFD, &byte, 1) == 1)
            close(readFD)
            close(writeFD)
            sleep(milliseconds: 30)
            #expect(seen.current == [.read])
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

    @Test func signalHandlerRunsOnTheLoop() throws {
        try withSpawnedLoop("signals") { loop in
            let hits = Locked(0)
            let watch = try loop.onSignal(SIGUSR2) {
                if loop.inLoop { hits.withValue { $0 += 1 } }
            }
            defer { watch.cancel() }
            kill(getpid(), SIGUSR2)
            #expect(eventually { hits.current == 1 })
        }
    }
}
