// BlockingPopTests.swift: BLPOP and friends over loopback, with I/O on
// worker loops (2) and on the core loop (0): a parked client is released
// by a push from another connection (after EXEC inside a transaction),
// in the order the clients parked, by its deadline, by CLIENT UNBLOCK, and
// its requests after the blocking one run once it is answered.
import Glibc
import TestKit
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(2))) struct BlockingPopTests {
    @Test(arguments: [0, 2]) func aPushFromAnotherClientReleasesTheFirstParkedClientFirst(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let first = try TestClient(port: server.port)
            let second = try TestClient(port: server.port)
            let pusher = try TestClient(port: server.port)
            first.send("BLPOP q 0\r\nPING\r\n")
            #expect(eventually { blockedClients(pusher) == 1 })
            second.send("BRPOP q 0\r\n")
            #expect(eventually { blockedClients(pusher) == 2 })
            #expect(pusher.roundTrip("RPUSH q a\r\n", replyBytes: 4) == ":1\r\n")
            #expect(
                first.read(count: bytes("*2\r\n$1\r\nq\r\n$1\r\na\r\n+PONG\r\n").count)
                    == bytes("*2\r\n$1\r\nq\r\n$1\r\na\r\n+PONG\r\n"))
            // Inside MULTI the push is served after EXEC.
            #expect(pusher.roundTrip("MULTI\r\n", replyBytes: 5) == "+OK\r\n")
            pusher.send("RPUSH q b c\r\nLLEN q\r\nEXEC\r\n")
            #expect(
                pusher.read(count: bytes("+QUEUED\r\n+QUEUED\r\n*2\r\n:2\r\n:2\r\n").count)
                    == bytes("+QUEUED\r\n+QUEUED\r\n*2\r\n:2\r\n:2\r\n"))
            #expect(
                second.read(count: bytes("*2\r\n$1\r\nq\r\n$1\r\nc\r\n").count) == bytes("*2\r\n$1\r\nq\r\n$1\r\nc\r\n")
            )
            #expect(pusher.roundTrip("LLEN q\r\n", replyBytes: 4) == ":1\r\n")
            #expect(blockedClients(pusher) == 0)
        }
    }

    // Redis's CLIENT LIST shows a parked client with the flag `b` and its
    // blocking command; once served, `N` again.
    @Test(arguments: [0, 2]) func clientListFlagsAParkedClientWithB(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let waiter = try TestClient(port: server.port)
            let other = try TestClient(port: server.port)
            waiter.send("CLIENT SETNAME waiter\r\nBLPOP q 0\r\n")
            #expect(waiter.readLine() == "+OK\r\n")
            #expect(eventually { blockedClients(other) == 1 })
            let parked = clientListLine(other, named: "waiter")
            #expect(parked.contains(" flags=b ") && parked.contains(" cmd=blpop "), "\(parked)")
            #expect(other.roundTrip("RPUSH q a\r\n", replyBytes: 4) == ":1\r\n")
            #expect(waiter.read(count: bytes("*2\r\n$1\r\nq\r\n$1\r\na\r\n").count).count > 0)
            let served = clientListLine(other, named: "waiter")
            #expect(served.contains(" flags=N "), "\(served)")
            waiter.send("CLIENT INFO\r\n")
            _ = waiter.readLine()
            #expect(waiter.readLine().contains(" flags=N "))
        }
    }

    @Test(arguments: [0, 2]) func aDeadlineOrClientUnblockAnswersAParkedClient(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let waiter = try TestClient(port: server.port)
            let start = monotonicMilliseconds()
            waiter.send("BRPOPLPUSH nope dst 0.2\r\nECHO after\r\n")
            #expect(waiter.read(count: bytes("*-1\r\n$5\r\nafter\r\n").count) == bytes("*-1\r\n$5\r\nafter\r\n"))
            #expect(monotonicMilliseconds() - start >= 190)
            let other = try TestClient(port: server.port)
            waiter.send("CLIENT ID\r\n")
            let id = String(waiter.readLine().filter(\.isNumber))  // "\r\n" is one Character
            waiter.send("BLMPOP 0 1 nope LEFT\r\n")
            #expect(eventually { blockedClients(other) == 1 })
            #expect(other.roundTrip("CLIENT UNBLOCK \(id) ERROR\r\n", replyBytes: 4) == ":1\r\n")
            #expect(waiter.readLine() == "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
            waiter.send("BLPOP nope 0\r\n")
            #expect(eventually { blockedClients(other) == 1 })
            #expect(other.roundTrip("CLIENT UNBLOCK \(id)\r\n", replyBytes: 4) == ":1\r\n")
            #expect(waiter.readLine() == "*-1\r\n")
        }
    }

    /// Regression: with both connections on one worker, a push read in the
    /// same loop turn as the pop serves the pop inside the same core job,
    /// and the served reply's post reached the connection before the job's
    /// results: it was dropped, and the client hung (29 of 30 tries).
    @Test(arguments: [0, 1]) func aPushInTheSameLoopTurnAsThePopReleasesIt(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            for round in 0..<20 {
                let waiter = try TestClient(port: server.port)
                let pusher = try TestClient(port: server.port)
                waiter.send("BLPOP q\(round) 0\r\n")
                pusher.send("RPUSH q\(round) x\r\n")
                let expected = bytes("*2\r\n$\(String(round).count + 1)\r\nq\(round)\r\n$1\r\nx\r\n")
                #expect(waiter.read(count: expected.count) == expected, "round \(round)")
            }
        }
    }

    @Test(arguments: [0, 2]) func aParkedClientThatClosesLeavesNoWaiterBehind(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let observer = try TestClient(port: server.port)
            do {
                let waiter = try TestClient(port: server.port)
                waiter.send("BLPOP q 0\r\n")
                #expect(eventually { blockedClients(observer) == 1 })
                waiter.finishSending()
            }
            #expect(eventually { blockedClients(observer) == 0 })
            #expect(observer.roundTrip("RPUSH q a\r\n", replyBytes: 4) == ":1\r\n")
            #expect(observer.roundTrip("LLEN q\r\n", replyBytes: 4) == ":1\r\n")
        }
    }
}

/// INFO's blocked_clients, asked on `client`.
func blockedClients(_ client: TestClient) -> Int? {
    client.send("INFO clients\r\n")
    let header = client.readLine()
    guard header.hasPrefix("$"), let length = Int(header.filter(\.isNumber)) else { return nil }
    let text = String(decoding: client.read(count: length + 2), as: UTF8.self)
    guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("blocked_clients:") }) else {
        return nil
    }
    return Int(line.dropFirst("blocked_clients:".count))
}

/// The CLIENT LIST line of the client named `name`, as `client` reads it.
private func clientListLine(_ client: TestClient, named name: String) -> String {
    client.send("CLIENT LIST\r\n")
    let header = client.readLine()
    guard header.hasPrefix("$"), let length = Int(header.filter(\.isNumber)) else { return header }
    let text = String(decoding: client.read(count: length + 2), as: UTF8.self)
    return text.split(separator: "\n").first { $0.contains(" name=\(name) ") }.map(String.init) ?? text
}
