// Keyspace.swift: the store: byte-string keys and values with expiry, and
// the invariants that go with them. Owned by one loop (EventLoop.main in
// kvd, through the Dispatcher); no lock anywhere: every method runs on that
// loop's thread. Command handlers go through these methods only.
//
// Invariants:
// - A key whose deadline has passed is never returned: `lookup` deletes it
//   first (lazy expiry), and `expireCycle` deletes it in the background.
// - `expiring` lists every key that may have an expiry (a superset: the
//   cycle drops keys that no longer expire or no longer exist).
import Glibc

/// Milliseconds on the monotonic clock: expiry must not jump with the wall clock.
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
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
    }

    private var entries: [[UInt8]: Entry] = [:]
    private var expiring: [[UInt8]] = []
    private var expiryCursor = 0
    /// How many keys expired (lazily or actively).
    public private(set) var expiredKeys = 0

    /// An empty keyspace.
    public init() {}

    /// The number of keys, counting expired ones not yet removed.
    public var count: Int { entries.count }

    /// Keys with an expiry (for INFO's keyspace line).
    var expiresCount: Int { entries.values.reduce(0) { $0 + ($1.expiresAt == nil ? 0 : 1) } }

    /// The live entry for `key`, deleting it first if it has expired (lazy expiry).
    func lookup(_ key: [UInt8], now: Int64) -> Entry? {
        guard let entry = entries[key] else { return nil }
        if let deadline = entry.expiresAt, deadline <= now {
            entries[key] = nil
            expiredKeys += 1
            return nil
        }
        return entry
    }

    /// Stores `value` under `key` with `expiresAt` (nil: no expiry).
    func set(_ key: [UInt8], _ value: [UInt8], expiresAt: Int64?) {
        entries[key] = Entry(value: value, expiresAt: expiresAt)
        if expiresAt != nil { expiring.append(key) }
    }

    /// Gives a live key a new deadline (nil: persist).
    func setExpiry(_ key: [UInt8], _ deadline: Int64?) {
        entries[key]?.expiresAt = deadline
        if deadline != nil { expiring.append(key) }
    }

    /// Deletes `key`; true when it was there.
    @discardableResult
    func remove(_ key: [UInt8]) -> Bool {
        entries.removeValue(forKey: key) != nil
    }

    /// Appends `suffix` to the live value of `key` in place (the array stays
    /// uniquely referenced, so this does not copy it); returns the new
    /// length, or nil when the key is absent.
    func append(_ suffix: [UInt8], to key: [UInt8], now: Int64) -> Int? {
        guard lookup(key, now: now) != nil, var entry = entries.removeValue(forKey: key) else { return nil }
        entry.value.append(contentsOf: suffix)
        let length = entry.value.count
        entries[key] = entry
        return length
    }

    /// The live keys for which `matches` is true.
    func keys(now: Int64, where matches: ([UInt8]) -> Bool) -> [[UInt8]] {
        var found: [[UInt8]] = []
        for (key, entry) in entries where (entry.expiresAt.map { $0 > now } ?? true) && matches(key) {
            found.append(key)
        }
        return found
    }

    /// Deletes every key.
    func removeAll() {
        entries.removeAll()
        expiring.removeAll()
        expiryCursor = 0
    }

    /// Active expiry: examines up to `budget` keys that were given an expiry,
    /// deleting the expired ones and forgetting those that no longer expire.
    public func expireCycle(budget: Int = 200) {
        let now = monotonicMilliseconds()
        var examined = 0
        while examined < budget && !expiring.isEmpty {
            if expiryCursor >= expiring.count { expiryCursor = 0 }
            let key = expiring[expiryCursor]
            examined += 1
            let keep: Bool
            if let entry = entries[key], let deadline = entry.expiresAt {
                if deadline <= now {
                    entries[key] = nil
                    expiredKeys += 1
                    keep = false
                } else {
                    keep = true
                }
            } else {
                keep = false
            }
            if keep {
                expiryCursor += 1
            } else {
                expiring.swapAt(expiryCursor, expiring.count - 1)
                expiring.removeLast()
            }
        }
    }
}
