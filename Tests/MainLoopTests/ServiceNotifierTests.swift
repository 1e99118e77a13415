// ServiceNotifierTests.swift: systemd's notify protocol against a datagram
// socket of our own, passed as NOTIFY_SOCKET the way systemd's own tests do:
// a path and an abstract name, the states' exact wording, and the watchdog
// petted from a loop's timer in a child process.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(2))) struct ServiceNotifierTests {
    @Test func statesArriveInOneDatagramAtAPathAndAtAnAbstractName() throws {
        for abstract in [false, true] {
            let listener = try NotifySocket(abstract: abstract)
            try ServiceNotifier.notify([.ready, .status("3 clients\nconnected\r\nnow")], to: listener.name)
            #expect(listener.receive() == "READY=1\nSTATUS=3 clients connected  now")
            try ServiceNotifier.notify([.stopping], to: listener.name)
            #expect(listener.receive() == "STOPPING=1")
            try ServiceNotifier.notify([.watchdog], to: listener.name)
            #expect(listener.receive() == "WATCHDOG=1")
            try ServiceNotifier.notify([.reloading], to: listener.name)
            let reloading = listener.receive() ?? ""
            #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), "\(reloading)")
        }
    }

    @Test func aBadSocketNameIsRefusedAndAMissingOneIsASystemError() throws {
        #expect(throws: EventLoopError.self) { try ServiceNotifier.notify([.ready], to: "relative/path") }
        #expect(throws: EventLoopError.self) {
            try ServiceNotifier.notify([.ready], to: "/" + String(repeating: "x", count: 200))
        }
        do {
            try ServiceNotifier.notify([.ready], to: "/nonexistent/mainloop-notify.sock")
            Issue.record("sending to a socket nobody listens on succeeded")
        } catch let error as EventLoopError {
            guard case .system(call: "sendto", errno: _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func aChildProcessReportsReadyPetsTheWatchdogFromItsLoopAndReportsStopping() throws {
        let listener = try NotifySocket(abstract: false)
        let (exit, output) = try runHelper(
            "systemd", environment: ["NOTIFY_SOCKET": listener.name, "WATCHDOG_USEC": "100000"])
        #expect(exit == .exited(0), "\(exit): \(output)")
        var received: [String] = []
        while received.last != "STOPPING=1", let next = listener.receive() { received.append(next) }
        #expect(received.first == "READY=1\nSTATUS=serving well", "\(received)")
        // A pet every 50 ms (half of WATCHDOG_USEC) for as long as the loop
        // ran (300 ms asked; longer on a busy machine or under a sanitizer):
        // counted against the run time the helper measured, not a fixed window.
        // Never more than that; at least all but two of the pets due in the
        // time the loop was not stalled (the timer skips the pets a stalled
        // process missed: a 150 ms stall under TSan loses three).
        let pets = received.filter { $0 == "WATCHDOG=1" }.count
        let figures = output.split(separator: "\n").first { $0.hasPrefix("ran_ms=") }?.split(separator: " ")
        func figure(_ name: String) -> Int? {
            figures?.first { $0.hasPrefix(name + "=") }.flatMap { Int($0.dropFirst(name.count + 1)) }
        }
        let ran = figure("ran_ms") ?? 0, lost = figure("lost_ms") ?? 0
        #expect(ran >= 300 && figure("lost_ms") != nil, "\(output)")
        #expect(
            pets >= (ran - lost) / 50 - 2 && pets <= ran / 50 + 1,
            "\(pets) pets in \(ran) ms, \(lost) of them stalled: \(received)")
        #expect(received.last == "STOPPING=1", "\(received)")
    }

    @Test func theWatchdogIsOffWhenWatchdogPIDNamesAnotherProcess() throws {
        let listener = try NotifySocket(abstract: true)
        let (exit, output) = try runHelper(
            "systemd", environment: ["NOTIFY_SOCKET": listener.name, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "1"])
        // The scenario's own failure exit (3), not a sanitizer's (1, 66) or a signal.
        #expect(exit == .exited(3) && output.contains("FAIL watchdog off"), "\(exit): \(output)")
    }
}
