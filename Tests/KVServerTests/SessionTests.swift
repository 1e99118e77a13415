// SessionTests.swift: what one connection's session does to another, over
// real sockets: a password gates every command but AUTH and HELLO, a WATCH
// sees another client's write, CLIENT KILL closes the other connection, and
// a session ends with its connection. (One connection's own replies are in
// the golden tests.)
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(2))) struct SessionTests {
    @Test func aPasswordGatesEverythingButAuthAndHello() throws {
        try withServer({ $0.requirePassword = "s3cret" }) { server in
            let client = try TestClient(port: server.port)
            let noauth = "-NOAUTH Authentication required.\r\n"
            #expect(client.roundTrip("GET a\r\n", replyBytes: noauth.utf8.count) == noauth)
            let wrong = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
            #expect(client.roundTrip("AUTH nope\r\n", replyBytes: wrong.utf8.count) == wrong)
            #expect(client.roundTrip("SET a 1\r\n", replyBytes: noauth.utf8.count) == noauth)
            #expect(client.roundTrip("AUTH s3cret\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(client.roundTrip("SET a 1\r\n", replyBytes: 5) == "+OK\r\n")

            // HELLO with AUTH authenticates and switches protocol in one step.
            let other = try TestClient(port: server.port)
            #expect(other.roundTrip("HELLO 3 AUTH default nope\r\n", replyBytes: wrong.utf8.count) == wrong)
            other.send("HELLO 3 AUTH default s3cret\r\n")
            #expect(other.read(count: 4) == bytes("%7\r\n"))
            #expect(other.readLine() == "$6\r\n")
            #expect(other.readLine() == "server\r\n")
        }
    }

    @Test func aWatchSeesAnotherClientsWriteAndExecAborts() throws {
        try withServer { server in
            let watcher = try TestClient(port: server.port)
            let writer = try TestClient(port: server.port)
            #expect(watcher.roundTrip("SET balance 10\r\nWATCH balance\r\n", replyBytes: 10) == "+OK\r\n+OK\r\n")
            #expect(writer.roundTrip("SET balance 99\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(
                watcher.roundTrip("MULTI\r\nSET balance 0\r\nEXEC\r\nGET balance\r\n", replyBytes: 27)
                    == "+OK\r\n+QUEUED\r\n*-1\r\n$2\r\n99\r\n")
            // Without a concurrent write, the same transaction runs.
            #expect(
                watcher.roundTrip("WATCH balance\r\nMULTI\r\nSET balance 0\r\nEXEC\r\n", replyBytes: 28)
                    == "+OK\r\n+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n")
        }
    }

    @Test func clientKillClosesTheOtherConnectionAndItsSessionEnds() throws {
        try withServer { server in
            let killer = try TestClient(port: server.port)
            let victim = try TestClient(port: server.port)
            victim.send("CLIENT ID\r\n")
            let id = victim.readLine()
            #expect(id.hasPrefix(":"))
            let number = id.utf8.dropFirst().prefix { $0 != 13 }
            /// The clients CLIENT LIST shows.
            func listed() -> Int {
                killer.send("CLIENT LIST\r\n")
                let length = Int(
                    String(decoding: killer.readLine().utf8.dropFirst().prefix { $0 != 13 }, as: UTF8.self))
                let text = killer.read(count: (length ?? 0) + 2)
                return text.split(separator: 10).filter { $0.starts(with: bytes("id=")) }.count
            }
            #expect(listed() == 2)
            #expect(
                killer.roundTrip("CLIENT KILL ID \(String(decoding: number, as: UTF8.self))\r\n", replyBytes: 4)
                    == ":1\r\n")
            #expect(victim.readAll().isEmpty)  // closed by the server, with nothing more sent
            // The victim's session ended with its connection.
            #expect(eventually { listed() == 1 })
        }
    }
}
