// DaemonTests.swift: the kvd executable itself, as a child process: flags,
// and a SIGTERM while a client is busy, which must lose no reply to a
// command the daemon read, and exit 0 within a second.
import Foundation
import TestKit
import Testing

/// Starts `kvd` (built next to the test bundle) with its output on a pipe.
/// The snapshot goes to `dbfilename` in the temporary directory, and only
/// with save points (`save`; none by default): nothing is loaded from, or
/// saved to, the working directory.
func startKVD(
    _ arguments: [String], environment: [String: String] = [:], save: String = "",
    dbfilename: String = "kvd-test-\(UUID().uuidString).rdb"
) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("kvd")
    process.arguments = arguments + ["--save", save, "--dir", NSTemporaryDirectory(), "--dbfilename", dbfilename]
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    return (process, output)
}

/// Starts `kvd` and returns it with the port it serves.
func launchKVD(
    _ arguments: [String], environment: [String: String] = [:], save: String = "",
    dbfilename: String = "kvd-test-\(UUID().uuidString).rdb"
) throws -> (Process, Pipe, Int) {
    let (process, output) = try startKVD(arguments, environment: environment, save: save, dbfilename: dbfilename)
    // The first line says where it serves: "kvd: serving on 127.0.0.1:PORT with ..."
    let text = readOutput(output, until: "\n")
    guard let range = text.range(of: "127.0.0.1:"),
        let port = Int(text[range.upperBound...].prefix { $0.isNumber })
    else {
        process.terminate()
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "kvd did not start: \(text)"])
    }
    return (process, output, port)
}

@Suite(.timeLimit(.minutes(5))) struct DaemonTests {
    @Test func helpExplainsEveryFlag() throws {
        let (status, output) = try runKVD(["--help"])
        #expect(status == 0)
        for flag in [
            "--bind", "--port", "--io-threads", "--max-clients", "--max-bulk", "--client-output-buffer-limit",
            "--shutdown-timeout", "--requirepass", "--slowlog-log-slower-than", "--slowlog-max-len", "--help",
        ] {
            #expect(output.contains(flag), "--help does not explain \(flag)")
        }
        let (badStatus, badOutput) = try runKVD(["--port", "nope"])
        #expect(badStatus == 2)
        #expect(badOutput.contains("--port must be a number"))
    }

    // An idle kvd (no key with an expiry) ticks 10 times a second, as
    // Redis's hz 10, not 100: its main thread sleeps through the rest. The
    // save points' check (kvd always has a data directory: `launchKVD`
    // gives one) and the idle clients' (`timeout` is set) ride on the same
    // ticks: with a timer of their own each, at phases of their own, it
    // woke 21 times. A TTL brings the 10 ms tick back. Counted as
    // the main thread's voluntary context switches over one second.
    @Test func anIdleDaemonWakesTenTimesASecondNotAHundred() throws {
        let (process, _, port) = try launchKVD(["--port", "0", "--io-threads", "0"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let pid = process.processIdentifier
        // Wake-ups per second, over a window of about one second whose
        // length is measured, not assumed.
        func wakeupRate() -> Double {
            func switches() -> Int {
                let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8)) ?? ""
                let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? -1
            }
            let before = switches(), start = Date()
            Thread.sleep(forTimeInterval: 1)
            return Double(switches() - before) / Date().timeIntervalSince(start)
        }
        // A stalled kvd skips the ticks it missed (they are not made up), so
        // a lower bound takes the first of up to three windows that meets it.
        func rate(reaching floor: Double) -> Double {
            var rate = wakeupRate()
            for _ in 0..<2 where rate < floor { rate = wakeupRate() }
            return rate
        }
        // Past its start (the first line is printed): a settled, idle kvd.
        let client = try TestClient(port: port)
        #expect(client.roundTrip("CONFIG SET timeout 600\r\n", replyBytes: 5) == "+OK\r\n")
        let idle = rate(reaching: 5)
        #expect(idle >= 5 && idle <= 14, "an idle kvd woke \(idle) times a second")
        client.send("SET k v EX 100\r\n")
        #expect(client.readLine() == "+OK\r\n")
        let ticking = rate(reaching: 50)
        #expect(ticking >= 50, "with a TTL set, kvd woke only \(ticking) times a second")
    }

    // The workers share their port through SO_REUSEPORT; a second kvd on the
    // same port must not join them and take half the clients silently.
    @Test func aSecondKVDOnTheSamePortRefusesToStart() throws {
        let (process, _, port) = try launchKVD(["--port", "0", "--io-threads", "2"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let (status, output) = try runKVD(["--port", "\(port)", "--io-threads", "1"])
        #expect(status == 1, "\(output)")
        #expect(output.contains("Address already in use"), "\(output)")
        kill(process.processIdentifier, SIGTERM)
        #expect(waitForExit(process))
    }

    @Test func kvdTellsSystemdReadyStatusWatchdogAndStopping() throws {
        let listener = try NotifySocket(abstract: true)
        let (process, _, port) = try launchKVD(
            ["--port", "0", "--io-threads", "1"],
            environment: ["NOTIFY_SOCKET": listener.name, "WATCHDOG_USEC": "200000"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        #expect(client.roundTrip("SET a 1\r\n", replyBytes: 5) == "+OK\r\n")
        var received: [String] = []
        while !received.contains(where: { $0.hasPrefix("STATUS=1 clients") }) || !received.contains("WATCHDOG=1"),
            received.count < 100, let next = listener.receive()
        {
            received.append(next)
        }
        #expect(received.first?.hasPrefix("READY=1\nSTATUS=serving on 127.0.0.1:\(port);") == true, "\(received)")
        #expect(received.contains("WATCHDOG=1"), "\(received)")
        #expect(received.contains { $0.hasPrefix("STATUS=1 clients, ") }, "\(received)")
        kill(process.processIdentifier, SIGTERM)
        while received.last != "STOPPING=1", let next = listener.receive() { received.append(next) }
        #expect(received.last == "STOPPING=1", "\(received)")
        #expect(waitForExit(process))
    }

    @Test func sighupPrintsTheStatsLineAndKeepsServing() throws {
        let (process, output, port) = try launchKVD(["--port", "0", "--io-threads", "1"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        #expect(client.roundTrip("SET a 1\r\n", replyBytes: 5) == "+OK\r\n")
        kill(process.processIdentifier, SIGHUP)
        let line = readOutput(output, until: "kvd clients=")
        #expect(line.contains("kvd clients=1"), "\(line)")
        #expect(line.contains("commands=1 keys=1"), "\(line)")
        #expect(client.roundTrip("GET a\r\n", replyBytes: 7) == "$1\r\n1\r\n")
        kill(process.processIdentifier, SIGTERM)
        #expect(waitForExit(process))
        #expect(process.terminationStatus == 0)
    }

    @Test func sigintStopsLikeSigtermAndSavesTheSnapshot() throws {
        let file = "kvd-test-\(UUID().uuidString).rdb"
        let path = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(file).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (process, output, port) = try launchKVD(["--port", "0"], save: "3600 1", dbfilename: file)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        #expect(client.roundTrip("SET a 1\r\n", replyBytes: 5) == "+OK\r\n")
        kill(process.processIdentifier, SIGINT)
        #expect(waitForExit(process), "kvd did not exit 0 within 10 s of SIGINT")
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("kvd: stopping (signal \(SIGINT))"), "\(log)")
        #expect(log.contains("kvd: saving the final RDB snapshot before exiting"), "\(log)")
        let snapshot = FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
        #expect(snapshot.starts(with: Array("REDIS".utf8)), "no snapshot at \(path)")
        #expect(snapshot.count > 9 && snapshot.contains(Array("a".utf8)[0]), "the snapshot lacks the key")
    }

    /// Starts kvd with a script that never ends holding its core, so that a
    /// stop cannot finish by itself; sends SIGTERM, then `second` once the
    /// stop has begun, and returns how kvd ended (nil: not within 10 s) and
    /// what it wrote.
    private func stopHeldByAScript(
        shutdownTimeout: String, second: Int32?
    ) throws -> (status: Int32?, log: String) {
        let (process, output, port) = try launchKVD([
            "--port", "0", "--io-threads", "0", "--shutdown-timeout", shutdownTimeout,
        ])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        // Read before the signal (the stop answers what it read), and never
        // answered: the core runs it until the process ends.
        _ = client.send(bytes("EVAL \"while true do end\" 0\r\n"))
        #expect(client.waitUntilSendQueueIsEmpty(), "kvd never took the script off the socket")
        kill(process.processIdentifier, SIGTERM)
        var log = readOutput(output, until: "kvd: stopping")
        if let second {
            #expect(process.isRunning, "the first signal alone ended kvd, held by a script")
            kill(process.processIdentifier, second)
        }
        // 10 s is slack for a loaded machine, and far short of never.
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(1_000) }
        guard !process.isRunning else { return (nil, log) }
        process.waitUntilExit()
        log += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationReason == .exit ? process.terminationStatus : nil, log)
    }

    @Test func aStopHeldPastItsBudgetExitsZeroAndSaysSo() throws {
        let (status, log) = try stopHeldByAScript(shutdownTimeout: "1", second: nil)
        #expect(status == 0, "\(log)")
        #expect(log.contains("kvd: stopping (signal \(SIGTERM))"), "\(log)")
        #expect(log.contains("kvd: the stop took longer than 1.0 s"), "\(log)")
    }

    @Test func aSecondSignalDuringTheStopExitsAtOnceWithStatusOne() throws {
        // A budget the test never reaches: only the second signal ends it.
        let (status, log) = try stopHeldByAScript(shutdownTimeout: "60", second: SIGINT)
        #expect(status == 1, "\(log)")
        #expect(log.contains("kvd: signal \(SIGINT) again: exiting now"), "\(log)")
    }

    @Test func shutdownSaysInTheLogThatTheCommandStoppedIt() throws {
        let (process, output, port) = try launchKVD(["--port", "0", "--io-threads", "0"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        _ = client.send(bytes("SHUTDOWN NOSAVE\r\n"))
        #expect(waitForExit(process), "kvd did not exit within 10 s of SHUTDOWN")
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("kvd: stopping (SHUTDOWN)"), "\(log)")
        #expect(!log.contains("signal"), "\(log)")
    }

    @Test(arguments: ["0", "2"]) func sigtermAnswersEveryRequestTheClientWroteBeforeIt(ioThreads: String) throws {
        // A budget (the default is 1 s) that a sanitized build on a loaded
        // machine does not run out of: what is checked is that every request
        // written before the signal gets its reply.
        let (process, output, port) = try launchKVD([
            "--port", "0", "--io-threads", ioThreads, "--shutdown-timeout", "8",
        ])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        let n = 10_000
        let request = bytes("INCR k\r\n")
        let written = client.send(Array(repeating: request, count: n).joined().map { $0 })
        #expect(written == n * request.count, "the client could write only \(written) bytes")
        // Every byte is in kvd's socket (acknowledged on loopback) before the
        // signal: kvd promises to answer all of it.
        #expect(client.waitUntilSendQueueIsEmpty(), "kvd never took the requests off the socket")
        kill(process.processIdentifier, SIGTERM)
        let replies = String(decoding: client.readAll(), as: UTF8.self)
        #expect(waitForExit(process), "kvd did not exit within 10 s of SIGTERM")
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(log)")
        // One reply per request written, in order: :1 ... :n.
        let values = replies.split(separator: "\r\n").map { Int($0.dropFirst()) ?? -1 }
        #expect(
            values.count == written / request.count,
            "\(written / request.count) requests written, \(values.count) replies")
        #expect(values == Array(1...n), "the replies are not :1 ... :\(n) in order")
        // And the daemon executed exactly those.
        let executed = log.components(separatedBy: "commands=").last.flatMap { Int($0.prefix { $0.isNumber }) }
        #expect(executed == n, "\(log)")
    }
}

/// Waits up to 10 seconds for `process` to exit; kills it and returns false otherwise.
func waitForExit(_ process: Process) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while process.isRunning && Date() < deadline { usleep(1_000) }
    guard !process.isRunning else {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return false
    }
    process.waitUntilExit()  // reaps it and settles terminationStatus
    // Only exit status 0 is a clean stop. A crash on the way out (kvd handles
    // SIGTERM and SIGINT itself, so no signal should end it) is not: a stop
    // that traps after closing its clients looked like a clean, fast stop
    // before. Nor is a sanitizer's report, which ends a sanitized kvd with
    // status 66 (ThreadSanitizer) or 1 (AddressSanitizer).
    return process.terminationReason == .exit && process.terminationStatus == 0
}

/// What the child wrote until `marker` appeared, EOF, or 10 seconds passed
/// (reads only when poll says there is data, so it never blocks for good).
func readOutput(_ pipe: Pipe, until marker: String) -> String {
    var text = ""
    let deadline = Date().addingTimeInterval(10)
    while !text.contains(marker) && Date() < deadline {
        var ready = pollfd(fd: pipe.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 100) > 0 else { continue }
        let chunk = pipe.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
    }
    return text
}

/// Runs `kvd` to completion (for flags that make it exit at once), killing
/// it with SIGKILL and failing the test if it has not exited within `timeout`.
func runKVD(
    _ arguments: [String], timeout: Duration = .seconds(30),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> (Int32, String) {
    let (process, output) = try startKVD(arguments)
    let pid = process.processIdentifier
    let timedOut = Locked(false)
    let watchdog = DispatchWorkItem {
        timedOut.set(true)
        kill(pid, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds)), execute: watchdog)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    if timedOut.get() {
        Issue.record(
            "kvd \(arguments.joined(separator: " ")) did not exit within \(timeout) and was killed",
            sourceLocation: sourceLocation)
    }
    // Killed by a signal: 128 + its number (the shell's convention), so that
    // a signal is never read as an exit status a test expects (SIGINT as 2).
    let status =
        process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    return (status, String(decoding: data, as: UTF8.self))
}
