// KeyTable.swift: one database's keys and entries, in 256 shards (Swift
// dictionaries) chosen by a cheap mix of the key's first and last 8 bytes
// and its length. Why shards: a snapshot (Persistence/Snapshot.swift)
// shares the table copy-on-write, and the core's first change after it
// copies what it changes. One dictionary meant copying every key on one
// write (0.7 s for 1M keys); with shards that write copies the outer array
// (256 references) and one shard, about 1/256 of the keys, and each
// later first write to another shard copies that shard. Each dictionary
// hashes keys with Swift's seeded hasher as before; the shard mix only
// spreads them (keys a client makes collide in it land in one shard: a
// table as before, no worse).

/// A database's key table. Core loop only, like its keyspace.
struct KeyTable: Sequence {
    typealias Shard = [Key: Keyspace.Entry]

    static let shardCount = 256

    private var shards = [Shard](repeating: [:], count: KeyTable.shardCount)
    /// Keys in every shard.
    private(set) var count = 0
    /// The shard `shrinkSparseShards` looks at first.
    private var shrinkCursor = 0

    /// Where an entry is: its shard and its place there.
    struct Index {
        let shard: Int
        let inner: Shard.Index
    }

    /// The shard of the key `bytes`.
    @inline(__always)
    static func shard(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        var mix = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        if count >= 8 {
            mix ^= bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            mix = mix &* 0xFF51_AFD7_ED55_8CCD
            mix ^= bytes.loadUnaligned(as: UInt64.self)
        } else {
            for byte in bytes { mix = (mix ^ UInt64(byte)) &* 0x100_0000_01B3 }
        }
        mix ^= mix >> 33
        mix = mix &* 0xC4CE_B9FE_1A85_EC53
        mix ^= mix >> 33
        return Int(truncatingIfNeeded: mix >> 56)
    }

    @inline(__always)
    private static func shard(of key: Key) -> Int { key.withBytes { shard($0) } }

    /// Room for the keys of every shard.
    var capacity: Int { shards.reduce(0) { $0 + $1.capacity } }

    var isEmpty: Bool { count == 0 }

    /// Where `key` is. Mutating only so that the caller's table is reached
    /// in place, and through the buffer: a copy of the table, or of the
    /// shard (`shards[shard]`), was a retain and a release per lookup.
    /// Nothing is written.
    mutating func index(forKey key: Key) -> Index? {
        let shard = KeyTable.shard(of: key)
        return shards.withUnsafeBufferPointer { $0[shard].index(forKey: key) }.map { Index(shard: shard, inner: $0) }
    }

    /// The entry at `index`, to read or change in place.
    subscript(at index: Index) -> Keyspace.Entry {
        get { shards[index.shard].values[index.inner] }
        _modify { yield &shards[index.shard].values[index.inner] }
    }

    /// The access word and deadline of the entry at `index`, read without
    /// copying the entry (a copy retains its value: a cache miss on a
    /// buffer eviction's sampling has no other reason to touch).
    func accessAndDeadline(at index: Index) -> (access: UInt32, expiresAt: Int64?) {
        shards.withUnsafeBufferPointer { shards in
            (shards[index.shard].values[index.inner].access, shards[index.shard].values[index.inner].expiresAt)
        }
    }

    /// The key at `index`.
    func key(at index: Index) -> Key { shards[index.shard].keys[index.inner] }

    /// The entry for `key`, if present.
    subscript(key: Key) -> Keyspace.Entry? { shards[KeyTable.shard(of: key)][key] }

    /// Stores `entry` for `key`, which must be absent.
    mutating func insert(_ key: Key, _ entry: Keyspace.Entry) {
        shards[KeyTable.shard(of: key)][key] = entry
        count += 1
    }

    /// Stores `entry` for `key` with one lookup when `key` is absent; when
    /// present, leaves its entry as it was (at the cost of a second
    /// lookup) and returns false.
    mutating func insertIfAbsent(_ key: Key, _ entry: Keyspace.Entry) -> Bool {
        let shard = KeyTable.shard(of: key)
        guard let present = shards[shard].updateValue(entry, forKey: key) else {
            count += 1
            return true
        }
        shards[shard][key] = present
        return false
    }

    /// Changes the entry of `key` in place, when present.
    mutating func modify(_ key: Key, _ body: (inout Keyspace.Entry) -> Void) {
        let shard = KeyTable.shard(of: key)
        guard let index = shards[shard].index(forKey: key) else { return }
        body(&shards[shard].values[index])
    }

    /// Removes the entry at `index`.
    mutating func remove(at index: Index) -> (key: Key, value: Keyspace.Entry) {
        count -= 1
        return shards[index.shard].remove(at: index.inner)
    }

    /// Changes every entry in place.
    mutating func forEachEntry(_ body: (inout Keyspace.Entry) -> Void) {
        for shard in shards.indices {
            for index in shards[shard].values.indices { body(&shards[shard].values[index]) }
        }
    }

    /// Rebuilds, smaller, the shards that hold under an eighth of their
    /// room (a Swift dictionary never shrinks by itself), going round the
    /// shards from where the last call stopped, until the keys moved pass
    /// `budget`: one call's work is bounded however large the table, and a
    /// table that emptied gives its memory back a few shards a call (a
    /// shard is about 1/256 of the keys), as eviction or expiry empties it.
    /// A shard over `budget` keys (keys made to collide in the shard mix)
    /// keeps its room. True when some shard shrank.
    mutating func shrinkSparseShards(budget: Int = 65_536) -> Bool {
        var (moved, shrank) = (0, false)
        for _ in shards.indices {
            let shard = shrinkCursor
            let (count, capacity) = (shards[shard].count, shards[shard].capacity)
            if capacity >= 64, count * 8 < capacity, count <= budget {
                guard moved + count <= budget else { break }
                var smaller = Shard(minimumCapacity: count * 2)
                for (key, entry) in shards[shard] { smaller[key] = entry }
                shards[shard] = smaller
                (moved, shrank) = (moved + count, true)
            }
            shrinkCursor = (shrinkCursor + 1) % KeyTable.shardCount
        }
        return shrank
    }

    /// Room for `total` keys in all, spread over the shards.
    mutating func reserveCapacity(_ total: Int) {
        let each = total / KeyTable.shardCount + total / (KeyTable.shardCount * 4) + 1
        for shard in shards.indices { shards[shard].reserveCapacity(each) }
    }

    mutating func removeAll() {
        shards = [Shard](repeating: [:], count: KeyTable.shardCount)
        count = 0
    }

    func makeIterator() -> FlattenSequence<[Shard]>.Iterator {
        shards.joined().makeIterator()
    }
}
