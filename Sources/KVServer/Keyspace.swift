// Keyspace.swift: the store: byte-string keys and values with expiry, and
// the invariants that go with them. Owned by one loop (EventLoop.main in
// kvd, through the Dispatcher); no lock anywhere: every method runs on that
// loop's thread. Command handlers go through these methods only.
//
// Invariants:
// - A key whose deadline has passed is never returned: `lookup` deletes it
//   first (lazy expiry), and `expireCycle` deletes it in the background.
// - Deadlines are Unix times in milliseconds, as in Redis: EXPIREAT and
//   EXPIRETIME mean what they say, and EXPIRE's overflow checks fire where
//   Redis's do.
// - `expiring` lists exactly the keys that have an expiry, each once, and
//   `Entry.expiryIndex` is the key's position in it (-1: no expiry).
//   Refreshing a TTL changes the entry's deadline in place; removing a key
//   or its expiry swaps the last key into its slot. So the index never grows
//   past the number of keys, however often TTLs are refreshed.
// - `slots` lists every key once, and `Entry.slot` is its position: the
//   same swap-remove, so RANDOMKEY is one random pick and SCAN walks the
//   slots from the top down. A removal moves only the last key, which a
//   downward scan has already returned, into the hole: a key present for a
//   whole scan is returned at least once, as Redis promises.
// - Every change to a key (set, expiry, removal, expiry firing) marks the
//   clients that WATCH it. With nobody watching, that costs one `isEmpty`.
// - Keys hash over their whole buffer at once (`Key`), never byte by byte:
//   a 500 MB key costs one pass of the hasher, not 500 M calls.
import Glibc

/// Milliseconds on the monotonic clock: for intervals that must not jump
/// with the wall clock (uptime, how long a client has been over a limit).
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Unix time in milliseconds: the clock of key deadlines, as in Redis.
func unixMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Nanoseconds on the monotonic clock, for time budgets.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// A client's WATCH state: set when a key it watches changes.
final class WatchFlag {
    /// A watched key changed since WATCH: EXEC must fail.
    var dirty = false
}

/// A key: its bytes, hashed in one call over the whole buffer (`[UInt8]`'s
/// own hashing feeds the hasher one byte at a time).
struct Key: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: Key, b: Key) -> Bool {
        guard a.bytes.count == b.bytes.count else { return false }
        return a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }
}

/// The key-value store: byte-string keys and values with optional expiry.
/// Not thread-safe by design: one loop owns it (EventLoop.main in kvd), and
/// every call runs on that loop's thread.
public final class Keyspace {
    /// One value and its expiry.
    struct Entry {
        var value: [UInt8]
        /// Unix milliseconds at which the key expires, if it does.
        var expiresAt: Int64?
        /// Position in `expiring` (-1 when the key has no expiry).
        var expiryIndex = -1
        /// Position in `slots`.
        var slot = 0
    }

    private var entries: [Key: Entry] = [:]
    private var expiring: [Key] = []
    private var slots: [Key] = []
    /// The clients watching each key (WATCH); empty almost always.
    private var watchers: [Key: [WatchFlag]] = [:]
    /// xorshift64 state for sampling (no system call per sample).
    private var randomState: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// How many keys expired (lazily or actively).
    public private(set) var expiredKeys = 0

    /// An empty keyspace.
    public init() {}

    /// The number of keys, counting expired ones not yet removed.
    public var count: Int { entries.count }

    /// Keys with an expiry (for INFO's keyspace line).
    var expiresCount: Int { expiring.count }

    /// The live entry for `key`, deleting it first if it has expired (lazy expiry).
    func lookup(_ key: [UInt8], now: Int64) -> Entry? {
        let key = Key(key)
        guard let entry = entries[key] else { return nil }
        if let deadline = entry.expiresAt, deadline <= now {
            delete(key, entry)
            expiredKeys += 1
            return nil
        }
        return entry
    }

    /// True when `key` is present but past its deadline (not deleted yet).
    func hasExpired(_ key: [UInt8], now: Int64) -> Bool {
        entries[Key(key)]?.expiresAt.map { $0 <= now } ?? false
    }

    /// Stores `value` under `key` with `expiresAt` (nil: no expiry).
    func set(_ key: [UInt8], _ value: [UInt8], expiresAt: Int64?) {
        let key = Key(key)
        touch(key)
        if let index = entries.index(forKey: key) {
            // The common case: one hash lookup, the entry changed in place.
            let had = entries.values[index].expiryIndex
            entries.values[index].value = value
            entries.values[index].expiresAt = expiresAt
            reindex(key, at: index, had: had, expires: expiresAt != nil)
        } else {
            entries[key] = Entry(value: value, expiresAt: expiresAt, expiryIndex: -1, slot: slots.count)
            slots.append(key)
            if expiresAt != nil { reindex(key, at: entries.index(forKey: key)!, had: -1, expires: true) }
        }
    }

    /// Gives a live key a new deadline (nil: persist).
    func setExpiry(_ key: [UInt8], _ deadline: Int64?) {
        let key = Key(key)
        guard let index = entries.index(forKey: key) else { return }
        touch(key)
        let had = entries.values[index].expiryIndex
        entries.values[index].expiresAt = deadline
        reindex(key, at: index, had: had, expires: deadline != nil)
    }

    /// Deletes `key`; true when it was there.
    @discardableResult
    func remove(_ key: [UInt8]) -> Bool {
        let key = Key(key)
        guard let entry = entries[key] else { return false }
        delete(key, entry)
        return true
    }

    /// Changes the live value of `key` in place (the array stays uniquely
    /// referenced, so this does not copy it); nil when the key is absent.
    func modify<Result>(_ key: [UInt8], now: Int64, _ body: (inout [UInt8]) -> Result) -> Result? {
        guard lookup(key, now: now) != nil, let index = entries.index(forKey: Key(key)) else { return nil }
        touch(Key(key))
        return body(&entries.values[index].value)
    }

    /// Appends `suffix` to the live value of `key` in place; returns the new
    /// length, or nil when the key is absent.
    func append(_ suffix: [UInt8], to key: [UInt8], now: Int64) -> Int? {
        modify(key, now: now) { value in
            value.append(contentsOf: suffix)
            return value.count
        }
    }

    /// The live keys for which `matches` is true.
    func keys(now: Int64, where matches: ([UInt8]) -> Bool) -> [[UInt8]] {
        var found: [[UInt8]] = []
        for (key, entry) in entries where (entry.expiresAt.map { $0 > now } ?? true) && matches(key.bytes) {
            found.append(key.bytes)
        }
        return found
    }

    /// A live key chosen at random, or nil when there is none. Expired keys
    /// met on the way are deleted (each pick removes one or returns).
    func randomKey(now: Int64) -> [UInt8]? {
        while !slots.isEmpty {
            let key = slots[Int(nextRandom() % UInt64(slots.count))]
            if lookup(key.bytes, now: now) != nil { return key.bytes }
        }
        return nil
    }

    /// One step of SCAN: looks at up to `count` slots below `cursor` (0:
    /// start from the top), returns the live keys among them that `matches`
    /// accepts, and the cursor to go on from (0: done).
    func scan(
        cursor: Int, count: Int, now: Int64, where matches: ([UInt8]) -> Bool
    ) -> (next: Int, keys: [[UInt8]]) {
        var position = cursor == 0 ? slots.count : min(cursor, slots.count)
        var found: [[UInt8]] = []
        var looked = 0
        while position > 0 && looked < count {
            position -= 1
            looked += 1
            let key = slots[position]
            if let entry = entries[key], entry.expiresAt.map({ $0 > now }) ?? true, matches(key.bytes) {
                found.append(key.bytes)
            }
        }
        return (position, found)
    }

    /// Deletes every key.
    func removeAll() {
        if !watchers.isEmpty {
            for key in watchers.keys where entries[key] != nil { touch(key) }
        }
        entries.removeAll()
        expiring.removeAll()
        slots.removeAll()
    }

    /// SWAPDB: exchanges the keys of two databases. The watchers stay with
    /// their database (a WATCH names a database and a key), and every
    /// watched key that exists in either is marked changed.
    func swapContents(with other: Keyspace) {
        for keyspace in [self, other] where !keyspace.watchers.isEmpty {
            for key in keyspace.watchers.keys where entries[key] != nil || other.entries[key] != nil {
                keyspace.touch(key)
            }
        }
        swap(&entries, &other.entries)
        swap(&expiring, &other.expiring)
        swap(&slots, &other.slots)
    }

    // MARK: - WATCH

    /// Marks `flag` dirty whenever `key` changes, until `unwatch`.
    func watch(_ key: [UInt8], _ flag: WatchFlag) {
        watchers[Key(key), default: []].append(flag)
    }

    /// Stops marking `flag` for `key`.
    func unwatch(_ key: [UInt8], _ flag: WatchFlag) {
        let key = Key(key)
        guard var flags = watchers[key] else { return }
        flags.removeAll { $0 === flag }
        watchers[key] = flags.isEmpty ? nil : flags
    }

    private func touch(_ key: Key) {
        guard !watchers.isEmpty, let flags = watchers[key] else { return }
        for flag in flags { flag.dirty = true }
    }

    // MARK: - Indexes

    /// Removes a present key and its slots in both indexes.
    private func delete(_ key: Key, _ entry: Entry) {
        touch(key)
        entries[key] = nil
        if entry.expiryIndex >= 0 { removeFromExpiring(at: entry.expiryIndex) }
        let last = slots.removeLast()
        if entry.slot < slots.count {
            slots[entry.slot] = last
            entries[last]?.slot = entry.slot
        }
    }

    /// Keeps the expiry index in step with one key's expiry: it joins when
    /// it gained one, leaves when it lost one, and stays put otherwise.
    private func reindex(_ key: Key, at index: Dictionary<Key, Entry>.Index, had: Int, expires: Bool) {
        if expires && had < 0 {
            entries.values[index].expiryIndex = expiring.count
            expiring.append(key)
        } else if !expires && had >= 0 {
            entries.values[index].expiryIndex = -1
            removeFromExpiring(at: had)
        }
    }

    /// Swaps the last key into slot `index` and drops the last slot.
    private func removeFromExpiring(at index: Int) {
        let last = expiring.removeLast()
        guard index < expiring.count else { return }
        expiring[index] = last
        entries[last]?.expiryIndex = index
    }

    private func nextRandom() -> UInt64 {
        randomState ^= randomState << 13
        randomState ^= randomState >> 7
        randomState ^= randomState << 17
        return randomState
    }

    /// Active expiry, Redis's adaptive cycle: sample 20 keys that have an
    /// expiry, delete the expired ones, and sample again while more than a
    /// tenth of a sample had expired (Redis's acceptable stale share), until
    /// `budget` nanoseconds have passed. Returns true when it stopped on the
    /// budget with expired keys still turning up: run it again soon.
    @discardableResult
    public func expireCycle(budget: UInt64 = 2_000_000) -> Bool {
        let start = monotonicNanoseconds()
        let now = unixMilliseconds()
        while !expiring.isEmpty {
            let sample = min(20, expiring.count)
            var expired = 0
            for _ in 0..<sample where !expiring.isEmpty {
                let key = expiring[Int(nextRandom() % UInt64(expiring.count))]
                guard let entry = entries[key], let deadline = entry.expiresAt, deadline <= now else { continue }
                delete(key, entry)
                expiredKeys += 1
                expired += 1
            }
            if expired * 10 <= sample { return false }
            if monotonicNanoseconds() - start >= budget { return true }
        }
        return false
    }
}
