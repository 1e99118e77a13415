// Snapshot.swift: a point-in-time view of every database, which a writer
// thread serialises while the core keeps serving (BGSAVE), with no fork
// and no lock.
//
// How it stays frozen while the core changes the data:
// - Each database's key table (Storage/KeyTable.swift) is 256 Swift
//   dictionaries, copy-on-write: taking the view copies one reference per
//   database. The core's first change to a shard after it finds the shard
//   shared and copies it first (about 1/256 of the keys, on the core: the
//   cost Redis pays in fork's page-table copy and its copy-on-write
//   faults); the view keeps the old shard.
// - Strings are arrays, copy-on-write too: a change in place copies a
//   value the view still shares.
// - Collections (hashes, lists, sets, sorted sets) are classes, changed in
//   place. While a view is open (`SnapshotFence.isOpen`), the keyspace
//   hands out no collection that the view may hold: `Keyspace.lookup`,
//   the one way a command reaches a collection, replaces one older than
//   the view (`snapshotEpoch` below the fence's generation) by a deep copy
//   stamped with the current generation, and the command changes the copy.
//   The view's object is never changed again; each object is copied at
//   most once per snapshot.
// So the writer thread reads only objects no thread changes, and the
// reference counts it shares with the core are atomic.

/// The generation of snapshots, shared by a dispatcher's databases.
/// Core loop only.
final class SnapshotFence {
    /// Incremented when a view is taken: collections stamped below it may
    /// belong to the view.
    private(set) var generation = 0
    /// How many views are being written (a BGSAVE's and an append-only
    /// rewrite's may overlap): while any is, collections are copied before a change.
    private var openViews = 0
    /// A view is being written.
    var isOpen: Bool { openViews > 0 }
    /// Changes to keys since start-up (Redis's `server.dirty`): each key
    /// set, deleted, given a deadline, or changed in place counts one (an
    /// expired key none), and a collection command counts as Redis's does
    /// (`Keyspace.countChanges(_:since:)`). Save points and `rdb_changes_since_last_save`
    /// compare with it.
    var changes = 0

    /// A view starts: every collection existing now is the view's.
    func open() {
        generation += 1
        openViews += 1
    }

    /// A view was written (or dropped): with none left, no more copies.
    /// Overlapping views need nothing more: a copy is stamped with the
    /// newest generation, so it belongs to no view open at the time.
    func close() { openViews = max(openViews - 1, 0) }

    /// True when `collection` may belong to the open view.
    func isShared(_ collection: Collection) -> Bool {
        isOpen && collection.snapshotEpoch < generation
    }
}

/// Every database's keys and values at one instant.
///
/// `@unchecked Sendable`: the tables are copies the core no longer
/// changes (copy-on-write), and the collections in them are ones the core
/// copies before changing while the fence is open (see the file's
/// comment); the writer thread only reads.
struct Snapshot: @unchecked Sendable {
    /// Each database's entries, by database index.
    let databases: [KeyTable]
    /// The function libraries' codes (FUNCTION LOAD's).
    let functionLibraries: [[UInt8]]
    /// How to read the keys' access words, as of the view: under an LRU
    /// policy each key is written with its idle time, under an LFU one
    /// with its counter (Redis's RDB IDLE and FREQ), under any other with
    /// neither.
    let accessWords: (policy: EvictionPolicy, decayTime: Int, now: Int64)

    /// The view of `databases` now (the fence must be opened with it).
    init(_ databases: Databases) {
        self.databases = databases.map { $0.snapshotEntries }
        functionLibraries = databases.functions.ordered.map(\.code)
        accessWords = (databases.memory.policy, databases.memory.lfuDecayTime, databases.clock.now)
    }
}

extension Collection {
    /// The snapshot generation the object was made in (0: before any).
    var snapshotEpoch: Int {
        switch self {
        case .hash(let hash): hash.snapshotEpoch
        case .list(let list): list.snapshotEpoch
        case .set(let set): set.snapshotEpoch
        case .sortedSet(let sortedSet): sortedSet.snapshotEpoch
        }
    }

    /// A deep copy stamped with `generation`.
    func detached(generation: Int) -> Collection {
        let copy = self.copy()
        switch copy {
        case .hash(let hash): hash.snapshotEpoch = generation
        case .list(let list): list.snapshotEpoch = generation
        case .set(let set): set.snapshotEpoch = generation
        case .sortedSet(let sortedSet): sortedSet.snapshotEpoch = generation
        }
        return copy
    }
}
