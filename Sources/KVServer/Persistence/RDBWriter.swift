// RDBWriter.swift: a snapshot as an RDB file of version 10, which
// redis-server 7.0 loads and redis-check-rdb accepts. Runs on whichever
// thread writes the file (the save thread for BGSAVE, the core for SAVE).
//
// The encodings are the plain ones, which Redis converts to its compact
// forms itself on load when the value is small: strings raw (no integer
// encoding, no LZF compression), lists as RDB_TYPE_LIST (7.0 still loads
// it into a quicklist), sets as RDB_TYPE_SET, hashes as RDB_TYPE_HASH,
// sorted sets as RDB_TYPE_ZSET_2 (binary scores). Each key is preceded by
// its expiry (RDB_OPCODE_EXPIRETIME_MS) when it has one; each database by
// SELECTDB and RESIZEDB; the file by the AUX fields Redis writes, then
// the function libraries (RDB_OPCODE_FUNCTION2 and the library's code).
// Expired keys not yet removed are written, as Redis does: a loader drops them.
import Glibc

/// Serialises snapshots.
enum RDBWriter {
    /// Writes `snapshot` to `out`, checksum included. `usedMemory` is the
    /// `used-mem` AUX field; `aofBase`: the file is an append-only base (`aof-base` 1).
    static func write(_ snapshot: Snapshot, to out: RDBOutput, usedMemory: Int = 0, aofBase: Bool = false) throws {
        try out.bytes(Array("REDIS00\(RDBFormat.version)".utf8))
        try aux(out, "redis-ver", "7.0.15")
        try aux(out, "redis-bits", String(Int.bitWidth))
        try aux(out, "ctime", String(time(nil)))
        try aux(out, "used-mem", String(usedMemory))
        try aux(out, "aof-base", aofBase ? "1" : "0")
        for code in snapshot.functionLibraries {
            try out.byte(RDBFormat.function2)
            try string(out, code)
        }
        for (index, table) in snapshot.databases.enumerated() where !table.isEmpty {
            try out.byte(RDBFormat.selectDB)
            try length(out, index)
            try out.byte(RDBFormat.resizeDB)
            try length(out, table.count)
            try length(out, table.reduce(0) { $0 + ($1.value.expiresAt == nil ? 0 : 1) })
            for (key, entry) in table {
                try pair(out, key, entry, snapshot.accessWords)
            }
        }
        try out.byte(RDBFormat.eof)
        try out.finish()
    }

    private static func aux(_ out: RDBOutput, _ name: String, _ value: String) throws {
        try out.byte(RDBFormat.aux)
        try string(out, Array(name.utf8))
        try string(out, Array(value.utf8))
    }

    private static func pair(
        _ out: RDBOutput, _ key: Key, _ entry: Keyspace.Entry,
        _ access: (policy: EvictionPolicy, decayTime: Int, now: Int64)
    ) throws {
        if let deadline = entry.expiresAt {
            try out.byte(RDBFormat.expireTimeMilliseconds)
            var little = UInt64(bitPattern: deadline).littleEndian
            try withUnsafeBytes(of: &little) { (raw) in try out.bytes(raw) }
        }
        switch access.policy {
        case .allKeysLRU, .volatileLRU:
            try out.byte(RDBFormat.idle)
            try length(out, Int(MemoryPolicy.idleMilliseconds(entry.access, now: access.now) / 1000))
        case .allKeysLFU, .volatileLFU:
            try out.byte(RDBFormat.frequency)
            try out.byte(UInt8(MemoryPolicy.frequency(entry.access, now: access.now, decayTime: access.decayTime)))
        default:
            break
        }
        try out.byte(objectType(entry))
        try string(out, key.bytes)
        try object(out, entry)
    }

    /// The RDB type `object` writes `entry`'s value as.
    static func objectType(_ entry: Keyspace.Entry) -> UInt8 {
        switch entry.collection {
        case nil: RDBFormat.string
        case .list: RDBFormat.list
        case .set: RDBFormat.set
        case .hash: RDBFormat.hash
        case .sortedSet: RDBFormat.sortedSet2
        }
    }

    /// `entry`'s value, as a file holds it after its type and key (DUMP's
    /// payload holds it after the type alone).
    static func object(_ out: RDBOutput, _ entry: Keyspace.Entry) throws {
        guard let collection = entry.collection else { return try string(out, entry.value) }
        switch collection {
        case .list(let list):
            try length(out, list.count)
            for index in 0..<list.count { try string(out, list[index]) }
        case .set(let set):
            try length(out, set.count)
            for index in 0..<set.count { try string(out, set[index]) }
        case .hash(let hash):
            try length(out, hash.count)
            try hash.forEachEntry { field, value in
                try string(out, field)
                try string(out, value)
                return true
            }
        case .sortedSet(let sortedSet):
            try length(out, sortedSet.count)
            var node = sortedSet.order.first
            while let current = node {
                try string(out, current.memberBytes)
                var bits = current.score.bitPattern.littleEndian
                try withUnsafeBytes(of: &bits) { (raw) in try out.bytes(raw) }
                node = current.next
            }
        }
    }

    /// RDB's length encoding: 6 bits, 14 bits, 32 or 64 bits big-endian.
    static func length(_ out: RDBOutput, _ value: Int) throws {
        switch value {
        case ..<64: try out.byte(UInt8(value))
        case ..<16_384:
            try out.byte(0x40 | UInt8(value >> 8))
            try out.byte(UInt8(value & 0xFF))
        case ...Int(UInt32.max):
            try out.byte(0x80)
            var big = UInt32(value).bigEndian
            try withUnsafeBytes(of: &big) { (raw) in try out.bytes(raw) }
        default:
            try out.byte(0x81)
            var big = UInt64(value).bigEndian
            try withUnsafeBytes(of: &big) { (raw) in try out.bytes(raw) }
        }
    }

    /// A string: its length, then its bytes.
    static func string(_ out: RDBOutput, _ bytes: UnsafeRawBufferPointer) throws {
        try length(out, bytes.count)
        try out.bytes(bytes)
    }

    static func string(_ out: RDBOutput, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { (raw) in try string(out, raw) }
    }
}
