// mainloop-stress: a short, self-checking workout of every way into a loop,
// sized to run under valgrind in CI (the leak check wants 0 bytes
// definitely lost). Exits 0 only if every post ran exactly once.
// usage: mainloop-stress [posts-per-producer]
import Glibc
import MainLoop

let perProducer = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2_000 : 2_000
let producers = 4

final class Tally: Invocable, @unchecked Sendable {
    // Touched only on the loop that performs its selectors (and read after a flush).
    static let methods = MethodTable<Tally>().method("add:", Tally.add)
    var total = 0
    func add(_ n: Int) -> Int {
        total += n
        return total
    }
}

func check(_ condition: Bool, _ message: String) {
    if !condition {
        print("FAIL \(message)")
        exit(1)
    }
}

func thread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var handle = pthread_t()
    pthread_create(
        &handle, nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
    return handle
}

func waitUntilStopped(_ loop: EventLoop) {
    for _ in 0..<10_000 where !loop.hasStopped {
        var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&nap, nil)
    }
    check(loop.hasStopped, "loop \(loop.name) did not stop")
}

do {
    for capacity in [nil, 64] as [Int?] {
        let loop = try EventLoop.spawn(name: "stress", mailboxCapacity: capacity)
        let tally = Tally()
        nonisolated(unsafe) let seen = UnsafeMutablePointer<Int>.allocate(capacity: producers)
        seen.initialize(repeating: 0, count: producers)
        let ticks = try loop.schedule(every: .milliseconds(1)) {}
        var fds: [Int32] = [0, 0]
        check(pipe(&fds) == 0, "pipe")
        let watch = try loop.watch(fd: fds[0], for: .read) { _ in }
        let workers = (0..<producers).map { p in
            thread {
                for n in 0..<perProducer {
                    switch n % 4 {
                    case 0:
                        try! loop.post {
                            check(seen[p] == n, "order"); seen[p] += 1
                        }
                    case 1:
                        _ = try! loop.postAndWait {
                            check(seen[p] == n, "order"); seen[p] += 1
                        }
                    case 2:
                        try! loop.post {
                            check(seen[p] == n, "order"); seen[p] += 1
                        }
                        try! tally.performSelector("add:", on: loop, waitUntilDone: false, withObjects: 1)
                    default:
                        try! loop.post {
                            check(seen[p] == n, "order"); seen[p] += 1
                        }
                        _ = try! tally.performSelector("add:", on: loop, waitUntilDone: true, withObjects: 1)
                    }
                }
            }
        }
        for worker in workers { pthread_join(worker, nil) }
        let total = try loop.postAndWait { tally.total }
        check((0..<producers).allSatisfy { seen[$0] == perProducer }, "every post ran exactly once")
        check(total == producers * (perProducer / 2), "every invocation ran exactly once")
        ticks.cancel()
        watch.cancel()
        close(fds[0])
        close(fds[1])
        _ = try loop.schedule(after: .seconds(60)) {}  // cancelled by stop()
        loop.stop()
        waitUntilStopped(loop)
        seen.deallocate()
        print("stress: capacity=\(capacity.map(String.init) ?? "unbounded") \(loop.stats)")
    }
    // A loop stopped before it ran: its queued work is released, not leaked.
    let idle = try EventLoop(name: "never-ran")
    for i in 0..<1_000 { try idle.post { _ = i } }
    idle.stop()
    print("stress: \(2 * producers * perProducer) posts checked; OK")
} catch {
    check(false, "\(error)")
}
