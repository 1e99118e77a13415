// ServerTests.swift: kvd over loopback: Redis 7's exact bytes for every
// command, pipelining, expiry, concurrent clients, hostile and vanishing
// clients, the client limit, and a graceful SIGTERM that loses no reply.
// The tests with an `ioThreads` argument run with I/O on worker loops (2)
// and on the core loop itself (0).
import Glibc
import TestKit
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(5))) struct ServerTests {
    @Test(arguments: [0, 2]) func everyCommandAnswersWithRedis7sExactBytes(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            for (name, request, reply) in goldenReplies {
                let client = try TestClient(port: server.port)
                client.send("FLUSHALL\r\n")
                #expect(client.read(count: 5) == bytes("+OK\r\n"))
                if name.hasPrefix("resp3 ") {
                    // Switch to RESP3; HELLO's reply holds the client id, so
                    // it is read to its end and not compared.
                    client.send("HELLO 3\r\n")
                    let end = bytes("$7\r\nmodules\r\n*0\r\n")
                    var hello: [UInt8] = []
                    while !hello.ends(with: end) {
                        let next = client.read(count: 1)
                        guard !next.isEmpty else { break }
                        hello += next
                    }
                    #expect(hello.starts(with: bytes("%7\r\n$6\r\nserver\r\n")), "\(name): HELLO 3 was not answered")
                }
                client.send(request)
                client.finishSending()
                let got = client.readAll()
                let expected = bytes(reply)
                if name == "keys" {
                    // KEYS order is the dictionary's: compare each query's
                    // reply as a set of keys, query by query.
                    let gotReplies = splitReplies(got).map(unorderedArray)
                    let expectedReplies = splitReplies(expected).map(unorderedArray)
                    #expect(gotReplies.count == expectedReplies.count, "keys: \(gotReplies.count) replies")
                    for (index, (g, e)) in zip(gotReplies, expectedReplies).enumerated() {
                        #expect(
                            g == e, "keys reply \(index): got \(String(decoding: g, as: UTF8.self).debugDescription)")
                    }
                } else {
                    #expect(got == expected, "\(name): got \(String(decoding: got, as: UTF8.self).debugDescription)")
                }
            }
        }
    }

    @Test(arguments: [0, 2]) func pipelinedRepliesKeepTheirOrder(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let client = try TestClient(port: server.port)
            let n = 20_000
            client.send(String(repeating: "INCR counter\r\n", count: n))
            let expected = (1...n).map { ":\($0)\r\n" }.joined()
            #expect(client.read(count: expected.utf8.count) == bytes(expected))
        }
    }

    // A value over the large-bulk size, written in small pieces with more
    // requests behind it: stored whole (it is read into an array of its
    // own), and the requests after it are answered after it, in order.
    @Test(arguments: [0, 2]) func aLargeValueArrivingInPiecesIsStoredWhole(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let client = try TestClient(port: server.port)
            let value = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
            let stream = multibulk([bytes("SET"), bytes("big"), value]) + bytes("STRLEN big\r\nGET big\r\n")
            var index = 0
            while index < stream.count {
                let end = min(index + 100_000, stream.count)
                _ = client.send(Array(stream[index..<end]))
                index = end
            }
            #expect(client.read(count: 5) == bytes("+OK\r\n"))
            #expect(client.readLine() == ":3000000\r\n")
            #expect(client.readLine() == "$3000000\r\n")
            #expect(client.read(count: 3_000_002) == value + bytes("\r\n"))
        }
    }

    @Test func keysExpireLazilyAndActively() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            #expect(client.roundTrip("SET lazy v PX 30\r\n", replyBytes: 5) == "+OK\r\n")
            var nap = timespec(tv_sec: 0, tv_nsec: 60_000_000)
            nanosleep(&nap, nil)
            #expect(client.roundTrip("GET lazy\r\n", replyBytes: 5) == "$-1\r\n")
            // Never touched again: only the active cycle can remove them.
            client.send((0..<100).map { "SET k\($0) v PX 20\r\n" }.joined())
            #expect(client.read(count: 500).count == 500)
            #expect(
                eventually {
                    client.send("DBSIZE\r\n")
                    return client.readLine() == ":0\r\n"
                })
        }
    }

    @Test(arguments: [0, 2]) func concurrentClientsEachSeeTheirOwnRepliesInOrder(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let clients = 8, perClient = 500
            let failures = Locked(0)
            let threads = (0..<clients).map { c in
                TestThread {
                    guard let client = try? TestClient(port: server.port) else { return failures.update { $0 += 1 } }
                    client.send((0..<perClient).map { "SET c\(c) \($0)\r\nGET c\(c)\r\n" }.joined())
                    let expected = (0..<perClient).map { "+OK\r\n$\(String($0).count)\r\n\($0)\r\n" }.joined()
                    if client.read(count: expected.utf8.count) != bytes(expected) { failures.update { $0 += 1 } }
                }
            }
            threads.join("8 clients reading their replies")
            #expect(failures.get() == 0)
        }
    }

    @Test(arguments: [0, 2]) func malformedInputClosesOnlyThatConnection(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let good = try TestClient(port: server.port)
            #expect(good.roundTrip("SET a 1\r\n", replyBytes: 5) == "+OK\r\n")
            let bad = try TestClient(port: server.port)
            bad.send("PING\r\n*1\r\n$99999999999\r\n")
            #expect(bad.readAll() == bytes("+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"))
            let garbage = try TestClient(port: server.port)
            garbage.send([0x2a, 0xff, 0x00, 0x0d, 0x0a])
            #expect(String(decoding: garbage.readAll(), as: UTF8.self).hasPrefix("-ERR Protocol error:"))
            #expect(good.roundTrip("GET a\r\n", replyBytes: 7) == "$1\r\n1\r\n")
        }
    }

    @Test(arguments: [0, 2]) func aClientThatVanishesMidPipelineHarmsNobody(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let watcher = try TestClient(port: server.port)
            for _ in 0..<20 {
                let vanishing = try TestClient(port: server.port)
                vanishing.send(String(repeating: "SET x y\r\n", count: 5_000) + "*3\r\n$3\r\nSET\r\n$1\r\nk")
                var linger = linger(l_onoff: 1, l_linger: 0)  // close with RST
                setsockopt(vanishing.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            }
            #expect(eventually { server.connectedClients == 1 })
            #expect(watcher.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
            // And the core knows only the watcher: no session outlived its
            // connection (a batch queued by a client that then closed is dropped).
            #expect(
                eventually {
                    watcher.send("CLIENT LIST\r\n")
                    let header = watcher.readLine()
                    guard let length = Int(header.dropFirst().dropLast(2)) else { return false }
                    let list = String(decoding: watcher.read(count: length + 2), as: UTF8.self)
                    return list.split(separator: "\n").count == 1
                })
        }
    }

    @Test func clientsBeyondTheLimitAreRefused() throws {
        try withServer({ $0.maxClients = 2 }) { server in
            let first = try TestClient(port: server.port), second = try TestClient(port: server.port)
            #expect(first.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
            #expect(second.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
            let third = try TestClient(port: server.port)
            #expect(third.readAll() == bytes("-ERR max number of clients reached\r\n"))
            #expect(first.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
        }
    }

    @Test func infoReportsClientsKeysAndLoops() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            #expect(client.roundTrip("SET a 1\r\n", replyBytes: 5) == "+OK\r\n")
            // kvd's loop sections are not in Redis's default INFO: ALL has them.
            client.send("INFO ALL\r\n")
            client.finishSending()
            let info = String(decoding: client.readAll(), as: UTF8.self)
            #expect(info.contains("connected_clients:1"))
            #expect(info.contains("db0:keys=1,expires=0"))
            #expect(info.contains("loop_kvd-io-0:posted="))
            #expect(info.contains("uptime_in_seconds:"))
        }
    }
}

/// Splits a stream of RESP2 replies into one byte string per top-level reply.
func splitReplies(_ stream: [UInt8]) -> [[UInt8]] {
    var replies: [[UInt8]] = []
    var index = 0
    while index < stream.count, let end = endOfReply(stream, from: index) {
        replies.append(Array(stream[index..<end]))
        index = end
    }
    // A truncated tail, kept to fail the comparison.
    if index < stream.count { replies.append(Array(stream[index...])) }
    return replies
}

/// Where the reply that starts at `start` ends, or nil if it is incomplete.
private func endOfReply(_ s: [UInt8], from start: Int) -> Int? {
    guard let lineEnd = (start..<s.count - 1).first(where: { s[$0] == 13 && s[$0 + 1] == 10 }) else { return nil }
    let header = String(decoding: s[(start + 1)..<lineEnd], as: UTF8.self)
    switch s[start] {
    case UInt8(ascii: "$"):
        guard let length = Int(header) else { return nil }
        return length < 0 ? lineEnd + 2 : lineEnd + 2 + length + 2
    case UInt8(ascii: "*"):
        guard let count = Int(header) else { return nil }
        var next = lineEnd + 2
        for _ in 0..<max(count, 0) {
            guard let end = endOfReply(s, from: next) else { return nil }
            next = end
        }
        return next
    default:
        return lineEnd + 2
    }
}

/// An array reply with its elements sorted (other replies unchanged).
func unorderedArray(_ reply: [UInt8]) -> [UInt8] {
    guard reply.first == UInt8(ascii: "*"), let headerEnd = reply.firstIndex(of: 10) else { return reply }
    let elements = splitReplies(Array(reply[(headerEnd + 1)...])).sorted { $0.lexicographicallyPrecedes($1) }
    return Array(reply[...headerEnd]) + elements.joined()
}

extension Array where Element: Equatable {
    fileprivate func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
