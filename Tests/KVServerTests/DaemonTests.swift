// DaemonTests.swift: the kvd executable itself, as a child process: flags,
// and a SIGTERM while a client is busy, which must lose no reply to a
// command the daemon read, and exit 0 within a second.
import Foundation
import Testing

/// Starts `kvd` (built next to the test bundle) with its output on a pipe.
func startKVD(_ arguments: [String]) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("kvd")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    return (process, output)
}

/// Starts `kvd` and returns it with the port it serves.
func launchKVD(_ arguments: [String]) throws -> (Process, Pipe, Int) {
    let (process, output) = try startKVD(arguments)
    // The first line says where it serves: "kvd: serving on 127.0.0.1:PORT with ..."
    var line = Data()
    while !line.contains(10) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let range = text.range(of: "127.0.0.1:"),
          let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
        process.terminate()
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "kvd did not start: \(text)"])
    }
    return (process, output, port)
}

@Suite struct DaemonTests {
    @Test func helpExplainsEveryFlag() throws {
        let (status, output) = try runKVD(["--help"])
        #expect(status == 0)
        for flag in ["--bind", "--port", "--io-threads", "--max-clients", "--max-bulk", "--help"] {
            #expect(output.contains(flag), "--help does not explain \(flag)")
        }
        let (badStatus, badOutput) = try runKVD(["--port", "nope"])
        #expect(badStatus == 2)
        #expect(badOutput.contains("--port must be a number"))
    }

    @Test func sigtermLosesNoReplyToACommandThatWasRead() throws {
        let (process, output, port) = try launchKVD(["--port", "0", "--io-threads", "2"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = try TestClient(port: port)
        let n = 50_000
        client.send(String(repeating: "INCR k\r\n", count: n))
        let signalled = Date()
        process.interrupt()   // SIGINT; SIGTERM takes the same path
        kill(process.processIdentifier, SIGTERM)
        let replies = String(decoding: client.readAll(), as: UTF8.self)
        process.waitUntilExit()
        let elapsed = Date().timeIntervalSince(signalled)
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)

        #expect(process.terminationStatus == 0, "\(log)")
        #expect(elapsed < 2.0, "kvd took \(elapsed) s to stop")
        // The replies are a gapless prefix :1 ... :m of the INCRs ...
        let values = replies.split(separator: "\r\n").map { Int($0.dropFirst()) ?? -1 }
        #expect(values == Array(1...max(values.count, 1)).prefix(values.count).map { $0 })
        // ... and m is every command the daemon executed: none answered-less.
        let executed = log.components(separatedBy: "commands=").last.flatMap { Int($0.prefix { $0.isNumber }) }
        #expect(executed == values.count, "\(log)")
    }
}

/// Runs `kvd` to completion (for flags that make it exit at once).
func runKVD(_ arguments: [String]) throws -> (Int32, String) {
    let (process, output) = try startKVD(arguments)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
