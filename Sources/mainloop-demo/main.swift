// mainloop-demo: the main thread owns EventLoop.main; worker threads hand it
// work, fire-and-forget and blocking, and the core state is touched only on
// the main thread, without a lock.
import Glibc
import MainLoop

/// The single-threaded core: only the main loop touches it.
final class Tally: @unchecked Sendable {
    // Main loop thread only (each mutation checks it in debug builds).
    private var perWorker: [Int: Int] = [:]
    func add(worker: Int) {
        assert(EventLoop.main.inLoop, "Tally touched off the main loop")
        perWorker[worker, default: 0] += 1
    }
    func total(of worker: Int) -> Int { perWorker[worker, default: 0] }
    var total: Int { perWorker.values.reduce(0, +) }
}

/// Starts a plain detached thread.
func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, Unmanaged.passRetained(Box(body)).toOpaque())
    precondition(rc == 0, "pthread_create failed: \(rc)")
    pthread_detach(thread)
}

let workers = 3, postsPerWorker = 100_000
let loop = EventLoop.main
let tally = Tally()

print("main thread: the loop '\(loop.name)' will run here (main thread: \(EventLoop.isMainThread))")

let ticker = try loop.schedule(every: .milliseconds(20)) {
    print("  timer on main thread: \(EventLoop.isMainThread), \(tally.total) posts counted so far")
}

let done = try EventLoop.spawn(name: "coordinator")   // a loop of its own, to count finished workers
nonisolated(unsafe) var finishedWorkers = 0          // touched only on the coordinator loop

for worker in 0..<workers {
    startThread {
        for _ in 0..<postsPerWorker {
            try! loop.post { tally.add(worker: worker) }
        }
        // A blocking post: returns what the main thread computed, after
        // everything this worker posted before it has run.
        let (seen, onMain) = try! loop.postAndWait { (tally.total(of: worker), EventLoop.isMainThread) }
        print("worker \(worker): posted \(postsPerWorker), main thread (\(onMain)) had run \(seen) of them")
        try! done.post {
            finishedWorkers += 1
            if finishedWorkers == workers {
                ticker.cancel()
                loop.stop()
            }
        }
    }
}

try loop.run()
done.stop()

let stats = loop.stats
print("main loop stopped: \(tally.total) posts counted on the main thread")
print("stats: \(stats)")
print("eventfd writes per 1,000 posts: \(Double(stats.wakeUpsWritten) * 1000 / Double(max(stats.posted, 1)))")
exit(tally.total == workers * postsPerWorker ? 0 : 1)
