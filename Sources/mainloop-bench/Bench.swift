// Bench.swift: the measurements; main.swift only hands the main thread to the loop.
import CAllocationCounter
import Glibc
import MainLoop

let M = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1])! : 4_000_000
let rtN = 100_000, rtWarm = 1_000, wakeN = 2_000

func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// `value` with `digits` decimals (no Foundation here).
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int64((value * scale).rounded())
    if digits == 0 { return String(scaled) }
    let whole = scaled / Int64(scale), fraction = abs(scaled % Int64(scale))
    let digitsText = String(fraction)
    return (scaled < 0 && whole == 0 ? "-" : "") + "\(whole)."
        + String(repeating: "0", count: digits - digitsText.count) + digitsText
}

func emit(_ line: String) {
    print(line)
    fflush(nil)
}

func result(_ peer: String, _ metric: String, _ value: Double, _ unit: String) {
    emit("RESULT peer=\(peer) metric=\(metric) value=\(fixed(value, unit == "us" ? 2 : 0)) unit=\(unit)")
}

func figure(_ peer: String, _ metric: String, _ value: Double, _ unit: String) {
    emit("FIGURE peer=\(peer) metric=\(metric) value=\(fixed(value, 3)) unit=\(unit)")
}

/// Emits `<metric>_p50` and `<metric>_p99` (nearest rank, microseconds) of
/// the `n` samples, sorting them in place.
func reportLatency(_ peer: String, _ metric: String, _ samples: UnsafeMutablePointer<UInt64>, _ n: Int) {
    var sorted = UnsafeMutableBufferPointer(start: samples, count: n)
    sorted.sort()
    func p(_ q: Double) -> Double { Double(sorted[max(Int((q * Double(n)).rounded(.up)) - 1, 0)]) / 1000 }
    result(peer, "\(metric)_p50", p(0.50), "us")
    result(peer, "\(metric)_p99", p(0.99), "us")
}

/// A counting semaphore (sem_t), as the C peers use.
final class Semaphore: @unchecked Sendable {
    private let sem = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    init() { sem_init(sem, 0, 0) }
    func signal() { sem_post(sem) }
    func wait() { while sem_wait(sem) != 0 && errno == EINTR {} }
    /// False when `seconds` passed first.
    func wait(seconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        while sem_timedwait(sem, &deadline) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }
}

func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let rc = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
    precondition(rc == 0, "pthread_create failed: \(rc)")
    return thread
}

// Loop-side state behind raw pointers (no exclusivity checks), touched only
// on the thread of the loop that runs the posts (the main loop's, as in the
// Swift peer; a spawned loop's in `latency-pairs`), ordered by `tpDone`.
// Zeroed: `figures()` ticks before the first throughput sets a target,
// and two leftover heap words that happened to meet under its ticks left
// `tpDone` one signal ahead for the whole run (an async route then read
// its counter before its tasks had posted).
nonisolated(unsafe) let counter = zeroed(Int.self)
nonisolated(unsafe) let target = zeroed(Int.self)
nonisolated(unsafe) let tLast = zeroed(UInt64.self)
nonisolated(unsafe) var failed = false
let tpDone = Semaphore()

func zeroed<T: FixedWidthInteger>(_ type: T.Type) -> UnsafeMutablePointer<T> {
    let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}
let loop = EventLoop.main

@inline(never)
func benchTick() {
    counter.pointee += 1
    if counter.pointee == target.pointee {
        tLast.pointee = nowNs()
        tpDone.signal()
    }
}

/// The invocation route's target: `tick:by:` takes two arguments.
final class Ticker: Invocable, @unchecked Sendable {
    static let methods = MethodTable<Ticker>()
        .method("tick:by:", Ticker.tick)
        .method("stamp:slot:", Ticker.stamp)
    func tick(_ a: Int, _ b: Int) { benchTick() }
    nonisolated(unsafe) static var wakeSamples: UnsafeMutablePointer<UInt64>?
    nonisolated(unsafe) static var wakeSignal: Semaphore?
    func stamp(_ stamp: Int, _ slot: Int) {
        Ticker.wakeSamples![slot] = nowNs() - UInt64(stamp)
        Ticker.wakeSignal!.signal()
    }
}
let ticker = Ticker()

/// One way of handing work to the loop.
struct Route: Sendable {
    let peer: String
    let post: @Sendable () -> Void  // one no-op task (benchTick)
    let roundtrip: @Sendable () -> Void  // post and block until it ran
    let wake:
        @Sendable (_ slot: Int, _ stamp: UInt64, _ samples: UnsafeMutablePointer<UInt64>, _ done: Semaphore) -> Void
}

let closureRoute = Route(
    peer: "mainloop",
    post: { try! loop.post { benchTick() } },
    roundtrip: { try! loop.postAndWait { counter.pointee += 1 } },
    wake: { slot, stamp, samples, done in
        nonisolated(unsafe) let samples = samples
        try! loop.post {
            samples[slot] = nowNs() - stamp; done.signal()
        }
    })

let asyncSemaphore = Semaphore()
let asyncSemRoute = Route(
    peer: "mainloop_asyncsem",
    post: closureRoute.post,
    roundtrip: {
        try! loop.post {
            counter.pointee += 1; asyncSemaphore.signal()
        }
        asyncSemaphore.wait()
    },
    wake: closureRoute.wake)

/// A non-Sendable core handed to the loop through LoopBound.
final class BenchCore {
    func tick() { benchTick() }
}
let boundCore = LoopBound(BenchCore(), on: loop)

let loopBoundRoute = Route(
    peer: "mainloop_loopbound",
    post: { try! boundCore.post { $0.tick() } },
    roundtrip: { try! boundCore.postAndWait { _ in counter.pointee += 1 } },
    wake: { slot, stamp, samples, done in
        nonisolated(unsafe) let samples = samples
        try! boundCore.post { _ in
            samples[slot] = nowNs() - stamp; done.signal()
        }
    })

let invocationRoute = Route(
    peer: "mainloop_invocation",
    post: { try! ticker.performSelector("tick:by:", on: loop, waitUntilDone: false, withObjects: 1, 2) },
    roundtrip: { try! ticker.performSelector("tick:by:", on: loop, waitUntilDone: true, withObjects: 1, 2) },
    wake: { slot, stamp, samples, done in
        Ticker.wakeSamples = samples
        Ticker.wakeSignal = done
        try! ticker.performSelector("stamp:slot:", on: loop, waitUntilDone: false, withObjects: Int(stamp), slot)
    })

/// (a) throughput: P producers each post m no-op tasks.
func throughput(_ route: Route, _ P: Int, _ m: Int) -> Double {
    try! loop.postAndWait {
        counter.pointee = 0; target.pointee = P * m
    }
    let first = UnsafeMutablePointer<UInt64>.allocate(capacity: P)
    defer { first.deallocate() }
    nonisolated(unsafe) let firstShared = first
    let ready = Semaphore(), go = Semaphore()
    let threads = (0..<P).map { i in
        startThread {
            ready.signal()
            go.wait()
            firstShared[i] = nowNs()
            for _ in 0..<m { route.post() }
        }
    }
    for _ in 0..<P { ready.wait() }
    for _ in 0..<P { go.signal() }
    if !tpDone.wait(seconds: 120) {
        emit("FAIL peer=\(route.peer) throughput P=\(P) timed out")
        exit(1)
    }
    for thread in threads { pthread_join(thread, nil) }
    let got = try! loop.postAndWait { counter.pointee }  // flush: nothing extra may run
    if got != P * m {
        emit("FAIL peer=\(route.peer) throughput P=\(P) counter=\(got) expected=\(P * m)")
        failed = true
    }
    let t0 = (0..<P).map { first[$0] }.min()!
    let seconds = Double(tLast.pointee - t0) / 1e9
    emit("NOTE peer=\(route.peer) throughput P=\(P) M=\(m) seconds=\(fixed(seconds, 3))")
    return Double(P * m) / seconds
}

/// (b) blocking round trip.
func roundtrip(_ route: Route) {
    let samples = UnsafeMutablePointer<UInt64>.allocate(capacity: rtN)
    defer { samples.deallocate() }
    for i in -rtWarm..<rtN {
        let t0 = nowNs()
        route.roundtrip()
        if i >= 0 { samples[i] = nowNs() - t0 }
    }
    reportLatency(route.peer, "roundtrip", samples, rtN)
}

/// (c) idle wake latency.
func wake(_ route: Route) {
    let samples = UnsafeMutablePointer<UInt64>.allocate(capacity: wakeN)
    defer { samples.deallocate() }
    let done = Semaphore()
    var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
    for i in 0..<wakeN {
        nanosleep(&nap, nil)
        route.wake(i, nowNs(), samples, done)
        done.wait()
    }
    reportLatency(route.peer, "wake", samples, wakeN)
}

func maxRSSBytes() -> Int {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss * 1024
}

/// Memory and allocation figures, on a fresh loop that is not running, so
/// everything posted stays pending.
func figures() {
    let posts = 1_000_000
    do {
        let idle = try! EventLoop(name: "memory")
        let before = maxRSSBytes()
        for _ in 0..<posts { try! idle.post { benchTick() } }
        let after = maxRSSBytes()
        figure("mainloop", "bytes_per_pending_post", Double(after - before) / Double(posts), "bytes")
        idle.stop()
    }
    allocationFigures()
}

/// Allocations per post on each route, on a loop that is not running (its
/// mailbox only grows: a handful of buffer doublings in 100,000 posts), and
/// per invocation posted to the running main loop and run.
/// With `check`, a route over its limit fails the run: 0 for a closure or
/// `LoopBound` post that captures nothing (the README's and the docs'
/// claim), 1 for a capturing closure (its context), 1 for an invocation
/// (its record, which holds the arguments: the variadic list stays on the
/// caller's stack).
func allocationFigures(check: Bool = false) {
    let idle = try! EventLoop(name: "allocations")
    let n = 100_000
    func measure(_ peer: String, _ metric: String, limit: Double, _ posts: () -> Void) {
        allocation_counter_start()
        posts()
        let perPost = Double(allocation_counter_stop()) / Double(n)
        figure(peer, metric, perPost, "allocs")
        if check && perPost >= limit + 0.01 {
            emit("FAIL peer=\(peer) \(metric)=\(perPost) over the limit \(limit)")
            failed = true
        }
    }
    measure("mainloop", "allocations_per_post", limit: 0) {
        for _ in 0..<n { try! idle.post { benchTick() } }
    }
    measure("mainloop", "allocations_per_capturing_post", limit: 1) {
        var captured = 0
        for i in 0..<n {
            captured = i
            let value = captured
            try! idle.post { counter.pointee += value }
        }
    }
    measure("mainloop_invocation", "allocations_per_post", limit: 1) {
        for _ in 0..<n { try! ticker.performSelector("tick:by:", on: idle, waitUntilDone: false, withObjects: 1, 2) }
    }
    // Posted to the running main loop and run (`idle` never runs), every
    // thread counted: at most the record, and nothing else (the method
    // reference's application to the target is on the stack;
    // MethodTable.adding). Mostly fewer: records that ran are refilled from
    // the loop's pool, how often depending on how far the poster runs ahead.
    measure("mainloop_invocation", "allocations_per_run", limit: 1) {
        for _ in 0..<n { try! ticker.performSelector("tick:by:", on: loop, waitUntilDone: false, withObjects: 1, 2) }
        try! loop.postAndWait {}
    }
    let bound = LoopBound(BenchCore(), on: idle)
    measure("mainloop_loopbound", "allocations_per_post", limit: 0) {
        for _ in 0..<n { try! bound.post { $0.tick() } }
    }
    idle.stop()
}

func run(_ route: Route, m: Int, asyncsem: Bool = false) {
    _ = throughput(route, 1, max(m / 10, 1))  // warm-up, not reported
    let stats0 = loop.stats
    result(route.peer, "throughput_p1", throughput(route, 1, m), "ops_per_s")
    result(route.peer, "throughput_p4", throughput(route, 4, m), "ops_per_s")
    let stats1 = loop.stats
    figure(
        route.peer, "eventfd_writes_per_1000_posts",
        Double(stats1.wakeUpsWritten - stats0.wakeUpsWritten) * 1000 / Double(stats1.posted - stats0.posted), "writes")
    roundtrip(route)
    if asyncsem { roundtrip(asyncSemRoute) }
    wake(route)
}

let boundedCapacity = 1_024
let boundedMode = CommandLine.arguments.dropFirst(2).first == "bounded"
/// `nolatency` and `latency`: only the closure route's throughput, on a
/// main loop made with `latencyStats: false` (mainloop_nolatency) or with
/// the default (mainloop_latency): the same process doing the same thing
/// but for the figures, which prices them in the same run.
let noLatencyMode = CommandLine.arguments.dropFirst(2).first == "nolatency"
let latencyMode = CommandLine.arguments.dropFirst(2).first == "latency"
/// `histogram FILE`: after the run, the main loop's queue-delay histogram
/// as `upper_bound_ns count` lines (bench/plot.py histogram draws it).
let histogramFile: String? = {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard let index = arguments.firstIndex(of: "--histogram"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}()
let mainExecutorMode = CommandLine.arguments.dropFirst(2).first == "mainactor-executor"
/// `allocations`: only the allocation figures, each checked against its
/// limit (`make test` runs it on the release build: what users run).
let allocationsMode = CommandLine.arguments.dropFirst(2).first == "allocations"
/// `mainactor-dispatch`: only the default MainActor route's rows (what
/// bench/mainactor-wakeups.sh compares with the executor route).
let mainDispatchMode = CommandLine.arguments.dropFirst(2).first == "mainactor-dispatch"

/// `latency-pairs [N] [--control]`: what the latency figures cost, inside
/// one process. Two spawned loops, one with the figures (the default) and
/// one without; the same closure posts go to each in turn, N pairs
/// (default 20), the order swapped every pair, one producer. The two halves
/// of a pair run within a second of each other, so a moment of the machine
/// (Performance, "Two speeds") falls on both; separate processes land in
/// different ones. `--control` keeps the figures on in both loops: the
/// method's own bias (which loop, which order).
let latencyPairsMode = CommandLine.arguments.dropFirst(2).first == "latency-pairs"

/// The `latency-pairs` run: RESULT lines for each half, then the per-pair
/// ratios (on / off) and their median.
func latencyPairs() {
    let arguments = CommandLine.arguments.dropFirst(3)
    let control = arguments.contains("--control")
    let count = arguments.first { !$0.hasPrefix("--") }
    guard let pairs = count.map({ Int($0) }) ?? 20, pairs > 0 else {
        emit("FAIL latency-pairs: the number of pairs must be a positive integer, got \(count ?? "")")
        exit(2)
    }
    let loops = [
        try! EventLoop.spawn(name: "latency-on"),
        try! EventLoop.spawn(name: "latency-off", latencyStats: control),
    ]
    // Only `post` is used; `counter`, `target` and `tLast` are written by
    // the spawned loop that runs the posts, ordered by `tpDone`.
    let names = ["mainloop_latency_pair", control ? "mainloop_latency_pair_control" : "mainloop_nolatency_pair"]
    let routes = zip(loops, names).map { target, peer in
        Route(
            peer: peer, post: { try! target.post { benchTick() } }, roundtrip: closureRoute.roundtrip,
            wake: closureRoute.wake)
    }
    for route in routes { _ = throughput(route, 1, max(M / 10, 1)) }  // warm-up, not reported
    var ratios: [Double] = []
    for pair in 0..<pairs {
        var figures = [0.0, 0.0]
        for index in pair % 2 == 0 ? [0, 1] : [1, 0] {
            figures[index] = throughput(routes[index], 1, M)
            result(routes[index].peer, "throughput_p1", figures[index], "ops_per_s")
        }
        ratios.append(figures[0] / figures[1])
    }
    ratios.sort()
    emit("NOTE latency on / off per pair: \(ratios.map { fixed($0, 3) }.joined(separator: " "))")
    let median = (ratios[(ratios.count - 1) / 2] + ratios[ratios.count / 2]) / 2
    figure("mainloop", "latency_on_off_pair_median", median, "ratio")
    for loop in loops { loop.stop() }
}

/// `invocation-pairs [N]`: an invocation's rate as a share of a closure
/// post's, inside one process. The closure route (M posts) and the
/// invocation route (M / 8 `performSelector` calls, as in the full run) go
/// to the main loop in turn, N pairs (default 20), the order swapped every
/// pair, one producer: a moment of the machine falls on both halves of a
/// pair, where the full run's rounds measure the two seconds apart.
let invocationPairsMode = CommandLine.arguments.dropFirst(2).first == "invocation-pairs"

/// The `invocation-pairs` run: a NOTE line for each pair's two rates (with
/// the machine's core-to-core round trip measured just before and just
/// after each half: `bench/spread.py` sorts the pairs by it), then
/// the per-pair shares (invocations per second over posts per second) and
/// their median.
func invocationPairs() {
    let count = CommandLine.arguments.dropFirst(3).first
    guard let pairs = count.map({ Int($0) }) ?? 20, pairs > 0 else {
        emit("FAIL invocation-pairs: the number of pairs must be a positive integer, got \(count ?? "")")
        exit(2)
    }
    let halves = [(closureRoute, max(M, 1)), (invocationRoute, max(M / 8, 1))]
    for (route, m) in halves { _ = throughput(route, 1, max(m / 10, 1)) }  // warm-up, not reported
    var shares: [Double] = []
    for pair in 0..<pairs {
        var figures = [0.0, 0.0], pingPongs = [[0.0, 0.0], [0.0, 0.0]]
        for index in pair % 2 == 0 ? [0, 1] : [1, 0] {
            let (route, m) = halves[index]
            // The machine's moment, just before and just after the half.
            pingPongs[index][0] = corePingPongNs()
            figures[index] = throughput(route, 1, m)
            pingPongs[index][1] = corePingPongNs()
        }
        // NOTE lines, not RESULT ones: the peer table and the spread read
        // every RESULT line as a round of the full run.
        // The round trips as before-after, the closure half's first.
        let around = pingPongs.map { $0.map { String(Int($0)) }.joined(separator: "-") }.joined(separator: ",")
        emit(
            "NOTE pair=\(pair) closure=\(Int(figures[0])) invocation=\(Int(figures[1])) ops_per_s"
                + " pingpong_ns_around=\(around)")
        shares.append(figures[1] / figures[0])
    }
    shares.sort()
    emit("NOTE invocation / closure post per pair: \(shares.map { fixed($0, 3) }.joined(separator: " "))")
    let median = (shares[(shares.count - 1) / 2] + shares[shares.count / 2]) / 2
    figure("mainloop_invocation", "share_of_a_post_pair_median", median, "ratio")
}

/// `mainloop-bench M throughput [PEER]`: only that route's P=1 throughput
/// runs (default: the closure route), a steady workload to profile.
/// `--repeat N` runs it N times in the same process, one RESULT line each:
/// whether a second mode belongs to a process (the same figure every
/// time) or to a moment (figures that change within the process).
let throughputRepeats: Int = {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard let index = arguments.firstIndex(of: "--repeat"), index + 1 < arguments.count else { return 1 }
    return max(Int(arguments[index + 1]) ?? 1, 1)
}()
let throughputOnly: Route? = {
    guard CommandLine.arguments.dropFirst(2).first == "throughput" else { return nil }
    return namedRoute()
}()

/// `mainloop-bench M wake [PEER] [--repeat N]`: only that route's idle
/// wake-up (2,000 samples a time), to compare and profile the loop's way
/// out of `epoll_wait` alone; `roundtrip [PEER]` likewise for the blocking
/// round trip (`mainloop_asyncsem`: a post and a semaphore, the C peers'
/// way, against which `postAndWait`'s own cost shows).
let wakeOnly: Route? = {
    guard CommandLine.arguments.dropFirst(2).first == "wake" else { return nil }
    return namedRoute()
}()
let roundtripOnly: Route? = {
    guard CommandLine.arguments.dropFirst(2).first == "roundtrip" else { return nil }
    return namedRoute(including: [asyncSemRoute])
}()

/// The route named after the mode (default: the closure route), among the
/// three ways in and `extra` (a route that differs only in the mode's
/// figure); an unknown name ends the run.
func namedRoute(including extra: [Route] = []) -> Route {
    let named = CommandLine.arguments.dropFirst(3).first.flatMap { $0.hasPrefix("--") ? nil : $0 }
    let peer = named ?? closureRoute.peer
    let routes = [closureRoute, loopBoundRoute, invocationRoute] + extra
    guard let route = routes.first(where: { $0.peer == peer }) else {
        emit("FAIL unknown peer \(peer): \(routes.map(\.peer).joined(separator: ", "))")
        exit(2)
    }
    return route
}

let boundedRoute = Route(
    peer: "mainloop_bounded\(boundedCapacity)", post: closureRoute.post,
    roundtrip: closureRoute.roundtrip, wake: closureRoute.wake)

func driver() {
    if allocationsMode {
        allocationFigures(check: true)
        exit(failed ? 1 : 0)
    }
    if latencyPairsMode {
        latencyPairs()
        exit(failed ? 1 : 0)
    }
    if invocationPairsMode {
        invocationPairs()
        exit(failed ? 1 : 0)
    }
    if let route = wakeOnly {
        for _ in 0..<throughputRepeats { wake(route) }
        exit(failed ? 1 : 0)
    }
    if let route = roundtripOnly {
        for _ in 0..<throughputRepeats { roundtrip(route) }
        exit(failed ? 1 : 0)
    }
    if let route = throughputOnly {
        _ = throughput(route, 1, max(M / 10, 1))  // warm-up, not reported
        let before = loop.stats
        for _ in 0..<throughputRepeats { result(route.peer, "throughput_p1", throughput(route, 1, M), "ops_per_s") }
        // How the run went: a loop that keeps up drains small batches and
        // is woken (an eventfd write) far more often than one that lags.
        let after = loop.stats
        let posts = Double(after.posted - before.posted)
        emit(
            "NOTE peer=\(route.peer) wakeups_per_1000_posts=\(fixed(Double(after.wakeUpsWritten - before.wakeUpsWritten) * 1000 / posts, 3))"
                + " posts_per_drain=\(fixed(posts / Double(max(after.drains - before.drains, 1)), 1))"
                + " largest_batch=\(after.largestBatch)")
        exit(failed ? 1 : 0)
    }
    let onMain = try! loop.postAndWait { EventLoop.isMainThread }
    emit("NOTE peer=mainloop loop_runs_on=\(onMain ? "main_thread" : "other_thread")")
    if noLatencyMode || latencyMode {
        let route = Route(
            peer: noLatencyMode ? "mainloop_nolatency" : "mainloop_latency", post: closureRoute.post,
            roundtrip: closureRoute.roundtrip, wake: closureRoute.wake)
        _ = throughput(route, 1, max(M / 10, 1))  // warm-up, not reported
        result(route.peer, "throughput_p1", throughput(route, 1, M), "ops_per_s")
        result(route.peer, "throughput_p4", throughput(route, 4, M), "ops_per_s")
        exit(failed ? 1 : 0)
    }
    if boundedMode {
        run(boundedRoute, m: M)
        let stats = loop.stats
        emit(
            "NOTE peer=\(boundedRoute.peer) high_water=\(stats.highWaterMark) posts_that_waited=\(stats.postsThatWaited)"
        )
        exit(failed ? 1 : 0)
    }
    if mainExecutorMode {
        runAsync(mainActorRoute("mainloop_mainactor_executor"), m: max(M / 16, 1))
        exit(failed ? 1 : 0)
    }
    if mainDispatchMode {
        runAsync(mainActorRoute("mainloop_mainactor_dispatch"), m: max(M / 16, 1))
        exit(failed ? 1 : 0)
    }
    figures()
    run(closureRoute, m: M, asyncsem: true)
    writeHistogram()
    run(loopBoundRoute, m: M)
    run(invocationRoute, m: max(M / 8, 1))
    runAsync(performRoute, m: max(M / 16, 1))
    runAsync(taskExecutorRoute, m: max(M / 16, 1))
    runAsync(mainActorRoute("mainloop_mainactor_dispatch"), m: max(M / 16, 1))
    exit(failed ? 1 : 0)
}

/// With `--histogram FILE`: the main loop's queue-delay histogram so far
/// (the closure route's throughput and round-trip runs), one bucket a line.
func writeHistogram() {
    guard let histogramFile else { return }
    let delay = loop.stats.queueDelay
    var text = "# queue delay of EventLoop.main, \(delay.count) sampled posts: upper_bound_ns count\n"
    for bucket in delay.buckets {
        let (seconds, attoseconds) = bucket.upperBound.components
        text += "\(seconds * 1_000_000_000 + attoseconds / 1_000_000_000) \(bucket.count)\n"
    }
    guard let file = fopen(histogramFile, "w") else {
        emit("FAIL cannot write \(histogramFile)")
        return
    }
    fputs(text, file)
    fclose(file)
    emit("NOTE peer=mainloop queue_delay \(delay)")
}
