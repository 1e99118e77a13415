import Glibc
import MainLoop

// An ordinary single-threaded core: not Sendable, no locks, no annotations.
final class Store {
    var items: [String: Int] = [:]
    func apply(_ key: String, _ value: Int) { items[key] = value }
    func expire() { items = items.filter { $0.value > 0 } }
}

// main.swift stays synchronous: the main thread must be the loop's.
let core = EventLoop.main
let store = LoopBound(Store(), on: core)  // the main loop owns the store

// A loop on a thread of its own, and a worker on it that uses the store.
let io = try EventLoop.spawn(name: "io")
try io.post {
    do {
        try store.post { $0.apply("a", 1) }  // fire-and-forget, in order
        // Blocks until the main thread has run it:
        let count = try store.postAndWait { $0.items.count }
        // Withdrawn (never runs) unless the loop starts it within 50 ms:
        let a = try store.postAndWait(timeout: .milliseconds(50)) {
            $0.items["a"]
        }
        print(count, a ?? 0, EventLoop.isMainThread)  // 1 1 false
        try core.post { core.stop() }
    } catch {
        print("refused: \(error)")
    }
}

// Timers, file descriptors, signals: all on the loop's thread, where
// withValue reaches the store directly.
let tick = try core.schedule(every: .seconds(1)) {
    store.withValue { $0.expire() }
}
_ = try core.onSignal(SIGTERM) { core.stop() }
// Errors that nobody waits for:
core.errorHandler = { report in print("lost: \(report)") }

try core.run()  // until stop(); then the final drain has run
io.stop()
try io.join(timeout: .seconds(5))  // its thread has finished
print(core.stats)  // posted=… executed=… wakeups=… drains=… …
