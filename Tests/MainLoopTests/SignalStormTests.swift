// SignalStormTests.swift: a process-directed signal storm against every
// kind of wait (blocking posts, room waits, join; untimed and timed), in a
// child process (mainloop-test-helper signal-storm), with the interrupted
// waits counted: each phase must see at least one, and lose nothing.
import Testing

@Suite(.timeLimit(.minutes(5))) struct SignalStormTests {
    @Test func aProcessDirectedSignalStormInterruptsEveryKindOfWaitAndLosesNothing() throws {
        let run = try runHelper("signal-storm")
        #expect(run.exit == .exited(0), "\(run.output)")
        let expected = [
            "untimed-post-and-wait": "wrong=0",
            "timed-post-and-wait": "wrong=0",
            "untimed-room-wait": "lost=0 waited=true",
            "timed-room-wait": "lost=0 waited=true",
            "untimed-join": "stopped=true",
            "timed-join": "stopped=true",
        ]
        for (phase, result) in expected {
            let line = run.output.split(separator: "\n").first { $0.hasPrefix("phase=\(phase) ") }
            guard let line else {
                Issue.record("no line for phase \(phase): \(run.output)")
                continue
            }
            let fields = line.split(separator: " ")
            let interrupted = fields.first { $0.hasPrefix("interrupted=") }.flatMap { Int($0.dropFirst(12)) } ?? 0
            #expect(interrupted > 0, "the storm interrupted no \(phase): it proved nothing there (\(line))")
            #expect(line.hasSuffix(" \(result)"), "\(line)")
        }
        #expect(run.output.hasSuffix("OK\n"), "\(run.output)")
    }
}
