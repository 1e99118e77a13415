// OperatorToolsTests.swift: what an operator's tools see, over real
// sockets: SLOWLOG blames the slow command itself (not the cheap ones it
// shared a batch with) on both topologies, CONFIG SET changes what kvd does
// and is all or nothing, and INFO reports the allocator, the CPU, errors and
// avg_ttl. (Exact reply bytes are in the golden tests.)
import Glibc
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(3))) struct OperatorToolsTests {
    typealias Value = LatencyReportTests.Value
    func value(_ client: TestClient) -> Value { LatencyReportTests().readValue(client) }

    /// A request in RESP, for arguments with spaces or many of them.
    func request(_ arguments: [String]) -> String {
        "*\(arguments.count)\r\n" + arguments.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()
    }

    @Test(arguments: [0, 2]) func slowlogBlamesTheSlowCommandNotItsBatchByDefault(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let client = try TestClient(port: server.port)
            var mset = ["MSET"]
            for index in 0..<30_000 { mset += ["key:\(index)", "v"] }
            client.send(request(mset))
            #expect(client.readLine() == "+OK\r\n")
            _ = client.roundTrip("SLOWLOG RESET\r\n", replyBytes: 5)
            _ = client.roundTrip("CLIENT SETNAME operator\r\n", replyBytes: 5)
            // One write, one batch: a cheap SET, a slow KEYS, a cheap SET.
            client.send("SET before 1\r\nKEYS *\r\nSET after 2\r\n")
            #expect(client.readLine() == "+OK\r\n")
            guard case .array(let keys) = value(client) else { return #expect(Bool(false), "KEYS") }
            #expect(keys.count == 30_001)  // the keys and `before`
            #expect(client.readLine() == "+OK\r\n")
            client.send("SLOWLOG GET -1\r\n")
            guard case .array(let entries) = value(client) else { return #expect(Bool(false), "SLOWLOG GET") }
            // With the default threshold (10 ms) the KEYS is there, with its
            // own arguments, client and time, and neither SET is.
            let logged = entries.compactMap { entry -> [Value]? in
                guard case .array(let fields) = entry, fields.count == 6 else { return nil }
                return fields
            }
            #expect(logged.count == entries.count)
            let commands = logged.map { $0[3] }
            #expect(commands.contains(.array([.text("KEYS"), .text("*")])))
            #expect(!commands.contains { if case .array(let a) = $0 { a.first == .text("SET") } else { false } })
            if let keysEntry = logged.first(where: { $0[3] == .array([.text("KEYS"), .text("*")]) }),
                case .text(let micros) = keysEntry[2], case .text(let address) = keysEntry[4]
            {
                #expect((Int(micros) ?? 0) >= 10_000)
                #expect(address.hasPrefix("127.0.0.1:"))
                #expect(keysEntry[5] == .text("operator"))
            }
        }
    }

    @Test func slowlogTruncatesAndRedactsAsRedis() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            _ = client.roundTrip("CONFIG SET slowlog-log-slower-than 0\r\n", replyBytes: 5)
            client.send(request(["SADD", "set"] + (1...40).map(String.init)))
            _ = client.readLine()
            client.send(request(["SET", "long", String(repeating: "x", count: 130)]))
            _ = client.readLine()
            client.send(request(["CONFIG", "SET", "requirepass", "hunter2", "slowlog-max-len", "128"]))
            _ = client.readLine()
            client.send("SLOWLOG GET 3\r\n")
            guard case .array(let entries) = value(client), entries.count == 3,
                case .array(let configEntry) = entries[0], case .array(let setEntry) = entries[1],
                case .array(let saddEntry) = entries[2], case .array(let sadd) = saddEntry[3]
            else { return #expect(Bool(false), "SLOWLOG GET 3") }
            #expect(
                configEntry[3]
                    == .array(["CONFIG", "SET", "requirepass", "(redacted)", "slowlog-max-len", "128"].map(Value.text)))
            #expect(
                setEntry[3]
                    == .array([
                        .text("SET"), .text("long"), .text(String(repeating: "x", count: 128) + "... (2 more bytes)"),
                    ]))
            #expect(sadd.count == 32)
            #expect(sadd[31] == .text("... (11 more arguments)"))
        }
    }

    @Test func configSetChangesWhatKvdDoesAndIsAllOrNothing() throws {
        try withServer { server in
            let admin = try TestClient(port: server.port)
            // A pair that fails leaves the pair before it unapplied.
            let refused =
                "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive\r\n"
            #expect(
                admin.roundTrip("CONFIG SET slowlog-max-len 5 maxclients 0\r\n", replyBytes: refused.utf8.count)
                    == refused)
            admin.send("CONFIG GET slowlog-max-len\r\n")
            #expect(value(admin) == .array([.text("slowlog-max-len"), .text("128")]))
            // maxclients: the next connection is refused.
            #expect(admin.roundTrip("CONFIG SET maxclients 1\r\n", replyBytes: 5) == "+OK\r\n")
            let refusedClient = try TestClient(port: server.port)
            #expect(refusedClient.readLine() == "-ERR max number of clients reached\r\n")
            #expect(admin.roundTrip("CONFIG SET maxclients 10000\r\n", replyBytes: 5) == "+OK\r\n")
            // requirepass: new connections must AUTH; this one stays in.
            #expect(admin.roundTrip("CONFIG SET requirepass s3cret\r\n", replyBytes: 5) == "+OK\r\n")
            let newcomer = try TestClient(port: server.port)
            let noauth = "-NOAUTH Authentication required.\r\n"
            #expect(newcomer.roundTrip("GET a\r\n", replyBytes: noauth.utf8.count) == noauth)
            #expect(newcomer.roundTrip("AUTH s3cret\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(admin.roundTrip("CONFIG SET requirepass \"\"\r\n", replyBytes: 5) == "+OK\r\n")
            // timeout: an idle client is closed; a busy one is not, nor (as
            // in Redis) an idle subscriber or MONITOR client.
            // (Connected and answered first: a stall of a second between its
            // connect and its PING must not count against the server.)
            let idle = try TestClient(port: server.port)
            #expect(idle.roundTrip("PING\r\n", replyBytes: 7) == "+PONG\r\n")
            let subscriber = try TestClient(port: server.port)
            let subscribed = "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n"
            #expect(subscriber.roundTrip("SUBSCRIBE news\r\n", replyBytes: subscribed.utf8.count) == subscribed)
            let monitor = try TestClient(port: server.port)
            #expect(monitor.roundTrip("MONITOR\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(admin.roundTrip("CONFIG SET timeout 1\r\n", replyBytes: 5) == "+OK\r\n")
            var start = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            #expect(idle.readAll().isEmpty)  // closed by the server, well before the 10 s read timeout
            var end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &end)
            #expect(end.tv_sec - start.tv_sec < 5)
            // The idle one is gone, so a check has run past the other two's
            // second; one more second, and both still answer.
            var nap = timespec(tv_sec: 1, tv_nsec: 200_000_000)
            nanosleep(&nap, nil)
            let publisher = try TestClient(port: server.port)  // the admin has been idle too
            let published = publisher.roundTrip("PUBLISH news hello\r\n", replyBytes: 4)
            #expect(published == ":1\r\n", "the idle subscriber was closed")
            let message = "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n"
            #expect(String(decoding: subscriber.read(count: message.utf8.count), as: UTF8.self) == message)
            #expect(monitor.readLine().contains("\"PUBLISH\" \"news\" \"hello\""), "the idle MONITOR client was closed")
        }
    }

    @Test func memoryStatsHasRedissFieldsAndKvdsFigures() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            _ = client.roundTrip("SET plain 1\r\n", replyBytes: 5)
            _ = client.roundTrip("SET brief 1 EX 100\r\n", replyBytes: 5)
            _ = client.roundTrip("SELECT 3\r\n", replyBytes: 5)
            _ = client.roundTrip("SET other 1\r\n", replyBytes: 5)
            client.send("MEMORY STATS\r\n")
            guard case .array(let reply) = value(client) else { return #expect(Bool(false), "MEMORY STATS") }
            let names = stride(from: 0, to: reply.count, by: 2).map { reply[$0] }
            let fields = Dictionary(
                stride(from: 0, to: reply.count - 1, by: 2).map { index -> (String, Value) in
                    guard case .text(let name) = reply[index] else { return ("", reply[index + 1]) }
                    return (name, reply[index + 1])
                },
                uniquingKeysWith: { first, _ in first })
            // Redis 7.0's fields in its order; a database only when it has keys.
            let expected =
                [
                    "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog", "clients.slaves",
                    "clients.normal", "cluster.links", "aof.buffer", "lua.caches", "functions.caches", "db.0", "db.3",
                    "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes", "dataset.percentage",
                    "peak.percentage", "allocator.allocated", "allocator.active", "allocator.resident",
                    "allocator-fragmentation.ratio", "allocator-fragmentation.bytes", "allocator-rss.ratio",
                    "allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes", "fragmentation",
                    "fragmentation.bytes",
                ].map(Value.text)
            #expect(names == expected)
            #expect(fields["keys.count"] == .text("3"))
            // Two keys in db 0, one of them with an expiry: 96 bytes each.
            let db0: Value = .array(
                [
                    "overhead.hashtable.main", "192", "overhead.hashtable.expires", "96",
                    "overhead.hashtable.slot-to-keys", "0",
                ].map(Value.text))
            #expect(fields["db.0"] == db0)
            guard case .text(let resident) = fields["allocator.resident"] else { return #expect(Bool(false)) }
            #expect((Int(resident) ?? 0) > 0)
            if getenv("MAINLOOP_SANITIZED") == nil {
                guard case .text(let total) = fields["total.allocated"],
                    case .text(let peak) = fields["peak.allocated"]
                else { return #expect(Bool(false)) }
                #expect((Int(total) ?? 0) > 0 && Int(peak) == Int(total))
            }
        }
    }

    @Test func clientTrackingCannotBeTurnedOnAndSaysSo() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            let refusal = "-ERR CLIENT TRACKING is not supported by kvd: it sends no invalidation messages\r\n"
            #expect(client.roundTrip("CLIENT TRACKING on\r\n", replyBytes: refusal.utf8.count) == refusal)
            #expect(client.roundTrip("CLIENT TRACKING on BCAST\r\n", replyBytes: refusal.utf8.count) == refusal)
            // Still off: the connection's flags and redirect say so.
            #expect(client.roundTrip("CLIENT GETREDIR\r\n", replyBytes: 5) == ":-1\r\n")
        }
    }

    @Test func memoryUsageSamplesAsItIsTold() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            // 100 short elements, then one long: the default 5 samples miss
            // the long one, SAMPLES 0 counts it.
            client.send(request(["RPUSH", "list"] + (0..<100).map { _ in "x" }))
            _ = client.readLine()
            client.send(request(["RPUSH", "list", String(repeating: "y", count: 10_000)]))
            _ = client.readLine()
            client.send("MEMORY USAGE list\r\nMEMORY USAGE list SAMPLES 0\r\nMEMORY USAGE list SAMPLES -1\r\n")
            let sampled = Int(client.readLine().dropFirst().prefix { $0.isNumber }) ?? 0
            let all = Int(client.readLine().dropFirst().prefix { $0.isNumber }) ?? 0
            #expect(sampled > 0 && sampled < 10_000)
            #expect(all > 10_000)
            #expect(client.readLine() == "-ERR syntax error\r\n")
        }
    }

    @Test func infoReportsMemoryCpuErrorsAndAverageTTL() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            _ = client.roundTrip("SET plain 1\r\n", replyBytes: 5)
            _ = client.roundTrip("SET brief 1 EX 100\r\n", replyBytes: 5)
            let wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
            #expect(client.roundTrip("LPUSH plain x\r\n", replyBytes: wrongType.utf8.count) == wrongType)
            client.send("INFO memory cpu errorstats commandstats keyspace\r\n")
            guard case .text(let info) = value(client) else { return #expect(Bool(false), "INFO") }
            let fields = Dictionary(
                info.split(separator: "\r\n").filter { !$0.hasPrefix("#") }.map {
                    (String($0.prefix { $0 != ":" }), String($0.drop { $0 != ":" }.dropFirst()))
                }, uniquingKeysWith: { first, _ in first })
            #expect(info.hasPrefix("# Memory\r\n"))
            #expect(!info.contains("# Server"))
            // A sanitizer replaces malloc, so glibc's mallinfo2 (used_memory's
            // source) sees none of the process's allocations under it.
            if getenv("MAINLOOP_SANITIZED") == nil { #expect((Int(fields["used_memory"] ?? "") ?? 0) > 0) }
            #expect((Int(fields["used_memory_rss"] ?? "") ?? 0) > 0)
            #expect(fields["used_cpu_user"]?.contains(".") == true)
            #expect(fields["errorstat_WRONGTYPE"] == "count=1")
            #expect(fields["cmdstat_lpush"]?.hasSuffix(",rejected_calls=0,failed_calls=1") == true)
            // One key of two has 100 s left: avg_ttl is its time left, in ms.
            let keyspace = fields["db0"] ?? ""
            #expect(keyspace.hasPrefix("keys=2,expires=1,avg_ttl="))
            let averageTTL = Int(keyspace.split(separator: "=").last ?? "") ?? 0
            #expect(averageTTL > 90_000 && averageTTL <= 100_000)
            client.send("ROLE\r\n")
            #expect(value(client) == .array([.text("master"), .text("0"), .array([])]))
        }
    }

    @Test func theLatencyMonitorRecordsSlowCommandsAndStatsAreKeptPerSubcommand() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            var mset = ["MSET"]
            for index in 0..<20_000 { mset += ["key:\(index)", "v"] }
            client.send(request(mset))
            #expect(client.readLine() == "+OK\r\n")
            _ = client.roundTrip("CONFIG RESETSTAT\r\n", replyBytes: 5)
            _ = client.roundTrip("CONFIG SET latency-monitor-threshold 1\r\n", replyBytes: 5)
            client.send("KEYS *\r\n")
            guard case .array(let keys) = value(client) else { return #expect(Bool(false), "KEYS") }
            #expect(keys.count == 20_000)
            // KEYS (not a fast command) took over 1 ms: a "command" event.
            // (A core tick stalled past 1 ms, as under the thread sanitizer,
            // may add an "expire-cycle" event beside it.)
            client.send("LATENCY LATEST\r\n")
            guard case .array(let events) = value(client),
                case .array(let latest) = events.first(where: {
                    if case .array(let fields) = $0 { return fields.first == .text("command") }
                    return false
                }),
                latest.count == 4, case .text(let worst) = latest[3]
            else { return #expect(Bool(false), "LATENCY LATEST has no command event") }
            #expect((Int(worst) ?? 0) >= 1)
            client.send("LATENCY HISTORY command\r\n")
            guard case .array(let history) = value(client) else { return #expect(Bool(false), "HISTORY") }
            #expect(history.count == 1)
            #expect(client.roundTrip("LATENCY RESET command\r\n", replyBytes: 4) == ":1\r\n")
            #expect(client.roundTrip("LATENCY HISTORY command\r\n", replyBytes: 4) == "*0\r\n")
            // A container's figures are its subcommands', by full name.
            client.send("INFO commandstats\r\n")
            guard case .text(let info) = value(client) else { return #expect(Bool(false), "INFO") }
            #expect(info.contains("cmdstat_config|resetstat:calls=1,"))
            #expect(info.contains("cmdstat_config|set:calls=1,"))
            #expect(!info.contains("cmdstat_config:"))
            client.send("LATENCY HISTOGRAM config\r\n")
            guard case .array(let histogram) = value(client) else { return #expect(Bool(false), "HISTOGRAM") }
            let names = stride(from: 0, to: histogram.count, by: 2).map { histogram[$0] }
            #expect(
                names.count == 2 && names.contains(.text("config|resetstat")) && names.contains(.text("config|set")))
        }
    }

    @Test func aSlowActiveExpirySliceIsAnExpireCycleEvent() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            _ = client.roundTrip("CONFIG SET latency-monitor-threshold 1\r\n", replyBytes: 5)
            _ = client.roundTrip("LATENCY RESET\r\n", replyBytes: 4)
            // 50,000 keys due at once: a slice runs its whole budget (2 ms).
            client.send((0..<50_000).map { "SET k:\($0) v PX 1\r\n" }.joined())
            for _ in 0..<50_000 { _ = client.readLine() }
            var left = ":1\r\n"
            for _ in 0..<500 where left != ":0\r\n" {
                usleep(10_000)
                client.send("DBSIZE\r\n")
                left = client.readLine()
            }
            #expect(left == ":0\r\n")  // active expiry took them (no command touched them)
            client.send("LATENCY LATEST\r\n")
            guard case .array(let events) = value(client) else { return #expect(Bool(false), "LATENCY LATEST") }
            let names = events.compactMap { event -> Value? in
                guard case .array(let fields) = event else { return nil }
                return fields.first
            }
            #expect(names.contains(.text("expire-cycle")), "\(names)")
        }
    }

    @Test(arguments: [0, 2]) func clientPauseHoldsWritesUntilUnpause(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let admin = try TestClient(port: server.port)
            let writer = try TestClient(port: server.port)
            #expect(admin.roundTrip("CLIENT PAUSE 20000 WRITE\r\n", replyBytes: 5) == "+OK\r\n")
            // A read goes on; a write (and what follows it) waits.
            writer.send("GET a\r\nSET a 1\r\nGET a\r\n")
            #expect(writer.readLine() == "$-1\r\n")
            var waiting = pollfd(fd: writer.fd, events: Int16(POLLIN), revents: 0)
            #expect(poll(&waiting, 1, 300) == 0)  // nothing more while paused
            #expect(admin.roundTrip("CLIENT UNPAUSE\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(writer.readLine() == "+OK\r\n")
            #expect(writer.readLine() == "$1\r\n")
            #expect(writer.readLine() == "1\r\n")
        }
    }

    @Test(arguments: [0, 2]) func aClientThatKillsItselfIsClosedBeforeItsNextRequest(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            // Redis closes it after the KILL's reply: a request sent after
            // that reply is never answered (a race that a few rounds catch).
            for _ in 0..<20 {
                let client = try TestClient(port: server.port)
                client.send("CLIENT ID\r\n")
                let id = client.readLine().dropFirst().prefix { $0.isNumber }
                #expect(client.roundTrip("CLIENT KILL ID \(id) SKIPME no\r\n", replyBytes: 4) == ":1\r\n")
                client.send("PING\r\n")
                #expect(client.readAll() == [])
            }
        }
    }

    @Test func aWritePauseHoldsWritingScriptsAndExecsAnswersBadCommandsAndKeepsExpiredKeys() throws {
        try withServer { server in
            let admin = try TestClient(port: server.port)
            let client = try TestClient(port: server.port)
            let transaction = try TestClient(port: server.port)
            transaction.send("MULTI\r\nSET t 1\r\n")
            #expect(transaction.readLine() == "+OK\r\n")
            #expect(transaction.readLine() == "+QUEUED\r\n")
            // The key and the pause in one transaction: the key cannot
            // expire before the pause starts, however slow the machine.
            admin.send("MULTI\r\nSET brief 1 PX 100\r\nCLIENT PAUSE 20000 WRITE\r\nEXEC\r\n")
            for line in ["+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n", "+OK\r\n", "+OK\r\n"] {
                #expect(admin.readLine() == line)
            }
            // A wrong arity is answered at once; a no-writes script runs; a
            // script without that flag waits, and so does an EXEC that writes.
            let arity = "-ERR wrong number of arguments for 'set' command\r\n"
            #expect(client.roundTrip("SET x\r\n", replyBytes: arity.utf8.count) == arity)
            // So are a writing subcommand's wrong count and an unknown subcommand.
            let load = "-ERR wrong number of arguments for 'function|load' command\r\n"
            #expect(client.roundTrip("FUNCTION LOAD\r\n", replyBytes: load.utf8.count) == load)
            let unknown = "-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.\r\n"
            #expect(client.roundTrip("CONFIG NOSUCH\r\n", replyBytes: unknown.utf8.count) == unknown)
            client.send(request(["EVAL", "#!lua flags=no-writes\nreturn 7", "0"]))
            #expect(client.readLine() == ":7\r\n")
            client.send(request(["EVAL", "return 8", "0"]))
            transaction.send("EXEC\r\n")
            var waiting = [client.fd, transaction.fd].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            #expect(poll(&waiting, 2, 300) == 0)
            // The expired key reads as gone but is not deleted while paused.
            #expect(admin.roundTrip("GET brief\r\n", replyBytes: 5) == "$-1\r\n")
            admin.send("INFO stats\r\n")
            guard case .text(let stats) = value(admin) else { return #expect(Bool(false), "INFO") }
            #expect(stats.contains("expired_keys:0\r\n"))
            #expect(admin.roundTrip("CLIENT UNPAUSE\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(client.readLine() == ":8\r\n")
            #expect(transaction.readLine() == "*1\r\n")
            #expect(transaction.readLine() == "+OK\r\n")
            #expect(admin.roundTrip("GET brief\r\n", replyBytes: 5) == "$-1\r\n")
            admin.send("INFO stats\r\n")
            guard case .text(let after) = value(admin) else { return #expect(Bool(false), "INFO") }
            #expect(after.contains("expired_keys:1\r\n"))
        }
    }
}
