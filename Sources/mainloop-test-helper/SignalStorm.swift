// SignalStorm.swift: a process-directed signal storm (kill(getpid(), ...))
// against every kind of wait MainLoop has: an untimed and a timed blocking
// post, an untimed and a timed wait for room in a bounded mailbox, and an
// untimed and a timed join. It needs a process of its own: a storm in the
// test runner would interrupt every other test's system calls.
//
// The handler has no SA_RESTART, so a blocked system call it interrupts
// returns EINTR (or is restarted by glibc or the kernel); MainLoop must
// retry each one and lose nothing. A storm that interrupts nothing proves
// nothing: each phase unblocks SIGUSR1 in exactly one thread (the waiter),
// so every process-directed signal goes to it, and the handler counts the
// signals it takes while that thread is inside the wait (a thread that runs
// a handler while blocked in a system call was interrupted). Each phase must
// count at least one, and its results must be exact.
import Glibc
import MainLoop
import Synchronization

/// The thread a phase waits on (a `pthread_t`), its "inside the wait" flag,
/// and the handler's counts. Atomics: the handler may read them any time.
let stormTarget = Atomic<UInt>(0)
let stormWaiting = Atomic<Bool>(false)
let stormInterrupted = Atomic<Int>(0)
let stormSignals = Atomic<Int>(0)

/// Runs `wait` with the calling thread marked as inside a wait.
func interruptible<T>(_ wait: () throws -> T) rethrows -> T {
    stormWaiting.store(true, ordering: .sequentiallyConsistent)
    defer { stormWaiting.store(false, ordering: .sequentiallyConsistent) }
    return try wait()
}

/// Sets the calling thread's SIGUSR1 mask.
func setSignalBlocked(_ blocked: Bool) {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGUSR1)
    pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, nil)
}

/// A busy job on the loop, so that callers spend their time blocked.
func spin(microseconds: Int) {
    var start = timespec(), now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    repeat {
        clock_gettime(CLOCK_MONOTONIC, &now)
    } while (now.tv_sec - start.tv_sec) * 1_000_000_000
        + (now.tv_nsec - start.tv_nsec) < microseconds * 1000
}

/// Runs `round` at least `rounds` times, and on until the phase has seen an
/// interruption, for at most 10 s in all (a storm thread starved of the CPU
/// for a whole phase, under a sanitizer on two busy cores, must not pass
/// for waits that cannot be interrupted; one that never interrupts still
/// ends in time to say so). Returns how many it ran.
func stormRounds(atLeast rounds: Int, _ round: () throws -> Void) rethrows -> Int {
    var start = timespec(), now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    var done = 0
    while done < rounds || stormInterrupted.load(ordering: .sequentiallyConsistent) == 0 {
        clock_gettime(CLOCK_MONOTONIC, &now)
        if done >= rounds && now.tv_sec - start.tv_sec >= 10 { break }
        try round()
        done += 1
    }
    return done
}

/// Runs `body` on a new thread that alone takes SIGUSR1, waits for it (on
/// this thread, signals blocked), and prints the phase's counts.
func stormPhase(_ name: String, onThisThread: Bool = false, _ body: @escaping @Sendable () throws -> String) {
    let result = Locked<String?>(nil)
    let run: @Sendable () -> Void = {
        stormTarget.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
        stormInterrupted.store(0, ordering: .sequentiallyConsistent)
        setSignalBlocked(false)
        let outcome: String
        do { outcome = try body() } catch { outcome = "threw \(error)" }
        setSignalBlocked(true)
        stormTarget.store(0, ordering: .sequentiallyConsistent)
        result.set(outcome)
    }
    if onThisThread { run() } else { startThread(run) }
    var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
    for _ in 0..<60_000 where result.get() == nil { nanosleep(&nap, nil) }
    guard let outcome = result.get() else { fail("phase \(name) did not finish within 60 s") }
    print("phase=\(name) interrupted=\(stormInterrupted.load(ordering: .sequentiallyConsistent)) \(outcome)")
}

func signalStormScenario() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        stormSignals.add(1, ordering: .relaxed)
        let target = stormTarget.load(ordering: .sequentiallyConsistent)
        if target != 0 && target == UInt(pthread_self()) && stormWaiting.load(ordering: .sequentiallyConsistent) {
            stormInterrupted.add(1, ordering: .relaxed)
        }
    }
    action.sa_flags = 0  // no SA_RESTART
    sigemptyset(&action.sa_mask)
    sigaction(SIGUSR1, &action, nil)
    // Blocked here, so in every thread made from now on (loops, the storm)
    // but the one a phase unblocks it in.
    setSignalBlocked(true)
    let calm = Locked(false)
    startThread {
        var nap = timespec(tv_sec: 0, tv_nsec: 20_000)
        while !calm.get() {
            kill(getpid(), SIGUSR1)
            nanosleep(&nap, nil)
        }
    }
    let rounds = 300
    do {
        let loop = try EventLoop.spawn(name: "storm")
        for timed in [false, true] {
            stormPhase(timed ? "timed-post-and-wait" : "untimed-post-and-wait") {
                var wrong = 0, i = 0
                _ = try stormRounds(atLeast: rounds) {
                    let value = try interruptible {
                        let job: @Sendable () -> Int = { [i] in
                            spin(microseconds: 100); return i
                        }
                        return try timed ? loop.postAndWait(timeout: .seconds(30), job) : loop.postAndWait(job)
                    }
                    if value != i { wrong += 1 }
                    i += 1
                }
                return "wrong=\(wrong)"
            }
        }
        let bounded = try EventLoop.spawn(name: "storm-bounded", mailboxCapacity: 1)
        for timed in [false, true] {
            stormPhase(timed ? "timed-room-wait" : "untimed-room-wait") {
                let ran = Locked(0)
                let posted = try stormRounds(atLeast: rounds) {
                    try interruptible {
                        let job: @Sendable () -> Void = {
                            spin(microseconds: 100); ran.increment()
                        }
                        if timed { try bounded.post(timeout: .seconds(30), job) } else { try bounded.post(job) }
                    }
                }
                try bounded.postAndWait {}
                return "lost=\(posted - ran.get()) waited=\(bounded.stats.postsThatWaited > 0)"
            }
        }
        for timed in [false, true] {
            // The main thread itself waits: join has no thread of its own.
            stormPhase(timed ? "timed-join" : "untimed-join", onThisThread: true) {
                var stopped = true
                _ = try stormRounds(atLeast: 1) {
                    // Spawned with SIGUSR1 blocked, as every thread but the
                    // waiter: the loop's thread inherits this thread's mask.
                    setSignalBlocked(true)
                    let spawned = Result { try EventLoop.spawn(name: "storm-join") }
                    setSignalBlocked(false)
                    let ending = try spawned.get()
                    try ending.schedule(after: .milliseconds(100)) { ending.stop() }
                    try interruptible { if timed { try ending.join(timeout: .seconds(30)) } else { try ending.join() } }
                    stopped = stopped && ending.hasStopped
                }
                return "stopped=\(stopped)"
            }
        }
        loop.stop()
        bounded.stop()
        try loop.join(timeout: .seconds(30))
        try bounded.join(timeout: .seconds(30))
    } catch { fail("\(error)") }
    calm.set(true)
    print("signals=\(stormSignals.load(ordering: .relaxed))")
    print("OK")
}
