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
            // EXEC is aborted, as Redis's execCommandAbort answers it.
            let aborted = "-EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n"
            #expect(client.roundTrip("EXEC\r\n", replyBytes: aborted.utf8.count) == aborted)
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

    @Test func clientListIdListsInTheArgumentsOrderRepeatsIncluded() throws {
        try withServer { server in
            let first = try TestClient(port: server.port)
            let second = try TestClient(port: server.port)
            /// A client's id, as it reports it.
            func id(_ client: TestClient) -> String {
                client.send("CLIENT ID\r\n")
                return String(client.readLine().dropFirst().prefix { $0.isNumber })
            }
            let (one, two) = (id(first), id(second))
            first.send("CLIENT LIST ID \(two) 999999 \(one) \(two)\r\n")
            let length = Int(first.readLine().dropFirst().prefix { $0.isNumber }) ?? 0
            let lines = String(decoding: first.read(count: length + 2), as: UTF8.self).split(separator: "\n")
            let ids = lines.compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("id=") }.map { String($0.dropFirst(3)) }
            }
            #expect(ids == [two, one, two], "\(lines)")
            // A command or subcommand Redis's table lacks leaves cmd=NULL, as in Redis.
            for unknown in ["CLIENT NOSUCH", "NOSUCH"] {
                first.send("\(unknown)\r\n")
                #expect(first.readLine().hasPrefix("-ERR unknown"))
                second.send("CLIENT LIST ID \(one)\r\n")
                _ = second.readLine()
                #expect(second.readLine().contains(" cmd=NULL "), "after \(unknown)")
            }
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

@Suite(.timeLimit(.minutes(2))) struct LatencyReportTests {
    /// A RESP2 reply read whole: simple strings, integers and bulks as
    /// strings, arrays as nested arrays.
    indirect enum Value: Equatable {
        case text(String)
        case array([Value])
    }

    func readValue(_ client: TestClient) -> Value {
        let line = client.readLine()
        let body = String(line.dropFirst().prefix { $0 != "\r\n" && $0 != "\r" })
        switch line.first {
        case "*": return .array((0..<(Int(body) ?? 0)).map { _ in readValue(client) })
        case "$":
            let length = Int(body) ?? -1
            guard length >= 0 else { return .text("(nil)") }
            let bytes = client.read(count: length + 2)
            return .text(String(decoding: bytes.dropLast(2), as: UTF8.self))
        default: return .text(body)
        }
    }

    @Test func infoLatencystatsLatencyHistogramAndInfoLoopsDescribeWhatRan() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            for _ in 0..<50 { _ = client.roundTrip("SET k v\r\n", replyBytes: 5) }
            _ = client.roundTrip("GET k\r\n", replyBytes: 7)
            client.send("INFO latencystats\r\n")
            guard case .text(let info) = readValue(client) else {
                Issue.record("INFO did not answer a bulk")
                return
            }
            let lines = info.split(separator: "\r\n").map(String.init)
            #expect(lines.first == "# Latencystats")
            #expect(lines.contains { $0.hasPrefix("latency_percentiles_usec_set:p50=") && $0.contains(",p99.9=") })
            #expect(lines.contains { $0.hasPrefix("latency_percentiles_usec_get:p50=") })
            #expect(!lines.contains { $0.hasPrefix("latency_percentiles_usec_del:") })  // never ran
            client.send("LATENCY HISTOGRAM set del\r\n")
            guard case .array(let map) = readValue(client), map.count == 2, map[0] == .text("set"),
                case .array(let set) = map[1], set.count == 4, set[0] == .text("calls"), set[1] == .text("50"),
                set[2] == .text("histogram_usec"), case .array(let buckets) = set[3], buckets.count >= 2,
                case .text(let lastCount) = buckets[buckets.count - 1]
            else {
                Issue.record("LATENCY HISTOGRAM has the wrong shape")
                return
            }
            #expect(lastCount == "50")  // cumulative: the last bucket counts every call
            client.send("INFO loops\r\n")
            guard case .text(let loops) = readValue(client) else {
                Issue.record("INFO loops")
                return
            }
            #expect(loops.hasPrefix("# Loops\r\nloop_core:queue_delay_p50_usec="), "\(loops)")
            #expect(loops.contains("loop_kvd-io-0:"))
        }
    }

    @Test func slowlogKeepsTheCommandsThatHeldTheCore() throws {
        try withServer({
            $0.slowlogSlowerThan = 0; $0.slowlogMaxLength = 3
        }) { server in
            let client = try TestClient(port: server.port)
            #expect(client.roundTrip("SLOWLOG RESET\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(client.roundTrip("SET greeting hello\r\n", replyBytes: 5) == "+OK\r\n")
            // The SET's batch was logged once it ended, with its command and client.
            client.send("SLOWLOG GET 1\r\n")
            guard case .array(let entries) = readValue(client), entries.count == 1,
                case .array(let entry) = entries[0], entry.count == 6
            else {
                Issue.record("SLOWLOG GET has the wrong shape")
                return
            }
            #expect(entry[3] == .array([.text("SET"), .text("greeting"), .text("hello")]))
            guard case .text(let address) = entry[4] else {
                Issue.record("SLOWLOG GET's client address is not a string: \(entry[4])")
                return
            }
            #expect(address.hasPrefix("127.0.0.1:"))
            for _ in 0..<5 { _ = client.roundTrip("PING\r\n", replyBytes: 7) }
            #expect(client.roundTrip("SLOWLOG LEN\r\n", replyBytes: 4) == ":3\r\n")  // --slowlog-max-len
        }
    }
}
