// Keyspace.swift: the store: byte-string keys and values with expiry, and
// the invariants that go with them. Owned by one loop (EventLoop.main in
// kvd, through the Dispatcher); no lock anywhere: every method runs on that
// loop's thread. Command handlers go through these methods only.
//
// Invariants:
// - A key whose deadline has passed is never returned: `lookup` deletes it
//   first (lazy expiry), and `expireCycle` deletes it in the background.
// - `expiring` lists exactly the keys that have an expiry, each once, and
//   `Entry.expiryIndex` is the key's position in it (-1: no expiry).
//   Refreshing a TTL changes the entry's deadline in place; removing a key
//   or its expiry swaps the last key into its slot. So the index never grows
//   past the number of keys, however often TTLs are refreshed.
// - Keys hash over their whole buffer at once (`Key`), never byte by byte:
//   a 500 MB key costs one pass of the hasher, not 500 M calls.
import Glibc

/// Milliseconds on the monotonic clock: expiry must not jump with the wall clock.
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Nanoseconds on the monotonic clock, for time budgets.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
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
        /// Monotonic milliseconds at which the key expires, if it does.
        var expiresAt: Int64?
        /// Position in `expiring` (-1 when the key has no expiry).
        var expiryIndex = -1
    }

    private var entries: [Key: Entry] = [:]
    private var expiring: [Key] = []
    /// xorshift64 state for sampling `expiring` (no system call per sample).
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

    /// Stores `value` under `key` with `expiresAt` (nil: no expiry).
    func set(_ key: [UInt8], _ value: [UInt8], expiresAt: Int64?) {
        let key = Key(key)
        // One hash lookup for the common case (a key with no expiry, before
        // and after); the index is fixed up only when expiry is involved.
        let old = entries.updateValue(Entry(value: value, expiresAt: expiresAt), forKey: key)
        let index = old?.expiryIndex ?? -1
        if index >= 0 && expiresAt != nil { entries[key]!.expiryIndex = index }
        reindex(key, had: index, expires: expiresAt != nil)
    }

    /// Gives a live key a new deadline (nil: persist).
    func setExpiry(_ key: [UInt8], _ deadline: Int64?) {
        let key = Key(key)
        guard let index = entries[key]?.expiryIndex else { return }
        entries[key]!.expiresAt = deadline
        reindex(key, had: index, expires: deadline != nil)
    }

    /// Deletes `key`; true when it was there.
    @discardableResult
    func remove(_ key: [UInt8]) -> Bool {
        let key = Key(key)
        guard let entry = entries[key] else { return false }
        delete(key, entry)
        return true
    }

    /// Appends `suffix` to the live value of `key` in place (the array stays
    /// uniquely referenced, so this does not copy it); returns the new
    /// length, or nil when the key is absent.
    func append(_ suffix: [UInt8], to key: [UInt8], now: Int64) -> Int? {
        guard lookup(key, now: now) != nil, var entry = entries.removeValue(forKey: Key(key)) else { return nil }
        entry.value.append(contentsOf: suffix)
        let length = entry.value.count
        entries[Key(key)] = entry
        return length
    }

    /// The live keys for which `matches` is true.
    func keys(now: Int64, where matches: ([UInt8]) -> Bool) -> [[UInt8]] {
        var found: [[UInt8]] = []
        for (key, entry) in entries where (entry.expiresAt.map { $0 > now } ?? true) && matches(key.bytes) {
            found.append(key.bytes)
        }
        return found
    }

    /// Deletes every key.
    func removeAll() {
        entries.removeAll()
        expiring.removeAll()
    }

    /// Removes a present key and its slot in the expiry index.
    private func delete(_ key: Key, _ entry: Entry) {
        entries[key] = nil
        if entry.expiryIndex >= 0 { removeFromIndex(at: entry.expiryIndex) }
    }

    /// Keeps the expiry index in step with one key's expiry: it joins when
    /// it gained one, leaves when it lost one, and stays put otherwise.
    private func reindex(_ key: Key, had index: Int, expires: Bool) {
        if expires && index < 0 {
            entries[key]!.expiryIndex = expiring.count
            expiring.append(key)
        } else if !expires && index >= 0 {
            entries[key]!.expiryIndex = -1
            removeFromIndex(at: index)
        }
    }

    /// Swaps the last key into slot `index` and drops the last slot.
    private func removeFromIndex(at index: Int) {
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
        let now = monotonicMilliseconds()
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
