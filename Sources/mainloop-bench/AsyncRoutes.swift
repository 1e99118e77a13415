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
    asyncWake(route)
}
