// mainloop-demo: the main thread owns EventLoop.main; worker threads hand it
// work, fire-and-forget and blocking, and the core state is touched only on
// the main thread, without a lock. Swift 6 mode, and no `@unchecked`,
// `nonisolated(unsafe)` or `@preconcurrency` anywhere: the core is an
// ordinary class handed to the loop with LoopBound.
import Glibc
import MainLoop

/// The single-threaded core: an ordinary class, owned by the main loop.
final class Tally {
    private var perWorker: [Int: Int] = [:]
    func add(worker: Int) { perWorker[worker, default: 0] += 1 }
    func total(of worker: Int) -> Int { perWorker[worker, default: 0] }
    var total: Int { perWorker.values.reduce(0, +) }
}

let workers = 3, postsPerWorker = 100_000
let loop = EventLoop.main
let tally = LoopBound(Tally(), on: loop)

print("main thread: the loop '\(loop.name)' will run here (main thread: \(EventLoop.isMainThread))")

let ticker = try loop.schedule(every: .milliseconds(20)) {
    tally.withValue { print("  timer on main thread: \(EventLoop.isMainThread), \($0.total) posts counted so far") }
}

// A loop of its own counts finished workers; its counter is a LoopBound too.
let coordinator = try EventLoop.spawn(name: "coordinator")
let finishedWorkers = LoopBound(0, on: coordinator)

// Each worker is a thread with a loop of its own, given one long job.
let workerLoops = try (0..<workers).map { try EventLoop.spawn(name: "worker-\($0)") }
for (worker, workerLoop) in workerLoops.enumerated() {
    try workerLoop.post {
        do {
            for _ in 0..<postsPerWorker {
                try tally.post { $0.add(worker: worker) }
            }
            // A blocking post: returns what the main thread computed, after
            // everything this worker posted before it has run.
            let (seen, onMain) = try tally.postAndWait { ($0.total(of: worker), EventLoop.isMainThread) }
            print("worker \(worker): posted \(postsPerWorker), main thread (\(onMain)) had run \(seen) of them")
            try finishedWorkers.post { finished in
                finished += 1
                guard finished == workers else { return }
                // The last one: the main thread checks the count and stops.
                try? tally.post { tally in
                    print("main loop stopping: \(tally.total) posts counted on the main thread")
                    if tally.total != workers * postsPerWorker { exit(1) }
                    ticker.cancel()
                    loop.stop()
                }
            }
        } catch {
            print("worker \(worker): refused: \(error)")
        }
    }
}

try loop.run()
for other in workerLoops + [coordinator] {
    other.stop()
    try other.join(timeout: .seconds(10))
}

let stats = loop.stats
print("stats: \(stats)")
print("eventfd writes per 1,000 posts: \(Double(stats.wakeUpsWritten) * 1000 / Double(max(stats.posted, 1)))")
exit(stats.executed == stats.posted ? 0 : 1)
