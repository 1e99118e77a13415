// RDBLoader.swift: an RDB file (versions 1 to 10) into the databases, at
// start-up, on the core loop before it serves anybody (redis-server too
// loads before it serves; it answers LOADING meanwhile, kvd is not yet
// listening). Everything redis-server 7.0 writes is read: strings raw,
// integer-encoded or LZF-compressed; lists as quicklists (version 2 with
// listpack or plain nodes, version 1 with ziplists), ziplists or plain;
// sets as intsets or plain; hashes and sorted sets as listpacks,
// ziplists, zipmaps or plain; expiry in seconds or milliseconds; the
// LRU/LFU hints (skipped) and AUX fields; Redis functions' libraries
// (their code, compiled by the caller). Streams and module values, which
// kvd cannot hold, refuse the file with a message
// naming what was found. So do a wrong checksum, a truncated file, a
// malformed encoding and a key twice in one database: kvd never starts
// on half a dataset. Keys whose deadline has passed are dropped, as
// redis-server drops them.
import Glibc

/// Reads RDB files.
enum RDBLoader {
    /// What one load found.
    struct Summary: Equatable {
        /// Keys stored.
        var keys = 0
        /// Keys dropped because their deadline had passed.
        var expired = 0
        /// The function libraries' codes (FUNCTION LOAD's), to compile.
        var libraries: [[UInt8]] = []
    }

    /// A value as the file holds it, converted.
    enum Value {
        case string([UInt8])
        case collection(Collection)
        /// A collection with no element, which Redis skips as well.
        case empty
    }

    /// Loads every key of `input` into `databases` (which should be
    /// empty), dropping the keys already expired at `now` (Unix ms).
    static func load(_ input: RDBInput, into databases: Databases, now: Int64) throws(PersistenceError) -> Summary {
        let signature = try input.bytes(9)
        guard signature.starts(with: Array("REDIS".utf8)),
            let version = Int(String(decoding: signature[5...], as: UTF8.self))
        else { throw PersistenceError("not an RDB file (no REDIS signature)") }
        guard (1...RDBFormat.version).contains(version) else {
            throw PersistenceError("RDB format version \(version) is newer than \(RDBFormat.version), which kvd reads")
        }
        var summary = Summary()
        var database = 0
        var expiresAt: Int64?
        // A key's IDLE or FREQ (written under an LRU or LFU policy), read
        // into its access word as RESTORE's IDLETIME and FREQ are.
        var idleSeconds: Int?
        var frequency: Int?
        let newKeyAccess = databases.memory.initialAccess(now: now)
        let limits = databases.limits
        loop: while true {
            let type = try input.byte()
            switch type {
            case RDBFormat.expireTimeMilliseconds:
                expiresAt = Int64(bitPattern: try input.littleEndian(8))
                continue
            case RDBFormat.expireTime:
                expiresAt = signExtend(try input.littleEndian(4), bits: 32) * 1000
                continue
            case RDBFormat.frequency:
                frequency = Int(try input.byte())
                continue
            case RDBFormat.idle:
                idleSeconds = try length(input)
                continue
            case RDBFormat.eof:
                break loop
            case RDBFormat.selectDB:
                database = try length(input)
                guard database < databases.count else {
                    throw PersistenceError(
                        "the RDB file selects database \(database); kvd has \(databases.count) (0 to \(databases.count - 1))"
                    )
                }
                continue
            case RDBFormat.resizeDB:
                // A hint, as in Redis: room for the keys that follow, but no
                // more than the file can hold (a corrupt hint must not
                // allocate without bound; a key takes at least 3 bytes).
                databases[database].reserve(min(try length(input), input.size / 3))
                _ = try length(input)
                continue
            case RDBFormat.aux:
                _ = try string(input)
                _ = try string(input)
                continue
            case RDBFormat.moduleAux:
                throw PersistenceError("the RDB file holds module auxiliary data; kvd has no modules")
            case RDBFormat.function, RDBFormat.function2:
                summary.libraries.append(try functionCode(type, input))
                continue
            default:
                break
            }
            let key = try string(input)
            let value = try self.value(type, input, key: key, limits)
            defer { (expiresAt, idleSeconds, frequency) = (nil, nil, nil) }
            if let deadline = expiresAt, deadline <= now {
                summary.expired += 1
                continue
            }
            let keyspace = databases[database]
            let access =
                idleSeconds == nil && frequency == nil
                ? newKeyAccess
                : databases.memory.restoredAccess(idleSeconds: idleSeconds, frequency: frequency, now: now)
                    ?? newKeyAccess
            let stored: Bool
            switch value {
            case .string(let bytes): stored = keyspace.load(key, bytes, nil, expiresAt: expiresAt, access: access)
            case .collection(let collection):
                stored = keyspace.load(key, [], collection, expiresAt: expiresAt, access: access)
            case .empty: continue
            }
            guard stored else {
                throw PersistenceError("the RDB file holds key '\(printable(key))' twice in database \(database)")
            }
            summary.keys += 1
        }
        if version >= 5 {
            let computed = input.crc.value
            guard let stored = try input.trailer() else {
                throw PersistenceError("unexpected end of file: the RDB file's checksum is missing")
            }
            // A checksum of 0 means the writer computed none (rdbchecksum no).
            if stored != 0 && stored != computed {
                throw PersistenceError(
                    "wrong RDB checksum: the file says \(hex(stored)), its contents give \(hex(computed))")
            }
        }
        return summary
    }

    /// A function library's code after its opcode: Redis 7.0's (one
    /// string), or 7.0's release candidates' (name, engine, description,
    /// code), which Redis turns into the same `#!<engine> name=<name>` form.
    static func functionCode(_ type: UInt8, _ input: RDBInput) throws(PersistenceError) -> [UInt8] {
        guard type == RDBFormat.function else { return try string(input) }
        let name = try string(input)
        let engine = try string(input)
        if try length(input) != 0 { _ = try string(input) }
        let code = try string(input)
        return Array("#!".utf8) + engine + Array(" name=".utf8) + name + [10] + code
    }

    // MARK: - Values

    /// The object at the start of a DUMP payload (RESTORE): its RDB type,
    /// then its value as a file holds it after the key. The footer follows
    /// and is read only by a value that runs into it, as in Redis. `key`
    /// names it in errors.
    static func object(_ input: RDBInput, key: [UInt8], _ limits: EncodingLimits) throws(PersistenceError) -> Value {
        try value(try input.byte(), input, key: key, limits)
    }

    private static func value(
        _ type: UInt8, _ input: RDBInput, key: [UInt8], _ limits: EncodingLimits
    ) throws(PersistenceError) -> Value {
        func corrupt(_ what: String) -> PersistenceError { RDBLoader.corrupt(what, key) }
        switch type {
        case RDBFormat.string:
            return .string(try string(input))
        case RDBFormat.list:
            let count = try length(input)
            var elements: [[UInt8]] = []
            for _ in 0..<count { elements.append(try string(input)) }
            return list(elements)
        case RDBFormat.set:
            let count = try length(input)
            var members: [[UInt8]] = []
            for _ in 0..<count { members.append(try string(input)) }
            return try set(members, limits, key)
        case RDBFormat.sortedSet, RDBFormat.sortedSet2:
            let count = try length(input)
            var pairs: [([UInt8], Double)] = []
            for _ in 0..<count {
                let member = try string(input)
                let score =
                    type == RDBFormat.sortedSet2
                    ? Double(bitPattern: try input.littleEndian(8)) : try textDouble(input)
                // A sorted set cannot order NaN (Redis refuses it in these encodings:
                // "Zset with NAN score detected"; kvd in every one).
                guard !score.isNaN else { throw corrupt("sorted set score (NaN)") }
                pairs.append((member, score))
            }
            return try sortedSet(pairs, limits, key)
        case RDBFormat.hash:
            let count = try length(input)
            var elements: [[UInt8]] = []
            for _ in 0..<count {
                elements.append(try string(input))
                elements.append(try string(input))
            }
            return try hash(elements, limits, key)
        case RDBFormat.hashZipmap:
            guard let elements = Zipmap.elements(try string(input)) else { throw corrupt("zipmap") }
            return try hash(elements, limits, key)
        case RDBFormat.listZiplist:
            guard let elements = Ziplist.elements(try string(input)) else { throw corrupt("ziplist") }
            return list(elements)
        case RDBFormat.setIntset:
            guard let members = Intset.members(try string(input)) else { throw corrupt("intset") }
            return try set(members, limits, key)
        case RDBFormat.sortedSetZiplist, RDBFormat.sortedSetListpack:
            let blob = try string(input)
            let elements = type == RDBFormat.sortedSetZiplist ? Ziplist.elements(blob) : Listpack.elements(blob)
            guard let elements, elements.count % 2 == 0 else { throw corrupt("sorted set encoding") }
            var pairs: [([UInt8], Double)] = []
            for index in stride(from: 0, to: elements.count, by: 2) {
                guard let score = Double(String(decoding: elements[index + 1], as: UTF8.self)), !score.isNaN else {
                    throw corrupt("sorted set score")
                }
                pairs.append((elements[index], score))
            }
            return try sortedSet(pairs, limits, key)
        case RDBFormat.hashZiplist, RDBFormat.hashListpack:
            let blob = try string(input)
            let elements = type == RDBFormat.hashZiplist ? Ziplist.elements(blob) : Listpack.elements(blob)
            guard let elements, elements.count % 2 == 0 else { throw corrupt("hash encoding") }
            return try hash(elements, limits, key)
        case RDBFormat.listQuicklist, RDBFormat.listQuicklist2:
            let nodes = try length(input)
            var elements: [[UInt8]] = []
            for _ in 0..<nodes {
                let container = type == RDBFormat.listQuicklist2 ? try length(input) : RDBFormat.packedNode
                let blob = try string(input)
                switch container {
                case RDBFormat.plainNode: elements.append(blob)
                case RDBFormat.packedNode:
                    let node = type == RDBFormat.listQuicklist2 ? Listpack.elements(blob) : Ziplist.elements(blob)
                    guard let node else { throw corrupt("quicklist node") }
                    elements.append(contentsOf: node)
                default: throw corrupt("quicklist node container (\(container))")
                }
            }
            return list(elements)
        default:
            if let name = RDBFormat.unsupportedTypeName(type) {
                throw PersistenceError(
                    "the RDB file holds \(name) at key '\(printable(key))'; kvd does not support that type")
            }
            throw PersistenceError("unknown RDB value type \(type) at key '\(printable(key))'")
        }
    }

    private static func list(_ elements: [[UInt8]]) -> Value {
        guard !elements.isEmpty else { return .empty }
        let list = ListValue()
        for element in elements { list.pushBack(element) }
        return .collection(.list(list))
    }

    // A set, hash or sorted set holding an element twice is corrupt: Redis
    // refuses one ("Duplicate set members detected" and its kin), and kvd's
    // would silently hold fewer elements than the file says.

    private static func set(_ members: [[UInt8]], _ limits: EncodingLimits, _ key: [UInt8]) throws(PersistenceError)
        -> Value
    {
        guard !members.isEmpty else { return .empty }
        let set = SetValue()
        for member in members { set.add(member, limits) }
        guard set.count == members.count else { throw corrupt("set (a member twice)", key) }
        return .collection(.set(set))
    }

    private static func hash(_ elements: [[UInt8]], _ limits: EncodingLimits, _ key: [UInt8]) throws(PersistenceError)
        -> Value
    {
        guard !elements.isEmpty else { return .empty }
        guard let hash = HashValue.loading(elements, limits) else { throw corrupt("hash (a field twice)", key) }
        return .collection(.hash(hash))
    }

    private static func sortedSet(
        _ pairs: [([UInt8], Double)], _ limits: EncodingLimits, _ key: [UInt8]
    ) throws(PersistenceError) -> Value {
        guard !pairs.isEmpty else { return .empty }
        let sortedSet = SortedSetValue()
        for (member, score) in pairs { sortedSet.set(member, score, limits) }
        guard sortedSet.count == pairs.count else { throw corrupt("sorted set (a member twice)", key) }
        return .collection(.sortedSet(sortedSet))
    }

    private static func corrupt(_ what: String, _ key: [UInt8]) -> PersistenceError {
        PersistenceError("the RDB file holds a corrupt \(what) at key '\(printable(key))'")
    }

    // MARK: - Primitives

    /// A length (RDB's 6-, 14-, 32- or 64-bit encoding); an encoded
    /// string's tag is an error here.
    static func length(_ input: RDBInput) throws(PersistenceError) -> Int {
        let (value, encoded) = try rawLength(input)
        guard !encoded else { throw PersistenceError("a length is an encoded value at byte \(input.offset)") }
        return value
    }

    private static func rawLength(_ input: RDBInput) throws(PersistenceError) -> (Int, encoded: Bool) {
        let first = try input.byte()
        switch first >> 6 {
        case 0: return (Int(first & 0x3F), false)
        case 1: return (Int(first & 0x3F) << 8 | Int(try input.byte()), false)
        case 3: return (Int(first & 0x3F), true)
        default:
            let value: UInt64
            switch first {
            case 0x80: value = try input.bigEndian(4)
            case 0x81: value = try input.bigEndian(8)
            default: throw PersistenceError("unknown length encoding \(first) at byte \(input.offset)")
            }
            guard value <= UInt64(Int32.max) * 4 else {
                throw PersistenceError("a length of \(value) at byte \(input.offset) is past what kvd loads")
            }
            return (Int(value), false)
        }
    }

    /// A string: raw, an integer in 1, 2 or 4 bytes, or LZF-compressed.
    static func string(_ input: RDBInput) throws(PersistenceError) -> [UInt8] {
        let (value, encoded) = try rawLength(input)
        guard encoded else { return try input.bytes(value) }
        switch value {
        case 0: return decimal(signExtend(try input.littleEndian(1), bits: 8))
        case 1: return decimal(signExtend(try input.littleEndian(2), bits: 16))
        case 2: return decimal(signExtend(try input.littleEndian(4), bits: 32))
        case 3:
            let compressedLength = try length(input)
            let length = try self.length(input)
            guard let bytes = LZF.decompress(try input.bytes(compressedLength), length: length) else {
                throw PersistenceError("a corrupt LZF-compressed string at byte \(input.offset)")
            }
            return bytes
        default: throw PersistenceError("unknown string encoding \(value) at byte \(input.offset)")
        }
    }

    /// An old sorted set's score: a length byte (253 NaN, 254 +inf, 255
    /// -inf) and the number in text.
    private static func textDouble(_ input: RDBInput) throws(PersistenceError) -> Double {
        let count = try input.byte()
        switch count {
        case 253: return .nan
        case 254: return .infinity
        case 255: return -.infinity
        default:
            let text = try input.bytes(Int(count))
            guard let value = Double(String(decoding: text, as: UTF8.self)) else {
                throw PersistenceError("a corrupt score at byte \(input.offset)")
            }
            return value
        }
    }

    private static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// A key for a message: up to 64 bytes, non-printable ones as \xNN.
    private static func printable(_ key: [UInt8]) -> String {
        key.prefix(64).map { (32..<127).contains($0) ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }
            .joined()
    }
}
