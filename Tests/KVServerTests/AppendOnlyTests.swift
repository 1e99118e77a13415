// AppendOnlyTests.swift: what the append-only file is fed, command by
// command (the effect form Redis 7.0 propagates: absolute deadlines, the
// members SPOP removed, MULTI/EXEC around transactions and scripts,
// SELECT when the database changes), the manifest's format, and a log
// replayed into another dispatcher. tools/aof-interop.py (make test-kvd)
// moves appendonlydirs between kvd and a real redis-server, and
// tools/aof-kill.py kills kvd under load.
import Glibc
import Testing

@testable import KVServer

@Suite struct AppendOnlyTests {
    private func logging() -> Dispatcher {
        let dispatcher = connected()
        dispatcher.databases.feed.isOn = true
        return dispatcher
    }

    /// The commands logged since the last call, as words.
    private func logged(_ dispatcher: Dispatcher) -> [[String]] {
        var bytes: [UInt8] = []
        dispatcher.databases.feed.commit()
        dispatcher.databases.feed.take(into: &bytes)
        var reader = RESPCommandReader(bytes: bytes)
        var commands: [[String]] = []
        var batch = RequestBatch()
        while (try? reader.next(into: &batch)) == true {}
        batch.forEach { request in
            commands.append(request.indices.map { String(decoding: request.raw($0), as: UTF8.self) })
            return true
        }
        return commands
    }

    private func deadline(_ dispatcher: Dispatcher, _ key: String) -> String {
        String(dispatcher.databases[0].lookup(Array(key.utf8), now: .min)?.expiresAt ?? -1)
    }

    @Test func relativeExpiriesAreLoggedAsTheAbsoluteDeadlinesTheySet() {
        let dispatcher = logging()
        let start = Int(unixMilliseconds())
        run(dispatcher, "SET", "a", "1", "EX", "100")
        run(dispatcher, "SETEX", "b", "50", "2")
        run(dispatcher, "SET", "c", "3")
        run(dispatcher, "EXPIRE", "c", "70")
        run(dispatcher, "GETEX", "c", "PERSIST")
        run(dispatcher, "SET", "d", "4")
        run(dispatcher, "EXPIRE", "d", "-1")
        let end = Int(unixMilliseconds())
        var commands = logged(dispatcher)
        // c's deadline is gone (PERSIST); it was set after b's, 20 s further
        // out, and the clock may have ticked between the two commands (it
        // did, by a millisecond, under the thread sanitizer in CI): 70 s
        // from a moment within the run, and no earlier than b's + 20 s.
        let earliest = max(Int(deadline(dispatcher, "b"))! + 20_000, start + 70_000)
        let cDeadline = commands.count > 4 ? Int(commands[4].last ?? "") ?? -1 : -1
        #expect(
            (earliest...end + 70_000).contains(cDeadline),
            "PEXPIREAT c \(cDeadline), not within \(earliest)...\(end + 70_000)")
        if commands.count > 4 { commands[4][commands[4].count - 1] = "c's deadline" }
        #expect(
            commands == [
                ["SELECT", "0"], ["SET", "a", "1", "PXAT", deadline(dispatcher, "a")],
                ["SET", "b", "2", "PXAT", deadline(dispatcher, "b")], ["SET", "c", "3"],
                ["PEXPIREAT", "c", "c's deadline"], ["PERSIST", "c"], ["SET", "d", "4"], ["DEL", "d"],
            ])
    }

    @Test func restoreIsLoggedWithTheAbsoluteDeadlineItSetOrAsTheDeleteItDid() {
        let dispatcher = logging()
        run(dispatcher, "RPUSH", "l", "a", "b")
        guard let entry = dispatcher.databases[0].lookup(Array("l".utf8), now: .min) else {
            return #expect(Bool(false), "RPUSH stored nothing")
        }
        let payload = DumpPayload.dump(entry)
        _ = logged(dispatcher)
        func restore(_ arguments: [String], _ at: Int = 3) -> String {
            var words = arguments.map { Array($0.utf8) }
            words.insert(payload, at: at)
            return run(dispatcher, bytes: words)
        }
        #expect(restore(["RESTORE", "t", "100000", "REPLACE"]) == "+OK\r\n")
        #expect(restore(["RESTORE", "u", "0"]) == "+OK\r\n")
        #expect(restore(["RESTORE", "u", "0"]).hasPrefix("-BUSYKEY"))  // changes nothing: not logged
        #expect(restore(["RESTORE", "l", "1000", "ABSTTL", "REPLACE"]) == "+OK\r\n")  // past: deletes l
        #expect(restore(["RESTORE", "gone", "1000", "ABSTTL"]) == "+OK\r\n")  // past, nothing deleted
        let text = String(decoding: payload, as: UTF8.self)
        #expect(
            logged(dispatcher) == [
                ["RESTORE", "t", deadline(dispatcher, "t"), text, "REPLACE", "ABSTTL"], ["RESTORE", "u", "0", text],
                ["DEL", "l"],
            ])
        #expect(Int(deadline(dispatcher, "t"))! > Int(unixMilliseconds()) + 90_000)
    }

    @Test func hyperLogLogWritesAreLoggedWhenTheyChangeTheValueAsRedisPropagatesThem() {
        let dispatcher = logging()
        run(dispatcher, "PFADD", "h", "a")
        run(dispatcher, "PFADD", "h", "a")  // no register grew
        run(dispatcher, "PFCOUNT", "h")  // the count cached in the value
        run(dispatcher, "PFCOUNT", "h")  // read from the cache
        run(dispatcher, "PFCOUNT", "h", "g")  // a union: nothing cached
        run(dispatcher, "PFDEBUG", "TODENSE", "h")
        run(dispatcher, "PFDEBUG", "TODENSE", "h")  // dense already
        run(dispatcher, "PFDEBUG", "ENCODING", "h")
        run(dispatcher, "PFMERGE", "m", "h")
        #expect(
            logged(dispatcher) == [
                ["SELECT", "0"], ["PFADD", "h", "a"], ["PFCOUNT", "h"], ["PFDEBUG", "TODENSE", "h"],
                ["PFMERGE", "m", "h"],
            ])
    }

    // An expiry is no change (Redis counts none): it is logged as its own
    // DEL, and the command that met the expired key is logged when it
    // changed something itself, and only then (with the DEL, one unit, as
    // Redis 7.0 propagates the two).
    @Test func aCommandThatMetAnExpiredKeyIsLoggedAfterTheDeleteWhenItChangedSomething() {
        let dispatcher = logging()
        let past = unixMilliseconds() - 1
        dispatcher.databases[0].set(Array("s".utf8), [1], expiresAt: past)
        dispatcher.databases[0].set(Array("t".utf8), [1], expiresAt: past)
        let before = dispatcher.databases.fence.changes
        run(dispatcher, "SADD", "s", "m")
        run(dispatcher, "SREM", "t", "m")  // the key expired: nothing removed
        #expect(dispatcher.databases.fence.changes - before == 1)
        #expect(
            logged(dispatcher) == [
                ["MULTI"], ["SELECT", "0"], ["DEL", "s"], ["SADD", "s", "m"], ["EXEC"], ["DEL", "t"],
            ])
    }

    // SAVE lowers the count (to 0): not a change, and not logged (a SAVE
    // replayed from the file would save a half-loaded dataset). A swap of
    // a database with itself is one, as in Redis.
    @Test func saveIsNotLoggedAndASwapOfADatabaseWithItselfIs() throws {
        let dispatcher = logging()
        let snapshots = try SnapshotDirectory()
        defer { snapshots.remove() }
        let directory = snapshots.path
        dispatcher.persistence.file = SnapshotFile(directory: directory, name: "dump.rdb")
        run(dispatcher, "SET", "a", "1")
        #expect(run(dispatcher, "SAVE") == "+OK\r\n")
        run(dispatcher, "SWAPDB", "0", "0")
        #expect(logged(dispatcher) == [["SELECT", "0"], ["SET", "a", "1"], ["SWAPDB", "0", "0"]])
    }

    @Test func geoSearchesThatStoreAreLoggedWhenTheyChangeSomething() {
        let dispatcher = logging()
        run(dispatcher, "GEOADD", "g", "13.361389", "38.115556", "Palermo")
        run(dispatcher, "GEORADIUS", "g", "13", "38", "100", "km")  // a read
        run(dispatcher, "GEORADIUS", "g", "13", "38", "100", "km", "STORE", "d")
        run(dispatcher, "GEOSEARCHSTORE", "e", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")  // empty, no e
        run(dispatcher, "GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")  // deletes d
        #expect(
            logged(dispatcher) == [
                ["SELECT", "0"], ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
                ["GEORADIUS", "g", "13", "38", "100", "km", "STORE", "d"],
                ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
            ])
        run(dispatcher, "GEOADD", "g", "15.087269", "37.502669", "Catania", "13.583333", "37.316667", "Agrigento")
        let before = dispatcher.databases.fence.changes
        #expect(
            run(dispatcher, "GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "14", "37", "BYRADIUS", "300", "km") == ":3\r\n")
        // Redis counts a change per member stored (dirty += returned_items).
        #expect(dispatcher.databases.fence.changes - before == 3)
    }

    @Test func randomFloatingAndBlockingWritesAreLoggedAsTheirEffects() {
        let dispatcher = logging()
        run(dispatcher, "SADD", "s", "only")
        run(dispatcher, "SPOP", "s")
        run(dispatcher, "SET", "f", "1.5")
        run(dispatcher, "INCRBYFLOAT", "f", "0.25")
        run(dispatcher, "RPUSH", "l", "x", "y")
        run(dispatcher, "BLPOP", "none", "l", "1")
        run(dispatcher, "GET", "f")
        #expect(
            logged(dispatcher) == [
                ["SELECT", "0"], ["SADD", "s", "only"], ["SREM", "s", "only"], ["SET", "f", "1.5"],
                ["SET", "f", "1.75", "KEEPTTL"], ["RPUSH", "l", "x", "y"], ["LPOP", "l"],
            ])
    }

    @Test func transactionsAndScriptsAreLoggedAsOneUnitInTheirDatabase() {
        let dispatcher = logging()
        run(dispatcher, "SELECT", "2")
        run(dispatcher, "MULTI")
        run(dispatcher, "SET", "a", "1")
        run(dispatcher, "INCR", "n")
        run(dispatcher, "EXEC")
        run(dispatcher, "EVAL", "redis.call('set', 'b', '2'); redis.call('del', 'a'); return 1", "0")
        run(dispatcher, "EVAL", "return redis.call('get', 'b')", "0")
        #expect(
            logged(dispatcher) == [
                ["MULTI"], ["SELECT", "2"], ["SET", "a", "1"], ["INCR", "n"], ["EXEC"],
                ["MULTI"], ["set", "b", "2"], ["del", "a"], ["EXEC"],
            ])
    }

    @Test func theManifestReadsBackWhatItWritesAndRefusesWhatRedisRefuses() throws {
        var manifest = AppendOnlyManifest()
        manifest.base = .init(name: "appendonly.aof.3.base.rdb", sequence: 3)
        manifest.increments = [.init(name: "appendonly.aof.4.incr.aof", sequence: 4)]
        #expect(
            manifest.text
                == "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.4.incr.aof seq 4 type i\n")
        #expect(try AppendOnlyManifest(parsing: manifest.text) == manifest)
        #expect(throws: PersistenceError.self) { try AppendOnlyManifest(parsing: "") }
        #expect(throws: PersistenceError.self) { try AppendOnlyManifest(parsing: "file x seq 1 type z\n") }
        #expect(throws: PersistenceError.self) {
            try AppendOnlyManifest(parsing: "file a seq 2 type i\nfile b seq 1 type i\n")
        }
    }

    /// Writes what `source` logged as `target`'s one increment file, in a
    /// directory of its own (removed after), and loads it; the keys loaded.
    private func replay(_ source: Dispatcher, into target: Dispatcher) throws -> Int {
        var log: [UInt8] = []
        source.databases.feed.commit()
        source.databases.feed.take(into: &log)
        var template = Array("/tmp/kvd-aof-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer { _ = system("rm -rf '\(directory)'") }
        target.appendOnly.directory = directory
        #expect(mkdir(target.appendOnly.folder, 0o755) == 0)
        let fd = open(target.appendOnly.path("appendonly.aof.1.incr.aof"), O_WRONLY | O_CREAT, 0o644)
        #expect(log.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == log.count)
        close(fd)
        target.appendOnly.manifest.increments = [.init(name: "appendonly.aof.1.incr.aof", sequence: 1)]
        return try target.loadAppendOnlyFiles()
    }

    @Test func aReplayedLogRebuildsTheData() throws {
        let source = logging()
        run(source, "RPUSH", "list", "a", "b", "c")
        run(source, "HSET", "hash", "f", "v")
        run(source, "SET", "gone", "x")
        run(source, "DEL", "gone")
        run(source, "SELECT", "4")
        run(source, "SET", "str", "four", "PX", "100000")
        let target = connected()
        #expect(try replay(source, into: target) == 3)
        #expect(run(target, "LRANGE", "list", "0", "-1") == "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n")
        #expect(run(target, "EXISTS", "gone") == ":0\r\n")
        run(target, "SELECT", "4")
        #expect(run(target, "GET", "str") == "$4\r\nfour\r\n")
        #expect(target.databases[4].lookup(Array("str".utf8), now: .min)?.expiresAt != nil)
    }

    // What the file holds was accepted once: replaying it over maxmemory
    // neither refuses (noeviction's OOM) nor evicts, as Redis's loading.
    // Evictions themselves are logged as DELs, each on its own.
    @Test func aLogReplaysWholeOverMaxmemoryAndEvictionsAreLoggedAsDeletes() throws {
        let source = logging()
        for index in 0..<20 { run(source, "SET", "k\(index)", "v") }
        run(source, "MULTI")
        run(source, "SET", "m", "1")
        run(source, "INCR", "m")
        run(source, "EXEC")
        let target = connected()
        let databases = target.databases
        target.evictor = Evictor(usedMemory: { databases.keyCount * 100 })
        databases.memory.maxmemory = 500
        databases.memory.policy = .allKeysRandom
        databases.memory.tenacity = 100  // no time limit: a slow machine still evicts all at once
        #expect(try replay(source, into: target) == 21)
        #expect(databases.keyCount == 21 && databases[0].lookup(Array("m".utf8), now: 0)?.value == Array("2".utf8))
        #expect(run(target, "PING") == "+PONG\r\n")
        // The first command served evicts down to the limit, DEL by DEL.
        databases.feed.isOn = true
        #expect(databases.keyCount == 5 && target.evictor.evictedKeys == 16)
        #expect(run(target, "SET", "new", "1") == "+OK\r\n")  // 5 keys: at the limit, not over
        #expect(run(target, "SET", "newer", "1") == "+OK\r\n")
        let logs = logged(target).filter { $0[0] != "SELECT" }
        #expect(
            logs.count == 3 && logs[0] == ["SET", "new", "1"] && logs[1][0] == "DEL"
                && logs[2] == ["SET", "newer", "1"],
            "\(logs)")
    }
}
