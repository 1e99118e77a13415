// AsyncRoutes.swift: the Swift concurrency ways into the loop, measured with
// the same definitions. Their "post" is fire-and-forget from a plain
// producer thread (a new task: `Task { @MainActor in ... }` or
// `Task { try await loop.perform { ... } }`), so task creation is part of
// the figure; round trip and wake run inside a detached task that awaits
// the hop (`await MainActor.run { }` or `try await loop.perform { }`).
//   mainloop_perform              EventLoop.perform
//   mainloop_taskexecutor         a task that prefers the loop as its task executor
//   mainloop_mainactor_dispatch   MainActor through libdispatch's main queue (the default)
//   mainloop_mainactor_executor   MainActor through EventLoop.main's mailbox (installMainExecutor)
import Glibc
import MainLoop

struct AsyncRoute: Sendable {
    let peer: String
    let post: @Sendable () -> Void
    /// Runs `body` on the loop and returns once it ran.
    let hop: @Sendable (@escaping @Sendable () -> Void) async -> Void

    var asRoute: Route {
        Route(
            peer: peer, post: post, roundtrip: { fatalError("async route") },
            wake: { _, _, _, _ in fatalError("async route") })
    }
}

let performRoute = AsyncRoute(
    peer: "mainloop_perform",
    post: { Task { try! await loop.perform { benchTick() } } },
    hop: { body in try! await loop.perform(body) })

/// Nonisolated async work: it runs where the task's executor preference says.
nonisolated func benchTickAsync() async { benchTick() }

let taskExecutorRoute = AsyncRoute(
    peer: "mainloop_taskexecutor",
    post: { Task(executorPreference: loop.executor) { await benchTickAsync() } },
    hop: { body in await withTaskExecutorPreference(loop.executor) { await runHere(body) } })

/// Runs `body` on whatever executor the caller is on (nonisolated async).
nonisolated func runHere(_ body: @Sendable () -> Void) async { body() }

func mainActorRoute(_ peer: String) -> AsyncRoute {
    AsyncRoute(
        peer: peer,
        post: { Task { @MainActor in benchTick() } },
        hop: { body in await MainActor.run { body() } })
}

/// Runs `operation` in a detached task and blocks the driver thread until it is done.
func inDetachedTask(_ operation: @escaping @Sendable () async -> Void) {
    let done = Semaphore()
    Task.detached {
        await operation()
        done.signal()
    }
    done.wait()
}

func asyncRoundtrip(_ route: AsyncRoute) {
    let samples = UnsafeMutablePointer<UInt64>.allocate(capacity: rtN)
    defer { samples.deallocate() }
    nonisolated(unsafe) let shared = samples
    inDetachedTask {
        for i in -rtWarm..<rtN {
            let t0 = nowNs()
            await route.hop { counter.pointee += 1 }
            if i >= 0 { shared[i] = nowNs() - t0 }
        }
    }
    reportLatency(route.peer, "roundtrip", samples, rtN)
}

/// Where a round trip's time goes, and how many threads slept for it:
/// FIGURE lines for the hop there (from before the `await` to the body
/// running on the loop) and the hop back (from the body to the task
/// running again), p50 and p75 each, and the process's voluntary context
/// switches per round trip. The peer's are measured by
/// bench/mainactor-wakeups.sh with the same definitions.
func asyncRoundtripHalves(_ route: AsyncRoute) {
    let rounds = 20_000
    let there = UnsafeMutablePointer<UInt64>.allocate(capacity: rounds)
    let back = UnsafeMutablePointer<UInt64>.allocate(capacity: rounds)
    let mark = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)  // [0]: the body's time, [1]: switches
    defer { there.deallocate(); back.deallocate(); mark.deallocate() }
    nonisolated(unsafe) let (sharedThere, sharedBack, sharedMark) = (there, back, mark)
    inDetachedTask {
        for _ in 0..<rtWarm { await route.hop {} }
        let before = voluntarySwitches()
        for i in 0..<rounds {
            let start = nowNs()
            await route.hop { sharedMark[0] = nowNs() }
            let end = nowNs()
            sharedThere[i] = sharedMark[0] - start
            sharedBack[i] = end - sharedMark[0]
        }
        sharedMark[1] = UInt64(voluntarySwitches() - before)
    }
    for (name, samples) in [("there", there), ("back", back)] {
        var sorted = UnsafeMutableBufferPointer(start: samples, count: rounds)
        sorted.sort()
        figure(route.peer, "roundtrip_\(name)_p50", Double(sorted[rounds / 2]) / 1000, "us")
        figure(route.peer, "roundtrip_\(name)_p75", Double(sorted[rounds * 3 / 4]) / 1000, "us")
    }
    figure(route.peer, "wakeups_per_roundtrip", Double(mark[1]) / Double(rounds), "switches")
}

func asyncWake(_ route: AsyncRoute) {
    let samples = UnsafeMutablePointer<UInt64>.allocate(capacity: wakeN)
    defer { samples.deallocate() }
    nonisolated(unsafe) let shared = samples
    inDetachedTask {
        var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        for i in 0..<wakeN {
            nanosleep(&nap, nil)
            let stamp = nowNs()
            await route.hop { shared[i] = nowNs() - stamp }
        }
    }
    reportLatency(route.peer, "wake", samples, wakeN)
}

func runAsync(_ route: AsyncRoute, m: Int) {
    _ = throughput(route.asRoute, 1, max(m / 10, 1))  // warm-up, not reported
    result(route.peer, "throughput_p1", throughput(route.asRoute, 1, m), "ops_per_s")
    result(route.peer, "throughput_p4", throughput(route.asRoute, 4, m), "ops_per_s")
    asyncRoundtrip(route)
    asyncRoundtripHalves(route)
    asyncWake(route)
}
