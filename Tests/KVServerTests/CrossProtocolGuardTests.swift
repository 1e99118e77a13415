// CrossProtocolGuardTests.swift: a connection whose request is `POST` or
// `Host:` (an HTTP request a browser was tricked into sending) is closed
// without any reply, as redis-server 7.0 closes it (checked side by side:
// the commands before it in the same read still run, their replies are
// dropped too).
import Glibc
import TestKit
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(5))) struct CrossProtocolGuardTests {
    @Test(arguments: [0, 2])
    func anHTTPRequestClosesTheConnectionWithoutAReply(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            for request in [
                "POST / HTTP/1.1\r\nHost: example.com\r\n\r\n", "PING\r\nHost: example.com\r\n",
                "*1\r\n$4\r\npost\r\n", "SET seen 1\r\nPOST x\r\nSET late 1\r\n",
            ] {
                let client = try TestClient(port: server.port)
                client.send(request)
                #expect(client.readAll() == [], "\(request.debugDescription) got a reply")
            }
            // What came before the POST ran; what came after it did not.
            let check = try TestClient(port: server.port)
            #expect(check.roundTrip("EXISTS seen late\r\n", replyBytes: 4) == ":1\r\n")
        }
    }

    @Test func otherConnectionsAreServedAsBefore() throws {
        try withServer { server in
            let attacker = try TestClient(port: server.port)
            attacker.send("POST / HTTP/1.1\r\n")
            #expect(attacker.readAll() == [])
            let client = try TestClient(port: server.port)
            #expect(client.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
        }
    }
}
