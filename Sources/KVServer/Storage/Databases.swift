// Databases.swift: the 16 databases SELECT chooses from, the clock their
// commands run at, and active expiry over all of them (its slices are
// ActiveExpiry.swift, its schedule the core's ticks, Server/ServerCron.swift).
// Owned by the dispatcher, on the core loop's thread, like each Keyspace
// in it.

/// The databases, by index, and what spans them: their clock, their totals
/// and active expiry.
final class Databases: RandomAccessCollection {
    /// How many databases SELECT can choose from (Redis's default).
    static let selectable = 16
    /// The time each command runs at, shared by every database.
    let clock = CommandClock()
    /// The encoding thresholds CONFIG SET changes, shared by every database.
    let limits = EncodingLimits()
    /// maxmemory and the eviction settings, shared by every database.
    let memory = MemoryPolicy()
    /// Whether a snapshot is being written, shared by every database.
    let fence = SnapshotFence()
    /// The append-only file's feed, shared by every database.
    let feed = EffectFeed()
    /// Keyspace notifications: their setting and where they go, shared by every database.
    let events = KeyspaceEvents()
    /// Which lookups are reads, and their hits and misses, shared by every database.
    let reads = KeyReads()
    /// The function libraries (FUNCTION LOAD): saved with the keys, kept by FLUSHALL.
    let functions = FunctionLibraries()
    /// The databases, by index.
    private let keyspaces: [Keyspace]
    /// Whether a chain of active expiry's slices runs.
    let activeExpiry = ActiveExpiry()
    /// Turns the order in which expiry slices visit the databases.
    private var nextExpiryDatabase = 0

    /// Empty databases.
    init() {
        keyspaces = (0..<Databases.selectable).map { [clock, limits, memory, fence, feed, events, reads] index in
            Keyspace(
                clock: clock, limits: limits, memory: memory, fence: fence, feed: feed, events: events, reads: reads,
                index: index)
        }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { keyspaces.count }
    subscript(index: Int) -> Keyspace { keyspaces[index] }

    /// Keys in every database, counting expired ones not yet removed.
    var keyCount: Int { keyspaces.reduce(0) { $0 + $1.count } }

    /// Keys that expired in every database, lazily or actively.
    var expiredKeys: Int { keyspaces.reduce(0) { $0 + $1.expiredKeys } }

    /// True when some database holds keys with an expiry.
    var hasKeysWithExpiry: Bool { keyspaces.contains { $0.expiresCount > 0 } }

    /// CLIENT PAUSE: no key is deleted for its expiry until `until` (Unix
    /// ms; 0 ends it), lazily or actively.
    func pauseExpiry(until: Int64) {
        for database in keyspaces { database.expiryPausedUntil = until }
    }

    /// A table that emptied gives its memory back (`Keyspace.shrinkIfSparse`);
    /// run before each slice of active expiry.
    func shrinkSparseTables() {
        for database in keyspaces { database.shrinkIfSparse() }
    }

    /// One slice of active expiry: the databases that hold keys with an
    /// expiry share the 2 ms budget equally, the first of them taking turns.
    /// True when some database stopped on its budget with expired keys
    /// still turning up.
    func expireCycle() -> Bool {
        let volatile = keyspaces.indices.filter { keyspaces[$0].expiresCount > 0 }
        guard !volatile.isEmpty else { return false }
        let share = 2_000_000 / UInt64(volatile.count)
        var busy = false
        for turn in 0..<volatile.count {
            let index = volatile[(turn + nextExpiryDatabase) % volatile.count]
            if keyspaces[index].expireCycle(budget: share) { busy = true }
        }
        nextExpiryDatabase += 1
        // The DELs of the keys that expired are ready to be written (a
        // slice runs as a job of its own, never inside a command): the AOF's
        // next tick writes them even if no command comes.
        if feed.isOn { feed.commit() }
        return busy
    }
}
