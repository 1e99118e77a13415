// ProtocolLimitTests.swift: Redis 7.0's protocol limits. A request may have
// more than 1,048,576 arguments (Redis accepts up to INT_MAX), and what
// bounds a client is its query buffer (Redis's client-query-buffer-limit,
// 1 GiB): past it the client is closed, with no reply.
import Glibc
import TestKit
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(5))) struct ProtocolLimitTests {
    @Test(arguments: [0, 2])
    func aRequestWithMoreThanAMillionArgumentsIsServed(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let keys = 1_048_577
            var request = Array("*\(keys + 1)\r\n$3\r\nDEL\r\n".utf8)
            request.reserveCapacity(request.count + keys * 7)
            for _ in 0..<keys { request += Array("$1\r\nk\r\n".utf8) }
            let client = try TestClient(port: server.port)
            #expect(client.send(request) == request.count)
            #expect(client.read(count: 4) == bytes(":0\r\n"))
        }
    }

    @Test(arguments: [0, 2])
    func aClientPastTheQueryBufferLimitIsClosedWithoutAReply(ioThreads: Int) throws {
        try withServer({
            $0.ioThreads = ioThreads
            $0.limits.maxQueryBuffer = 1024 * 1024
        }) { server in
            let client = try TestClient(port: server.port)
            // A 4 MB ECHO, of which 2 MB are sent: past the 1 MiB limit
            // before the request is complete.
            client.send("*2\r\n$4\r\nECHO\r\n$4000000\r\n")
            _ = client.send([UInt8](repeating: 120, count: 2_000_000))
            #expect(client.readAll() == [], "the client was answered instead of closed")
            let other = try TestClient(port: server.port)
            #expect(other.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
        }
    }

    @Test func theLimitIsAFlagWithRedissSizes() throws {
        let options = try ServerOptions.parse(["--client-query-buffer-limit", "64mb"])
        #expect(options?.limits.maxQueryBuffer == 64 * 1024 * 1024)
        #expect(throws: ServerOptions.UsageError.self) {
            try ServerOptions.parse(["--client-query-buffer-limit", "1kb"])
        }
        #expect(ServerOptions().limits.maxQueryBuffer == 1024 * 1024 * 1024)
    }
}
