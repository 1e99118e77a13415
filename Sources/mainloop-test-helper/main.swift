// mainloop-test-helper: scenarios that need a process of their own (the real
// main thread, a lowered fd limit). The tests launch it and read its output.
// usage: mainloop-test-helper <scenario>
import Dispatch
import Glibc
import MainLoop

/// A scenario's own failure exits with 3: neither 1 (AddressSanitizer's
/// report) nor 66 (ThreadSanitizer's), so a test that expects this exit
/// never mistakes a sanitizer's report for it.
func fail(_ message: String) -> Never {
    print("FAIL \(message)")
    exit(3)
}

/// Starts a detached plain thread (not a loop).
func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b }
    }
    var thread = pthread_t()
    let rc = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
    if rc != 0 { fail("pthread_create: \(rc)") }
    pthread_detach(thread)
}

/// Counters only the main loop touches; `nonisolated(unsafe)` is sound here
/// because every access is on the main thread, which each job checks.
nonisolated(unsafe) var ranOnMain = 0
nonisolated(unsafe) var ranElsewhere = 0
nonisolated(unsafe) var orderViolations = 0
nonisolated(unsafe) var lastSeen = [Int](repeating: -1, count: 4)

func record(worker: Int, sequence: Int) {
    if EventLoop.isMainThread { ranOnMain += 1 } else { ranElsewhere += 1 }
    if lastSeen[worker] != sequence - 1 { orderViolations += 1 }
    lastSeen[worker] = sequence
}

/// The main thread owns EventLoop.main; four workers post to it, async and blocking.
func mainLoopScenario() {
    let workers = 4, asyncPerWorker = 5_000, blockingPerWorker = 200
    let loop = EventLoop.main
    let finished = Locked(0)
    // Posted before run(): must run once run() starts.
    do { try loop.post { if !EventLoop.isMainThread { ranElsewhere += 1 } } } catch {
        fail("post before run: \(error)")
    }
    // Waiting for the main loop on the main thread before run() would never end.
    do {
        let ran = try loop.postAndWait { true }
        fail("postAndWait before run returned \(ran)")
    } catch EventLoopError.mainLoopNotRunning {
        print("wait_before_run=mainLoopNotRunning")
    } catch { fail("postAndWait before run: \(error)") }
    let timerFired = Locked(false)
    do {
        try loop.schedule(after: .milliseconds(1)) { timerFired.set(EventLoop.isMainThread) }
    } catch { fail("schedule: \(error)") }
    for w in 0..<workers {
        startThread {
            var sequence = 0
            for i in 0..<(asyncPerWorker + blockingPerWorker) {
                let n = sequence
                sequence += 1
                do {
                    if i % 25 == 0 {
                        let onMain = try loop.postAndWait { () -> Bool in
                            record(worker: w, sequence: n)
                            return EventLoop.isMainThread
                        }
                        if !onMain { fail("postAndWait ran off the main thread") }
                    } else {
                        try loop.post { record(worker: w, sequence: n) }
                    }
                } catch { fail("worker \(w): \(error)") }
            }
            if finished.increment() == workers { loop.stop() }
        }
    }
    do { try loop.run() } catch { fail("run: \(error)") }
    let expected = workers * (asyncPerWorker + blockingPerWorker)
    let stats = loop.stats
    print(
        "ran_on_main=\(ranOnMain) ran_elsewhere=\(ranElsewhere) order_violations=\(orderViolations) timer_on_main=\(timerFired.get()) \(stats)"
    )
    guard ranOnMain == expected, ranElsewhere == 0, orderViolations == 0, timerFired.get(),
        stats.posted == stats.executed, stats.pending == 0
    else { fail("expected \(expected) posts on the main thread") }
    do { try loop.post {}; fail("post after stop was accepted") } catch EventLoopError.shutDown {} catch {
        fail("\(error)")
    }
    print("OK")
}

/// With the fd limit reached, making a loop throws `.system` naming the call.
func fdLimitScenario() {
    var limit = rlimit(rlim_cur: 64, rlim_max: 64)
    if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 { fail("setrlimit: \(errno)") }
    var opened: [Int32] = []
    while true {
        let fd = open("/dev/null", O_RDONLY)
        if fd < 0 { break }
        opened.append(fd)
    }
    do {
        _ = try EventLoop(name: "starved")
        fail("a loop was made with no fds left")
    } catch let error as EventLoopError {
        guard case .system(let call, let code) = error else { fail("unexpected \(error)") }
        print("system_error call=\(call) errno=\(code) message=\(error)")
    } catch { fail("\(error)") }
    // The main loop is made without throwing; its first throwing call reports the failure.
    do {
        try EventLoop.main.post {}
        fail("EventLoop.main accepted a post with no fds left")
    } catch let error as EventLoopError {
        guard case .system = error else { fail("main: unexpected \(error)") }
        print("main_error \(error)")
    } catch { fail("\(error)") }
    print("OK")
}

/// The seed scenario: a worker thread performs a three-argument method on
/// the main thread, one argument nil, and waits for its result.
final class Greeter: Invocable, @unchecked Sendable {
    // `@unchecked Sendable`: `calls` is only touched on the main thread.
    static let methods = MethodTable<Greeter>()
        .method("greet:title:times:", Greeter.greet)
        .method("refuse", Greeter.refuse)
    var calls: [String] = []
    func greet(_ count: Int, _ title: String?, _ times: Int) -> Int {
        calls.append("\(count),\(title ?? "nil"),\(times) on_main=\(EventLoop.isMainThread)")
        return times
    }
    func refuse() throws { throw HelperError.refused }
}
enum HelperError: Error { case refused }

func performSelectorScenario() {
    let greeter = Greeter()
    startThread {
        do {
            let result = try greeter.performSelector(
                onMainThread: "greet:title:times:", waitUntilDone: true, withObjects: 2, nil, 3)
            let call = try EventLoop.main.postAndWait { greeter.calls.first ?? "" }
            print(
                "result=\(result as? Int ?? -1) on_main=\(call.hasSuffix("on_main=true")) arguments=\(call.split(separator: " ")[0])"
            )
            // Not waited for: the error goes to standard error, naming loop, selector and error.
            try greeter.performSelector(onMainThread: "refuse", waitUntilDone: false)
            try EventLoop.main.post { EventLoop.main.stop() }
        } catch { fail("worker: \(error)") }
    }
    do { try EventLoop.main.run() } catch { fail("run: \(error)") }
    print("OK")
}

/// EventLoop.main with a bounded mailbox, configured before first use; a
/// worker overruns it and must wait for room.
func mainBoundedScenario() {
    do { try EventLoop.configureMain(mailboxCapacity: 8) } catch { fail("configureMain: \(error)") }
    let loop = EventLoop.main
    let count = Locked(0)
    startThread {
        do {
            for _ in 0..<1_000 { try loop.post { _ = count.increment() } }
            try loop.post { loop.stop() }
        } catch { fail("worker: \(error)") }
    }
    do { try loop.run() } catch { fail("run: \(error)") }
    print("count=\(count.get()) \(loop.stats)")
    guard count.get() == 1_000, loop.stats.highWaterMark <= 8 else { fail("bounded main lost or overran") }
    print("OK")
}

/// EventLoop.main with Swift concurrency and libdispatch: DispatchQueue.main
/// blocks, @MainActor tasks, MainActor.run, assumeIsolated from a plain loop
/// callback and mailbox posts all run on the main thread, and all complete
/// before stop(). With `mainExecutor`, the opt-in main executor is installed
/// first, and MainActor jobs must show up in the mailbox's counters.
func concurrencyScenario(mainExecutor: Bool) {
    if mainExecutor {
        do { try EventLoop.installMainExecutor() } catch { fail("installMainExecutor: \(error)") }
    }
    let loop = EventLoop.main
    let n = 200
    let dispatchRan = Locked(0), mainActorRan = Locked(0), mailboxRan = Locked(0)
    let runRan = Locked(0), assumeRan = Locked(0), offMain = Locked(0)
    @Sendable func on(_ counter: Locked<Int>) {
        if !EventLoop.isMainThread { _ = offMain.increment() }
        _ = counter.increment()
    }
    startThread {
        for _ in 0..<n {
            DispatchQueue.main.async { on(dispatchRan) }
            Task { @MainActor in on(mainActorRan) }
            do { try loop.post { on(mailboxRan) } } catch { fail("post: \(error)") }
        }
        Task.detached { await MainActor.run { on(runRan) } }
        do {
            try loop.post { MainActor.assumeIsolated { on(assumeRan) } }
            // Bounded wait for everything, then stop.
            for _ in 0..<10_000 {
                let done = try loop.postAndWait {
                    dispatchRan.get() == n && mainActorRan.get() == n && mailboxRan.get() == n
                        && runRan.get() == 1 && assumeRan.get() == 1
                }
                if done { break }
                var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                nanosleep(&nap, nil)
            }
            loop.stop()
        } catch { fail("worker: \(error)") }
    }
    do { try loop.run() } catch { fail("run: \(error)") }
    print(
        "dispatch=\(dispatchRan.get()) mainactor=\(mainActorRan.get()) mainactor_run=\(runRan.get()) assume=\(assumeRan.get()) mailbox=\(mailboxRan.get()) off_main=\(offMain.get())"
    )
    let stats = loop.stats
    print("main_executor=\(EventLoop.isMainExecutor) \(stats)")
    // Through the opt-in executor, MainActor jobs are mailbox posts too.
    if mainExecutor && stats.posted < UInt64(2 * n) { fail("MainActor jobs did not go through the mailbox") }
    // Each MainActor task is one mailbox post, not two (a job run on the
    // wrong executor identity would be enqueued again by the runtime).
    if mainExecutor && stats.posted >= UInt64(3 * n) { fail("MainActor jobs were enqueued twice") }
    if !mainExecutor && stats.posted >= UInt64(2 * n) {
        fail("MainActor jobs went through the mailbox without the opt-in")
    }
    print("OK")
}

/// A method that traps, performed on a spawned loop: the process dies, and
/// standard error names the loop and the selector first.
final class Bomb: Invocable, Sendable {
    static let methods = MethodTable<Bomb>().method("explode:", Bomb.explode)
    func explode(_ code: Int) -> Int { fatalError("explode: \(code)") }
}

func trapScenario(waiting: Bool) {
    do {
        let worker = try EventLoop.spawn(name: "worker")
        try Bomb().performSelector("explode:", on: worker, waitUntilDone: waiting, withObjects: 42)
        // The whole 5 s: the crash handlers' signals interrupt the nap, and
        // a nap cut short reached the FAIL below before the trap ended the
        // process (a run the test took for the trap while it exited 1).
        var nap = timespec(tv_sec: 5, tv_nsec: 0), left = timespec()
        while nanosleep(&nap, &left) != 0 && errno == EINTR { nap = left }
    } catch { fail("\(error)") }
    fail("the trapping method did not end the process")
}

/// A thread-safe box for the scenarios above.
final class Locked<Value: Sendable>: @unchecked Sendable {
    fileprivate var value: Value
    // Heap-allocated: a mutex must not move while it is held.
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()
    init(_ value: Value) { self.value = value }
    func get() -> Value { pthread_mutex_lock(mutex); defer { pthread_mutex_unlock(mutex) }; return value }
    func set(_ new: Value) { pthread_mutex_lock(mutex); value = new; pthread_mutex_unlock(mutex) }
}

extension Locked where Value == Int {
    @discardableResult func increment() -> Int {
        pthread_mutex_lock(mutex); defer { pthread_mutex_unlock(mutex) }; value += 1; return value
    }
}

/// A @MainActor class, Invocable in the recommended form.
@MainActor final class MainCounter: Invocable {
    nonisolated static let methods = MethodTable<MainCounter>(isolation: .mainActor)
        .method("add:", MainCounter.add)
    var total = 0
    func add(_ x: Int) -> Int { total += x; return total }
}

/// The same class, Invocable in the plain form (no isolation stated).
@MainActor final class PlainMainCounter: Invocable {
    nonisolated static let methods = MethodTable<PlainMainCounter>().method("add:", PlainMainCounter.add)
    var total = 0
    func add(_ x: Int) -> Int { total += x; return total }
}

/// MainActor classes performed from a worker thread: on the main loop they
/// run and return typed results; on another loop they are refused before
/// anything is posted.
func mainActorInvocableScenario() {
    let counter = MainActor.assumeIsolated { MainCounter() }
    let plain = MainActor.assumeIsolated { PlainMainCounter() }
    startThread {
        do {
            let first: Int = try counter.performSelector(onMainThread: "add:", withObjects: 5, returning: Int.self)
            let second = try counter.performSelector(onMainThread: "add:", withObjects: 2, returning: Int.self)
            let plainResult = try plain.performSelector(onMainThread: "add:", withObjects: 3, returning: Int.self)
            let io = try EventLoop.spawn(name: "io")
            var refusal = "accepted"
            do { _ = try counter.performSelector("add:", on: io, withObjects: 1, returning: Int.self) } catch {
                refusal = "\(error)"
            }
            io.stop()
            print("typed=\(first),\(second) plain=\(plainResult) elsewhere=\(refusal)")
            try EventLoop.main.post { EventLoop.main.stop() }
        } catch { fail("worker: \(error)") }
    }
    do { try EventLoop.main.run() } catch { fail("run: \(error)") }
    print("OK")
}

/// installMainExecutor() on the main thread, then again: the second call is refused.
func installMainExecutorTwiceScenario() {
    func attempt() -> String {
        do { try EventLoop.installMainExecutor(); return "installed" } catch { return "\(error)" }
    }
    let first = attempt()
    let second = attempt()
    print("first=\(first) second=\(second) isMainExecutor=\(EventLoop.isMainExecutor)")
}

/// Milliseconds on the monotonic clock.
func monotonicMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

/// How late EventLoop.main's turns came, added up by a 10 ms ticker (gaps
/// over 20 ms count beyond their 10). `@unchecked Sendable`: touched only
/// on the main loop's thread, then read after its run.
final class Lateness: @unchecked Sendable {
    var last = monotonicMilliseconds()
    var lost = 0
}

/// systemd's notify protocol, with NOTIFY_SOCKET and WATCHDOG_USEC set by
/// the test: READY and STATUS at start, the watchdog petted from
/// EventLoop.main's timer while the loop runs 300 ms, STOPPING at the end.
func systemdScenario() {
    do {
        // Read first: the run is counted from before the 300 ms were asked,
        // so that a pause before run() cannot make it look shorter.
        let start = monotonicMilliseconds()
        try ServiceNotifier.notify(.ready, .status("serving\nwell"))
        guard let timer = try EventLoop.main.keepServiceWatchdogAlive() else { fail("watchdog off") }
        // A pet due while the process stalled is skipped, not made up: the
        // time the loop's turns came late is printed, for the test to
        // discount.
        let lateness = Lateness()
        let ticker = try EventLoop.main.schedule(every: .milliseconds(10)) {
            let now = monotonicMilliseconds()
            if now - lateness.last > 20 { lateness.lost += now - lateness.last - 10 }
            lateness.last = now
        }
        try EventLoop.main.schedule(after: .milliseconds(300)) {
            timer.cancel()
            ticker.cancel()
            EventLoop.main.stop()
        }
        try EventLoop.main.run()
        let end = monotonicMilliseconds()
        try ServiceNotifier.notify(.stopping)
        // How long the loop ran, and how much of it was lost to stalls, for
        // the test to count the pets against.
        print("ran_ms=\(end - start) lost_ms=\(lateness.lost)")
    } catch { fail("\(error)") }
    print("OK")
}

switch CommandLine.arguments.dropFirst().first {
case "main-loop": mainLoopScenario()
case "fd-limit": fdLimitScenario()
case "perform-selector": performSelectorScenario()
case "main-bounded": mainBoundedScenario()
case "concurrency": concurrencyScenario(mainExecutor: false)
case "trap": trapScenario(waiting: true)
case "trap-async": trapScenario(waiting: false)
case "concurrency-main-executor": concurrencyScenario(mainExecutor: true)
case "install-main-executor-twice": installMainExecutorTwiceScenario()
case "mainactor-invocable": mainActorInvocableScenario()
case "systemd": systemdScenario()
case "signal-storm": signalStormScenario()
case "fd-limits": fdLimitsScenario()
case "fork-with-live-loops": forkWithLiveLoopsScenario()
case "fork-then-return-into-loop": forkThenReturnIntoLoopScenario()
case "timerfds": timerFDsScenario()
default: fail("usage: mainloop-test-helper <scenario>")
}
