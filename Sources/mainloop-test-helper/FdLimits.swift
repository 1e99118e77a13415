// FdLimits.swift: EMFILE at every descriptor a loop makes, and on `watch`.
// A process of its own: lowering the fd limit in the test runner would
// starve every other test.
import Glibc
import MainLoop

/// How many descriptors the process can still open (opened, counted, closed).
func freeDescriptors() -> Int {
    var opened: [Int32] = []
    while true {
        let fd = open("/dev/null", O_RDONLY)
        if fd < 0 { break }
        opened.append(fd)
    }
    for fd in opened { close(fd) }
    return opened.count
}

/// Opens descriptors until exactly `free` are left; returns them, to close.
func leaveFree(_ free: Int) -> [Int32] {
    var opened: [Int32] = []
    while true {
        let fd = open("/dev/null", O_RDONLY)
        if fd < 0 { break }
        opened.append(fd)
    }
    for _ in 0..<free { close(opened.removeLast()) }
    return opened
}

/// With 0, 1, 2, ... descriptors left, makes a loop: each attempt either
/// throws a system error naming the call that hit the limit, with every
/// descriptor it took given back, or makes a loop that runs; then a loop
/// running before the limit was reached still posts, and watches a pipe.
func fdLimitsScenario() {
    var limit = rlimit(rlim_cur: 64, rlim_max: 64)
    if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 { fail("setrlimit: \(errno)") }
    let running: EventLoop
    var pipeFDs: [Int32] = [0, 0]
    do {
        running = try EventLoop.spawn(name: "running")
    } catch { fail("spawn with fds to spare: \(error)") }
    if pipe(&pipeFDs) != 0 { fail("pipe: \(errno)") }

    for free in 0..<8 {
        let hog = leaveFree(free)
        defer { for fd in hog { close(fd) } }
        do {
            let loop = try EventLoop.spawn(name: "made-with-\(free)-free")
            let ran = try loop.postAndWait { 1 }
            loop.stop()
            try loop.join(timeout: .seconds(10))
            print("free=\(free) made ran=\(ran)")
            break
        } catch let error as EventLoopError {
            guard case .system(let call, let code) = error else { fail("free=\(free): unexpected \(error)") }
            // Every descriptor the failed attempt took was closed again.
            let left = freeDescriptors()
            print("free=\(free) error call=\(call) errno=\(code) leaked=\(free - left)")
        } catch { fail("free=\(free): \(error)") }
    }

    // At the limit: a loop that already runs needs no descriptor to take
    // posts, nor to watch one more (epoll_ctl opens nothing).
    let hog = leaveFree(0)
    defer { for fd in hog { close(fd) } }
    let readable = Locked(0)
    let readEnd = pipeFDs[0]
    do {
        let posted = try running.postAndWait { 42 }
        let watch = try running.watch(fd: readEnd, for: .read) { _ in
            var byte: UInt8 = 0
            if read(readEnd, &byte, 1) == 1 { readable.increment() }
        }
        var byte: UInt8 = 7
        if write(pipeFDs[1], &byte, 1) != 1 { fail("write: \(errno)") }
        var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        for _ in 0..<10_000 where readable.get() == 0 { nanosleep(&nap, nil) }
        try running.postAndWait {}
        watch.cancel()
        print("at_limit post=\(posted) watch_reads=\(readable.get())")
        running.stop()
        try running.join(timeout: .seconds(10))
    } catch { fail("at the limit: \(error)") }
    print("OK")
}
