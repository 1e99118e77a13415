// ChildProcessTests.swift: behaviour that needs a process of its own (the
// real main thread, a lowered fd limit), checked through the test helper.
import Foundation
import TestKit
import Testing

/// How a child process ended: checked exactly, so that a signal, or a
/// sanitizer's report (exit status 66 or 1), is never taken for the
/// failure a test expects.
enum ChildExit: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "killed by signal \(signal)"
        }
    }
}

/// Runs `mainloop-test-helper <scenario>` (built next to the test bundle)
/// with a watchdog, and returns how it ended and its output.
func runHelper(
    _ scenario: String, timeout: Duration = .seconds(60), environment: [String: String] = [:]
) throws -> (exit: ChildExit, output: String) {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var executable = directory.appendingPathComponent("mainloop-test-helper")
    if !FileManager.default.fileExists(atPath: executable.path) {
        // Swift Testing may run from the .xctest bundle's inner directory.
        executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("mainloop-test-helper")
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = [scenario]
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    // The watchdog kills (SIGKILL: a hung child may ignore or block SIGTERM),
    // which closes the pipe and ends the read below.
    let timedOut = Locked(false)
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem {
        timedOut.withValue { $0 = true }
        kill(pid, SIGKILL)
    }
    let (seconds, _) = timeout.components
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(seconds)), execute: watchdog)
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    var output = String(decoding: data, as: UTF8.self)
    if timedOut.current {
        Issue.record("mainloop-test-helper \(scenario) did not exit within \(timeout) and was killed")
        output += "\n[killed by the test's watchdog after \(timeout)]\n"
    }
    let exit: ChildExit =
        process.terminationReason == .uncaughtSignal
        ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
    return (exit, output)
}

@Suite(.timeLimit(.minutes(5))) struct ChildProcessTests {
    @Test func mainLoopRunsEveryWorkersPostsOnTheRealMainThread() throws {
        let (exit, output) = try runHelper("main-loop")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(output.contains("wait_before_run=mainLoopNotRunning"), "\(output)")
        #expect(output.contains("ran_on_main=20800 ran_elsewhere=0 order_violations=0 timer_on_main=true"), "\(output)")
        #expect(output.hasSuffix("OK\n"), "\(output)")
    }

    @Test func hittingTheFdLimitThrowsASystemErrorNamingTheCall() throws {
        let (exit, output) = try runHelper("fd-limit")
        #expect(exit == .exited(0), "\(exit): \(output)")
        #expect(output.contains("system_error call=eventfd errno=24"), "\(output)")
        #expect(output.contains("main_error eventfd failed: Too many open files"), "\(output)")
    }
}
