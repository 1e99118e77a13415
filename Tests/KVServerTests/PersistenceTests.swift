// PersistenceTests.swift: the RDB format's pieces against values written
// from Redis's definitions (CRC-64/Jones's check value, hand-built
// ziplists, listpacks, intsets, zipmaps and LZF streams); a snapshot of
// every type written and loaded back; corrupt files refused; the
// point-in-time view that BGSAVE writes while commands change the data;
// SAVE, BGSAVE and LASTSAVE through the dispatcher. tools/rdb-interop.py
// (make test-kvd) moves files between kvd and a real redis-server.
import Glibc
import Testing

@testable import KVServer

@Suite struct PersistenceTests {
    /// Every key of databases 0 and 2 as the read commands answer it.
    private func contents(_ dispatcher: Dispatcher) -> [String] {
        var lines: [String] = []
        for database in ["0", "2"] {
            run(dispatcher, "SELECT", database)
            for key in ["s", "h", "l", "set", "z", "gone"] {
                let type = run(dispatcher, "TYPE", key)
                let read =
                    switch type {
                    case "+string\r\n": run(dispatcher, "GET", key)
                    case "+hash\r\n": run(dispatcher, "HGETALL", key)
                    case "+list\r\n": run(dispatcher, "LRANGE", key, "0", "-1")
                    case "+set\r\n": run(dispatcher, "SMEMBERS", key)
                    case "+zset\r\n": run(dispatcher, "ZRANGE", key, "0", "-1", "WITHSCORES")
                    default: ""
                    }
                let ttl = run(dispatcher, "PTTL", key)
                lines.append("\(database) \(key) \(type) \(read) ttl:\(ttl.hasPrefix(":-") ? ttl : "set")")
            }
        }
        return lines
    }

    private func fill(_ dispatcher: Dispatcher) {
        for database in ["0", "2"] {
            run(dispatcher, "SELECT", database)
            run(dispatcher, "SET", "s", "value-\(database)")
            run(dispatcher, "HSET", "h", "f1", "v1", "f2", "22")
            run(dispatcher, "RPUSH", "l", "a", "b", "-3")
            run(dispatcher, "SADD", "set", "1", "2", "x")
            run(dispatcher, "ZADD", "z", "1.5", "a", "-inf", "b", "7", "c")
            run(dispatcher, "PEXPIRE", "h", "100000")
        }
    }

    private func image(_ databases: Databases) throws -> [UInt8] {
        let out = RDBOutput()
        try RDBWriter.write(Snapshot(databases), to: out)
        return out.buffer
    }

    @Test func crc64IsRedisJonesCRCWhateverTheChunking() {
        var crc = CRC64()
        crc.update(Array("123456789".utf8))
        #expect(crc.value == 0xe9c6_d914_c4b8_d9ca)
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        var whole = CRC64()
        whole.update(bytes)
        var pieces = CRC64()
        for range in [0..<1, 1..<10, 10..<17, 17..<500, 500..<1000] { pieces.update(Array(bytes[range])) }
        #expect(whole.value == pieces.value)
    }

    @Test func lzfExpandsLiteralsAndOverlappingReferencesAndRefusesBadOnes() {
        // "a", then 9 bytes copied from 1 back (a run of the same byte).
        #expect(LZF.decompress([0x00, 0x61, 0xE0, 0x00, 0x00], length: 10) == Array(repeating: 0x61, count: 10))
        #expect(LZF.decompress([0x02, 0x61, 0x62, 0x63, 0x20, 0x02], length: 6) == Array("abcabc".utf8))
        #expect(LZF.decompress([0x20, 0x05], length: 3) == nil, "a reference before the start")
        #expect(LZF.decompress([0x05, 0x61], length: 6) == nil, "a literal run past the end")
    }

    @Test func compactEncodingsDecodeAsRedisWroteThem() {
        // ziplist: "ab", 5 (immediate), -2 (int16)
        let ziplist: [UInt8] = [
            21, 0, 0, 0, 16, 0, 0, 0, 3, 0, 0x00, 0x02, 0x61, 0x62, 0x04, 0xF6, 0x02, 0xC0, 0xFE, 0xFF, 0xFF,
        ]
        #expect(Ziplist.elements(ziplist)?.map { String(decoding: $0, as: UTF8.self) } == ["ab", "5", "-2"])
        #expect(Ziplist.elements(Array(ziplist.dropLast())) == nil)
        // listpack: 100 (7-bit), "hi", -1 (13-bit)
        let listpack: [UInt8] = [16, 0, 0, 0, 3, 0, 0x64, 0x01, 0x82, 0x68, 0x69, 0x03, 0xDF, 0xFF, 0x02, 0xFF]
        #expect(Listpack.elements(listpack)?.map { String(decoding: $0, as: UTF8.self) } == ["100", "hi", "-1"])
        #expect(Listpack.elements([16, 0, 0, 0, 3, 0, 0x8F, 0x68, 0x69, 0x03, 0, 0, 0, 0, 0, 0xFF]) == nil)
        // intset of int16: -1, 3
        #expect(
            Intset.members([2, 0, 0, 0, 2, 0, 0, 0, 0xFF, 0xFF, 3, 0])?.map { String(decoding: $0, as: UTF8.self) } == [
                "-1", "3",
            ])
        #expect(Intset.members([2, 0, 0, 0, 3, 0, 0, 0, 0xFF, 0xFF, 3, 0]) == nil)
        // zipmap: f -> v
        #expect(Zipmap.elements([1, 1, 0x66, 1, 0, 0x76, 0xFF]) == [[0x66], [0x76]])
    }

    @Test func aSnapshotOfEveryTypeLoadsBackTheSameAndDropsExpiredKeys() throws {
        let source = connected()
        fill(source)
        source.databases[0].set(Array("gone".utf8), [1], expiresAt: unixMilliseconds() - 1)
        let bytes = try image(source.databases)
        let target = connected()
        let summary = try RDBLoader.load(RDBInput(bytes: bytes), into: target.databases, now: unixMilliseconds())
        #expect(summary == RDBLoader.Summary(keys: 10, expired: 1))
        source.databases[0].remove(Array("gone".utf8))
        #expect(contents(target) == contents(source))
    }

    @Test func functionLibrariesTravelInTheSnapshotAndLoadBack() throws {
        let source = connected()
        let code = "#!lua name=lib\nredis.register_function('f', function(keys, args) return 'saved' end)"
        #expect(run(source, "FUNCTION", "LOAD", code) == "$3\r\nlib\r\n")
        let bytes = try image(source.databases)
        let target = connected()
        let summary = try RDBLoader.load(RDBInput(bytes: bytes), into: target.databases, now: unixMilliseconds())
        #expect(summary.libraries == [Array(code.utf8)])
        #expect(target.databases.functions.restore(summary.libraries, policy: .append, engine: target.scripts) == nil)
        #expect(run(target, "FCALL", "f", "0") == "$5\r\nsaved\r\n")
    }

    @Test func aTruncatedOrAlteredFileIsRefusedSayingWhy() throws {
        let source = connected()
        fill(source)
        let bytes = try image(source.databases)
        func error(_ bytes: [UInt8]) -> String {
            do {
                _ = try RDBLoader.load(RDBInput(bytes: bytes), into: Databases(), now: 0)
                return "loaded"
            } catch { return error.description }
        }
        #expect(error(Array(bytes.prefix(bytes.count - 30))).contains("unexpected end of file"))
        // One letter of a value changed: the file still parses, the checksum does not match.
        let value = Array("value-0".utf8)
        let at = try #require((0..<bytes.count - value.count).first { Array(bytes[$0..<$0 + value.count]) == value })
        var altered = bytes
        altered[at] = UInt8(ascii: "V")
        #expect(error(altered).contains("wrong RDB checksum"))
        #expect(error(Array("REDIS0011".utf8) + bytes.dropFirst(9)).contains("version 11"))
        // A key twice in one database (a string, then a list), checksum right.
        let twice = RDBOutput()
        try twice.bytes(Array("REDIS0010".utf8) + [RDBFormat.selectDB, 0])
        try twice.bytes([RDBFormat.string, 1, 97, 1, 49, RDBFormat.list, 1, 97, 1, 1, 50, RDBFormat.eof])
        try twice.finish()
        #expect(error(twice.buffer).contains("holds key 'a' twice in database 0"), "\(error(twice.buffer))")
    }

    @Test func theSnapshotKeepsThePointInTimeWhileCommandsChangeTheData() throws {
        let dispatcher = connected()
        fill(dispatcher)
        let before = contents(dispatcher)
        let snapshot = Snapshot(dispatcher.databases)
        dispatcher.databases.fence.open()
        run(dispatcher, "SELECT", "0")
        run(dispatcher, "RPUSH", "l", "after")
        run(dispatcher, "HSET", "h", "f3", "after")
        run(dispatcher, "SADD", "set", "after")
        run(dispatcher, "ZADD", "z", "9", "after")
        run(dispatcher, "APPEND", "s", "-after")
        run(dispatcher, "SELECT", "2")
        run(dispatcher, "DEL", "l")
        run(dispatcher, "FLUSHDB")
        let out = RDBOutput()
        try RDBWriter.write(snapshot, to: out)
        dispatcher.databases.fence.close()
        let loaded = connected()
        _ = try RDBLoader.load(RDBInput(bytes: out.buffer), into: loaded.databases, now: unixMilliseconds())
        #expect(contents(loaded) == before)
        run(dispatcher, "SELECT", "0")
        #expect(run(dispatcher, "LRANGE", "l", "-1", "-1") == "*1\r\n$5\r\nafter\r\n")
    }

    /// A file of several MiB, read from its descriptor in 1 MiB chunks:
    /// values straddle the refills (and one value spans several), the
    /// checksum still covers every byte once, and one byte changed past
    /// the first MiB is caught.
    @Test func aFileLargerThanTheReadBufferLoadsWholeAndItsChecksumCoversEveryByte() throws {
        let source = connected()
        for index in 0..<3000 {
            run(source, "SET", "k\(index)", String(repeating: Character(UnicodeScalar(97 + index % 26)!), count: 1000))
        }
        run(source, "SET", "huge", String(repeating: "z", count: 2_500_000))
        let bytes = try image(source.databases)
        #expect(bytes.count > 5 << 20)
        let snapshots = try SnapshotDirectory()
        defer { snapshots.remove() }
        let directory = snapshots.path
        func write(_ bytes: [UInt8]) {
            let fd = open(directory + "/dump.rdb", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        write(bytes)
        let loaded = Databases()
        let summary = try SnapshotFile(directory: directory, name: "dump.rdb").load(into: loaded)
        #expect(summary?.keys == 3001)
        #expect(loaded[0].lookup(Array("huge".utf8), now: 0)?.value.count == 2_500_000)
        let mismatched = (0..<3000).filter { index in
            loaded[0].lookup(Array("k\(index)".utf8), now: 0)?.value
                != [UInt8](repeating: UInt8(97 + index % 26), count: 1000)
        }
        #expect(mismatched.isEmpty, "\(mismatched.count) values differ")
        var altered = bytes
        altered[(3 << 19) + 17] ^= 1  // 1.5 MiB in: inside a value, after a refill
        write(altered)
        #expect(throws: PersistenceError.self) {
            try SnapshotFile(directory: directory, name: "dump.rdb").load(into: Databases())
        }
        do {
            _ = try SnapshotFile(directory: directory, name: "dump.rdb").load(into: Databases())
        } catch {
            #expect(error.description.contains("wrong RDB checksum"), "\(error)")
        }
    }

    // Redis's flushAllDataAndResetRDB: with save points set, FLUSHALL saves
    // the emptied dataset at once, so a restart does not bring the keys
    // back from the last file; without them the file stays, and the count
    // holds the keys flushed.
    @Test func flushAllWithSavePointsSavesTheEmptiedDatasetAsRedisDoes() throws {
        let dispatcher = connected()
        let snapshots = try SnapshotDirectory()
        defer { snapshots.remove() }
        let directory = snapshots.path
        let file = SnapshotFile(directory: directory, name: "dump.rdb")
        dispatcher.persistence.file = file
        fill(dispatcher)
        #expect(run(dispatcher, "SAVE") == "+OK\r\n")
        #expect(run(dispatcher, "FLUSHALL") == "+OK\r\n")
        #expect(run(dispatcher, "INFO", "persistence").contains("rdb_changes_since_last_save:10\r\n"))
        #expect(try file.load(into: Databases())?.keys == 10)
        dispatcher.persistence.savePoints = try #require(SavePoint.parse("3600 1"))
        fill(dispatcher)
        #expect(run(dispatcher, "FLUSHALL") == "+OK\r\n")
        #expect(run(dispatcher, "INFO", "persistence").contains("rdb_changes_since_last_save:0\r\n"))
        #expect(try file.load(into: Databases())?.keys == 0)
    }

    @Test func saveBackgroundSaveAndLastSaveAnswerAsRedis() throws {
        let dispatcher = connected()
        #expect(run(dispatcher, "SAVE").hasPrefix("-ERR snapshots are off"))
        let snapshots = try SnapshotDirectory()
        defer { snapshots.remove() }
        let directory = snapshots.path
        dispatcher.persistence.file = SnapshotFile(directory: directory, name: "dump.rdb")
        fill(dispatcher)
        #expect(run(dispatcher, "SAVE") == "+OK\r\n")
        #expect(run(dispatcher, "BGSAVE", "NOW") == "-ERR syntax error\r\n")
        #expect(run(dispatcher, "BGSAVE") == "+Background saving started\r\n")
        let info = run(dispatcher, "INFO", "persistence")
        #expect(info.contains("rdb_saves:2\r\n") && info.contains("rdb_changes_since_last_save:0\r\n"))
        #expect(info.contains("rdb_last_bgsave_status:ok\r\n"))
        let lastSave = run(dispatcher, "LASTSAVE")
        #expect(abs((Int(lastSave.dropFirst().dropLast()) ?? 0) - Int(time(nil))) <= 2)
        let loaded = Databases()
        let summary = try SnapshotFile(directory: directory, name: "dump.rdb").load(into: loaded)
        #expect(summary?.keys == 10)
        // Redis's no-multi and noscript commands.
        #expect(run(dispatcher, "MULTI") == "+OK\r\n")
        #expect(run(dispatcher, "SAVE") == "-ERR Command not allowed inside a transaction\r\n")
        #expect(run(dispatcher, "SHUTDOWN") == "-ERR Command not allowed inside a transaction\r\n")
        #expect(run(dispatcher, "EXEC").hasPrefix("-EXECABORT"))
        #expect(run(dispatcher, "EVAL", "return redis.call('bgsave')", "0").contains("not allowed from script"))
    }
}
