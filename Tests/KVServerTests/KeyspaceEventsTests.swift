// KeyspaceEventsTests.swift: keyspace notifications (notify-keyspace-events)
// as Redis 7.0 publishes them: both channels with Redis's exact bytes and
// order, only the classes chosen, the expirations active expiry finds, the
// evictions, a write over a key that is due, and the setting's letters.
// Every command's events are compared with redis-server's by
// tools/notifications-differential.py; these tests hold the paths that do
// not go through a command, on both topologies.
import Glibc
import MainLoop
import TestKit
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(2))) struct KeyspaceEventsTests {
    /// A pattern subscriber's frame for `channel` and `message`.
    private func pmessage(_ channel: String, _ message: String) -> String {
        "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$\(channel.utf8.count)\r\n\(channel)\r\n$\(message.utf8.count)\r\n\(message)\r\n"
    }

    /// A client subscribed to every channel, and one that sets the events.
    private func listening(
        _ server: Server, classes: String
    ) throws -> (subscriber: TestClient, client: TestClient) {
        let client = try TestClient(port: server.port)
        let set = "CONFIG SET notify-keyspace-events \(classes)\r\n"
        #expect(client.roundTrip(set, replyBytes: 5) == "+OK\r\n")
        let subscriber = try TestClient(port: server.port)
        let confirmation = "*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n"
        #expect(subscriber.roundTrip("PSUBSCRIBE *\r\n", replyBytes: confirmation.utf8.count) == confirmation)
        return (subscriber, client)
    }

    /// The next `frames` as one string, read off `subscriber`.
    private func received(_ subscriber: TestClient, _ frames: [String]) -> String {
        String(decoding: subscriber.read(count: frames.joined().utf8.count), as: UTF8.self)
    }

    @Test(arguments: [0, 2]) func eachChangeIsPublishedOnBothChannelsInRedisOrder(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let (subscriber, client) = try listening(server, classes: "KEA")
            #expect(client.roundTrip("SET foo bar EX 100\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(client.roundTrip("LPUSH list a\r\nRPOP list\r\n", replyBytes: 11) == ":1\r\n$1\r\na\r\n")
            let expected = [
                pmessage("__keyspace@0__:foo", "set"), pmessage("__keyevent@0__:set", "foo"),
                pmessage("__keyspace@0__:foo", "expire"), pmessage("__keyevent@0__:expire", "foo"),
                pmessage("__keyspace@0__:list", "lpush"), pmessage("__keyevent@0__:lpush", "list"),
                pmessage("__keyspace@0__:list", "rpop"), pmessage("__keyevent@0__:rpop", "list"),
                pmessage("__keyspace@0__:list", "del"), pmessage("__keyevent@0__:del", "list"),
            ]
            #expect(received(subscriber, expected) == expected.joined())
        }
    }

    @Test func onlyTheChosenClassesAndChannelsArePublished() throws {
        try withServer { server in
            let (subscriber, client) = try listening(server, classes: "Kl")
            // A string change, a new key, a hash change: none is a list's.
            #expect(client.roundTrip("SET s v\r\nHSET h f v\r\n", replyBytes: 9) == "+OK\r\n:1\r\n")
            #expect(client.roundTrip("RPUSH l x\r\n", replyBytes: 4) == ":1\r\n")
            // A message of its own after them: nothing came between.
            #expect(client.roundTrip("PUBLISH after done\r\n", replyBytes: 4) == ":1\r\n")
            let expected = [
                pmessage("__keyspace@0__:l", "rpush"),
                "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$5\r\nafter\r\n$4\r\ndone\r\n",
            ]
            #expect(received(subscriber, expected) == expected.joined())
            // Classes without K or E publish nothing at all.
            #expect(client.roundTrip("CONFIG SET notify-keyspace-events A\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(client.roundTrip("RPUSH l y\r\nPUBLISH after again\r\n", replyBytes: 8) == ":2\r\n:1\r\n")
            let again = "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$5\r\nafter\r\n$5\r\nagain\r\n"
            #expect(received(subscriber, [again]) == again)
        }
    }

    @Test(arguments: [0, 2]) func aKeyThatActiveExpiryRemovesIsAnnounced(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let (subscriber, client) = try listening(server, classes: "Ex")
            // Nobody reads it again: only an expiry cycle finds it, and the
            // cycle's own job sends the event (within the client's 10 s wait).
            #expect(client.roundTrip("PSETEX foo 20 1\r\n", replyBytes: 5) == "+OK\r\n")
            let expected = pmessage("__keyevent@0__:expired", "foo")
            #expect(received(subscriber, [expected]) == expected)
        }
    }

    @Test func anEvictedKeyIsAnnounced() throws {
        try withServer { server in
            let (subscriber, client) = try listening(server, classes: "Ee")
            #expect(client.roundTrip("CONFIG SET maxmemory-policy allkeys-lru\r\n", replyBytes: 5) == "+OK\r\n")
            #expect(client.roundTrip("SET foo bar\r\n", replyBytes: 5) == "+OK\r\n")
            // The new limit evicts at once, in CONFIG SET's own job.
            #expect(client.roundTrip("CONFIG SET maxmemory 1\r\n", replyBytes: 5) == "+OK\r\n")
            let expected = pmessage("__keyevent@0__:evicted", "foo")
            #expect(received(subscriber, [expected]) == expected)
            #expect(client.roundTrip("CONFIG SET maxmemory 0\r\n", replyBytes: 5) == "+OK\r\n")
        }
    }

    @Test func aWriteOverAKeyPastItsDeadlineExpiresItFirstAsANewKey() {
        let keyspace = Keyspace()
        var published: [String] = []
        keyspace.events.classes = [.keyevent, .all, .newKey]
        keyspace.events.publish = { channel, message in
            published.append(String(decoding: channel, as: UTF8.self) + " " + String(decoding: message, as: UTF8.self))
        }
        let start = unixMilliseconds()
        keyspace.clock.fixed = start
        keyspace.set(Array("k".utf8), Array("v".utf8), expiresAt: start + 10)
        // Due, never read: no expiry cycle runs on a keyspace of its own.
        keyspace.clock.fixed = start + 20
        keyspace.set(Array("k".utf8), Array("w".utf8), expiresAt: nil)
        #expect(published == ["__keyevent@0__:new k", "__keyevent@0__:expired k", "__keyevent@0__:new k"])
        #expect(keyspace.expiredKeys == 1)
        #expect(keyspace.lookup(Array("k".utf8), now: start + 20)?.value == Array("w".utf8))
        #expect(keyspace.expiresCount == 0)
    }

    @Test func theSettingTakesRedisLettersAndShowsThemInRedisOrder() throws {
        let dispatcher = connected()
        func roundTrip(_ letters: String) -> String {
            let set = run(dispatcher, "CONFIG", "SET", "notify-keyspace-events", letters)
            guard set == "+OK\r\n" else { return set }
            return run(dispatcher, "CONFIG", "GET", "notify-keyspace-events")
        }
        func shown(_ letters: String) -> String {
            "*2\r\n$22\r\nnotify-keyspace-events\r\n$\(letters.utf8.count)\r\n\(letters)\r\n"
        }
        // Redis's own test's four, and the rest of the alphabet.
        #expect(roundTrip("gKE") == shown("gKE"))
        #expect(roundTrip("$lshzxeKE") == shown("$lshzxeKE"))
        #expect(roundTrip("KA") == shown("AK"))
        #expect(roundTrip("EA") == shown("AE"))
        #expect(roundTrip("ntdEK") == shown("tdnKE"))
        #expect(roundTrip("") == shown(""))
        #expect(
            roundTrip("KQ")
                == "-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n"
        )
        // A refused value leaves the setting as it was.
        #expect(run(dispatcher, "CONFIG", "GET", "notify-keyspace-events") == shown(""))
        #expect(roundTrip("mKEA") == shown("AKEm"))
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--notify-keyspace-events", "K?"]) }
        #expect(try ServerOptions.parse(["--notify-keyspace-events", "KEAm"])?.notifyKeyspaceEvents == "KEAm")
    }
}

/// INFO's keyspace_hits and keyspace_misses, and keymiss events: Redis's
/// reads count, its writes' lookups do not (Storage/KeyReads.swift).
@Suite struct KeyReadsTests {
    /// keyspace_hits and keyspace_misses now.
    private func counts(_ dispatcher: Dispatcher) -> String {
        let info = run(dispatcher, "INFO", "stats")
        return info.split(separator: "\r\n").filter { $0.hasPrefix("keyspace_") }.joined(separator: " ")
    }

    @Test func readsCountAsHitsAndMissesAndWritesDoNot() {
        let dispatcher = connected()
        #expect(counts(dispatcher) == "keyspace_hits:0 keyspace_misses:0")
        run(dispatcher, "SET", "k", "v")  // a write: nothing
        run(dispatcher, "GET", "k")
        run(dispatcher, "GET", "absent")
        run(dispatcher, "MGET", "k", "absent", "k")
        #expect(counts(dispatcher) == "keyspace_hits:3 keyspace_misses:2")
        // Writes' lookups, and the server's own, count nothing; SET's GET
        // and a STORE's sources are reads, as in Redis.
        run(dispatcher, "DEL", "absent")
        run(dispatcher, "INCR", "n")
        run(dispatcher, "WATCH", "k")
        run(dispatcher, "MEMORY", "USAGE", "k")
        #expect(counts(dispatcher) == "keyspace_hits:3 keyspace_misses:2")
        run(dispatcher, "SET", "k", "w", "GET")
        run(dispatcher, "SUNIONSTORE", "dest", "absent", "other")
        #expect(counts(dispatcher) == "keyspace_hits:4 keyspace_misses:4")
        // OBJECT counts without an event; RESETSTAT zeroes both.
        run(dispatcher, "OBJECT", "ENCODING", "absent")
        #expect(counts(dispatcher) == "keyspace_hits:4 keyspace_misses:5")
        run(dispatcher, "CONFIG", "RESETSTAT")
        #expect(counts(dispatcher) == "keyspace_hits:0 keyspace_misses:0")
    }

    @Test func theReadsInsideWritesCountAsRedisCountsThem() {
        let dispatcher = connected()
        run(dispatcher, "SADD", "s", "a", "b")
        run(dispatcher, "SPOP", "s", "5")  // the whole set, answered through SUNION's read
        #expect(counts(dispatcher) == "keyspace_hits:1 keyspace_misses:0")
        run(dispatcher, "BITFIELD", "b", "GET", "u4", "0")  // only GETs: a read
        run(dispatcher, "BITFIELD", "b", "SET", "u4", "0", "1")  // a write
        #expect(counts(dispatcher) == "keyspace_hits:1 keyspace_misses:1")
        run(dispatcher, "OBJECT", "ENCODING", "b")  // a quiet read still counts
        run(dispatcher, "RPUSH", "list", "2", "1")
        run(dispatcher, "SORT", "list", "BY", "w_*", "STORE", "sorted")  // the key, then each BY key
        #expect(counts(dispatcher) == "keyspace_hits:3 keyspace_misses:3")
        // A HSCAN of a missing key reads it before its options: an empty scan.
        #expect(run(dispatcher, "HSCAN", "nohash", "0", "COUNT", "0") == "*2\r\n$1\r\n0\r\n*0\r\n")
        #expect(run(dispatcher, "HSCAN", "b", "0", "BOGUS").hasPrefix("-WRONGTYPE"))
        #expect(counts(dispatcher) == "keyspace_hits:4 keyspace_misses:4")
    }

    @Test func scanAndRenameExpireTheDueKeysTheyMeet() throws {
        let dispatcher = connected()
        var published: [String] = []
        dispatcher.databases.events.publish = { channel, message in
            published.append(String(decoding: channel, as: UTF8.self) + " " + String(decoding: message, as: UTF8.self))
        }
        #expect(run(dispatcher, "CONFIG", "SET", "notify-keyspace-events", "Exgnm") == "+OK\r\n")
        run(dispatcher, "SET", "due", "v", "PX", "1")
        run(dispatcher, "SET", "other", "v", "PX", "1")
        run(dispatcher, "SET", "kept", "v")
        usleep(5_000)  // both due; a dispatcher without a loop runs no expiry cycle
        published = []
        // MATCH leaves `other` alone (as in Redis); the due key SCAN returns expires.
        #expect(run(dispatcher, "SCAN", "0", "MATCH", "[dk]*") == "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nkept\r\n")
        #expect(published == ["__keyevent@0__:expired due"])
        // RENAME onto a due key: it expires, then the name is a new key.
        published = []
        #expect(run(dispatcher, "RENAME", "kept", "other") == "+OK\r\n")
        #expect(
            published == [
                "__keyevent@0__:expired other", "__keyevent@0__:new other", "__keyevent@0__:rename_from kept",
                "__keyevent@0__:rename_to other",
            ])
        #expect(run(dispatcher, "INFO", "stats").contains("expired_keys:2\r\n"))
    }

    @Test func aReadOfAMissingKeyPublishesKeymissAndAWriteDoesNot() {
        let dispatcher = connected()
        var published: [String] = []
        dispatcher.databases.events.publish = { channel, message in
            published.append(String(decoding: channel, as: UTF8.self) + " " + String(decoding: message, as: UTF8.self))
        }
        #expect(run(dispatcher, "CONFIG", "SET", "notify-keyspace-events", "Em") == "+OK\r\n")
        run(dispatcher, "GET", "gone")
        run(dispatcher, "LPUSHX", "gone", "a")  // a write's lookup
        run(dispatcher, "OBJECT", "ENCODING", "gone")  // Redis's LOOKUP_NONOTIFY
        run(dispatcher, "EXISTS", "gone", "also")
        #expect(
            published == [
                "__keyevent@0__:keymiss gone", "__keyevent@0__:keymiss gone", "__keyevent@0__:keymiss also",
            ])
    }
}
