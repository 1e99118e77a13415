// TestSupport.swift: small thread-safe helpers and bounded waits for the tests.
import CLibevent
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// Polls `condition` until it holds or `timeout` passes; a bug fails the
/// test instead of hanging CI.
func eventually(within timeout: Duration = .seconds(20), _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&nap, nil)
    }
    return condition()
}

/// `eventually` for async tests: sleeps with `Task.sleep`, so the waiting
/// test does not hold one of the few cooperative threads that the task it
/// waits for may need.
func eventuallyAsync(within timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

func sleep(milliseconds: Int) {
    var nap = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
    nanosleep(&nap, nil)
}

/// A spawned loop that is stopped when the test ends, and whose thread is
/// known to have left `run()` by then (bounded).
@discardableResult
func withSpawnedLoop<R>(_ name: String = "test", _ body: (EventLoop) throws -> R) throws -> R {
    let loop = try EventLoop.spawn(name: name)
    defer { stopAndWait(loop) }
    return try body(loop)
}

/// Stops `loop` and waits (bounded) until its run() has returned; a loop
/// that does not stop fails the calling test.
func stopAndWait(
    _ loop: EventLoop, within timeout: Duration = .seconds(20),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    loop.stop()
    if !eventually(within: timeout, { loop.hasStopped }) {
        Issue.record("loop '\(loop.name)' did not stop within \(timeout)", sourceLocation: sourceLocation)
    }
}

/// Keeps a loop busy: `occupy` posts a job that holds the loop thread until
/// `open()`, and returns once that job is running, so later posts are
/// known to queue up behind it.
///
/// Never holds a loop for good: the gate opens when it is released (a test
/// that throws before `open()` lets its loop go as it unwinds), and the job
/// gives up after `holdAtMost` in any case.
final class Gate: Sendable {
    private let isOpen = Locked(false)

    static func occupy(_ loop: EventLoop, holdAtMost bound: Duration = .seconds(60)) throws -> Gate {
        let gate = Gate()
        let isOpen = gate.isOpen, isHolding = Locked(false)
        // The job holds the flag, not the gate, so that releasing the gate opens it.
        try loop.post {
            isHolding.withValue { $0 = true }
            let clock = ContinuousClock()
            let deadline = clock.now + bound
            while !isOpen.current && clock.now < deadline { sleep(milliseconds: 1) }
        }
        precondition(eventually { isHolding.current }, "the loop never started the gate job")
        return gate
    }

    func open() { isOpen.withValue { $0 = true } }

    deinit { open() }
}

/// The kernel id of the calling thread (not `pthread_self()`, which the
/// compiler may cache across suspension points).
func currentThreadID() -> Int32 { mainloop_gettid() }

/// The kernel id of the process's main thread.
func mainThreadID() -> Int32 { getpid() }

/// `clock` now, in nanoseconds.
func now(_ clock: clockid_t) -> UInt64 {
    var time = timespec()
    clock_gettime(clock, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CLOCK_MONOTONIC as a Duration: the clock timers promise against.
func monotonicNow() -> Duration { .nanoseconds(Int64(now(CLOCK_MONOTONIC))) }
