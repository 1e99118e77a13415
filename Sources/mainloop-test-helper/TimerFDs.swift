// TimerFDs.swift: how many timerfds a loop opens. One, its timers' own: a
// base with libevent's precise timer would open a second, and set it on
// every turn of the loop. A process of its own, so that no other test's
// loops come and go while the descriptors are counted.
import Glibc
import MainLoop
import Synchronization

/// The process's open timerfds (/proc/self/fd links to "anon_inode:[timerfd]").
func openTimerFDs() -> Int {
    guard let directory = opendir("/proc/self/fd") else { fail("opendir /proc/self/fd: \(errno)") }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var target = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
        if length > 0,
            String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "anon_inode:[timerfd]"
        {
            count += 1
        }
    }
    return count
}

/// Prints the timerfds open before any loop, and how many more with three
/// loops running, then with a timer fired on each.
func timerFDsScenario() {
    do {
        let before = openTimerFDs()
        let loops = try (0..<3).map { try EventLoop.spawn(name: "timerfds-\($0)") }
        for loop in loops { try loop.postAndWait {} }
        let running = openTimerFDs()
        let fired = Atomic<Int>(0)
        for loop in loops { try loop.schedule(after: .milliseconds(1)) { fired.add(1, ordering: .relaxed) } }
        for _ in 0..<10_000 where fired.load(ordering: .relaxed) < loops.count { usleep(1_000) }
        if fired.load(ordering: .relaxed) != loops.count { fail("timers fired: \(fired.load(ordering: .relaxed))") }
        let withTimers = openTimerFDs()
        for loop in loops {
            loop.stop()
            try loop.join(timeout: .seconds(10))
        }
        print("before=\(before) running=\(running - before) with_timers=\(withTimers - before)")
    } catch { fail("\(error)") }
    print("OK")
}
