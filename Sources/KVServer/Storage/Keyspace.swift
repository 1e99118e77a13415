// Keyspace.swift: the store: byte-string keys and values with expiry, and
// the invariants that go with them. Owned by one loop (EventLoop.main in
// kvd, as one of the dispatcher's Databases); no lock anywhere: every
// method runs on that loop's thread. Command handlers go through these methods only.
//
// Invariants:
// - A key whose deadline has passed is never returned: `lookup` deletes it
//   first (lazy expiry), and `expireCycle` deletes it in the background.
// - Deadlines are Unix times in milliseconds, as in Redis: EXPIREAT and
//   EXPIRETIME mean what they say, and EXPIRE's overflow checks fire where
//   Redis's do.
// - `expiry` holds exactly the keys that have an expiry, each once, in
//   deadline order, and `Entry.expiryIndex` is the key's handle in it (-1:
//   no expiry). Refreshing a TTL moves the key in place (ExpiryQueue), so
//   the queue never grows past the number of keys, however often TTLs are
//   refreshed, and active expiry removes exactly the keys that are due.
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

/// A client's WATCH state: set when a key it watches changes.
final class WatchFlag {
    /// A watched key changed since WATCH: EXEC must fail.
    var dirty = false
}

/// A key: its bytes, hashed in one call over the whole buffer (`[UInt8]`'s
/// own hashing feeds the hasher one byte at a time).
///
/// A table stores only `.stored` keys. A `.probe` borrows a request's bytes
/// for one lookup, so finding a key costs no allocation; it must never be
/// inserted (its bytes belong to the batch).
///
/// `@unchecked Sendable`: a table, the only place a key outlives a call,
/// holds `.stored` keys, which are arrays; a probe lives for one lookup on
/// the thread that made it.
enum Key: Hashable, @unchecked Sendable {
    case stored([UInt8])
    case probe(UnsafeRawBufferPointer)

    init(_ bytes: [UInt8]) { self = .stored(bytes) }

    /// The bytes of a stored key (a probe's, copied).
    var bytes: [UInt8] {
        switch self {
        case .stored(let bytes): bytes
        case .probe(let bytes): Array(bytes)
        }
    }

    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .stored(let bytes): bytes.withUnsafeBytes(body)
        case .probe(let bytes): body(bytes)
        }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: $0) }
    }

    /// What a Dictionary asks of its keys: wyhash under the table's seed
    /// (KeyHash.swift), in place of SipHash.
    func _rawHashValue(seed: Int) -> Int {
        withBytes { KeyHash.hash($0, seed: seed) }
    }

    static func == (a: Key, b: Key) -> Bool {
        a.withBytes { x in
            b.withBytes { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}

/// The key-value store: byte-string keys and values with optional expiry.
/// Not thread-safe by design: one loop owns it (EventLoop.main in kvd), and
/// every call runs on that loop's thread.
public final class Keyspace {
    /// One value and its expiry.
    struct Entry {
        /// A string's bytes (empty when the key holds a collection).
        var value: [UInt8]
        /// The hash, list or set the key holds; nil for a string.
        var collection: Collection?
        /// Unix milliseconds at which the key expires, if it does.
        var expiresAt: Int64?
        /// How Redis would hold the string (OBJECT ENCODING): in the
        /// padding after `expiresAt`, so an entry is no larger for it.
        var form = StringForm.encoded
        /// When the key was last used, or how often (MemoryPolicy): in the
        /// bytes `expiresAt` leaves free, so an entry is no larger for it.
        var access: UInt32 = 0
        /// Handle in `expiry` (-1 when the key has no expiry).
        var expiryIndex = -1
        /// Position in `slots`.
        var slot = 0
    }

    // `@exclusivity(unchecked)` on the fields a request touches: the
    // keyspace is used by its loop's thread only, and no method reaches a
    // field while an access to the same field is open (the closures given
    // to `set` and `modify` see only the value). The runtime's dynamic
    // check cost about 7% of a pipelined request in kvd's profile.
    @exclusivity(unchecked) private var entries = KeyTable()
    /// The keys that have an expiry, by deadline (stored bytes, shared with `entries`).
    @exclusivity(unchecked) private var expiry = ExpiryQueue()
    /// Every key once (stored bytes, shared with `entries`).
    @exclusivity(unchecked) private var slots: [[UInt8]] = []
    /// The clients watching each key (WATCH); empty almost always.
    @exclusivity(unchecked) private var watchers: [Key: [WatchFlag]] = [:]
    /// xorshift64 state for RANDOMKEY (no system call per pick).
    private var randomState: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// How many keys expired (lazily or actively).
    @exclusivity(unchecked) public internal(set) var expiredKeys = 0
    /// Until when (Unix ms) expired keys are kept, not deleted: CLIENT
    /// PAUSE's end (0: no pause).
    /// Unchecked: every write reads it (core loop only, no access open).
    @exclusivity(unchecked) var expiryPausedUntil: Int64 = 0
    /// No key ever stored was longer: a longer key is absent without being
    /// hashed (EXISTS of a 300 MB key costs nothing). It never shrinks.
    @exclusivity(unchecked) private var longestKey = 0

    /// The time commands run at (shared by a dispatcher's databases).
    let clock: CommandClock
    /// The encoding thresholds (shared by a dispatcher's databases).
    let limits: EncodingLimits
    /// maxmemory and the access words' meaning (shared by a dispatcher's databases).
    let memory: MemoryPolicy
    /// The random picks of this database's commands.
    @exclusivity(unchecked) var random = CommandRandom()
    /// Whether a snapshot is being written (shared by a dispatcher's
    /// databases): `lookup` then copies a collection before handing it out.
    let fence: SnapshotFence
    /// The append-only file's feed (shared by a dispatcher's databases):
    /// a key that expires is logged as a DEL there.
    let feed: EffectFeed
    /// Where keyspace notifications go (shared by a dispatcher's databases).
    let events: KeyspaceEvents
    /// Which lookups are reads, and their hits and misses (shared by a
    /// dispatcher's databases).
    let reads: KeyReads
    /// This database's number (SELECT's), which the feed's effects name.
    let index: Int

    /// An empty keyspace.
    public convenience init() {
        self.init(
            clock: CommandClock(), limits: EncodingLimits(), memory: MemoryPolicy(), fence: SnapshotFence(),
            feed: EffectFeed(), events: KeyspaceEvents(), reads: KeyReads(), index: 0)
    }

    /// An empty keyspace whose commands run at `clock`'s time.
    init(
        clock: CommandClock, limits: EncodingLimits, memory: MemoryPolicy, fence: SnapshotFence, feed: EffectFeed,
        events: KeyspaceEvents, reads: KeyReads, index: Int
    ) {
        self.events = events
        self.reads = reads
        self.clock = clock
        self.limits = limits
        self.memory = memory
        self.fence = fence
        self.feed = feed
        self.index = index
    }

    /// A handler whose effect is not its request logs `arguments` instead
    /// (SPOP's SREM, a blocking pop's plain pop): see EffectFeed.
    func propagate(_ arguments: [[UInt8]]) {
        guard feed.isOn else { return }
        feed.add(index, arguments)
        feed.handled = true
    }

    /// `event` happened to `key` in this database: a keyspace notification
    /// when the setting asks for `type` (one test of a mask when not).
    @inline(__always)
    func notify(_ type: KeyspaceEventClasses, _ event: StaticString, _ key: UnsafeRawBufferPointer) {
        events.notify(type, event, key, database: index)
    }

    /// `event` happened to `key` (see the other `notify`).
    @inline(__always)
    func notify(_ type: KeyspaceEventClasses, _ event: StaticString, _ key: [UInt8]) {
        guard events.wants(type) else { return }
        key.withUnsafeBytes { events.notify(type, event, $0, database: index) }
    }

    /// The key table as it is now, for a snapshot: copy-on-write, so this
    /// costs one reference (Persistence/Snapshot.swift).
    var snapshotEntries: KeyTable { entries }

    /// The current command's time, in Unix milliseconds.
    var now: Int64 { clock.now }

    /// The number of keys, counting expired ones not yet removed.
    public var count: Int { entries.count }

    /// Makes room for `count` keys at once (a snapshot's load knows how
    /// many come: without it the table rehashes every key at each doubling).
    func reserve(_ count: Int) {
        entries.reserveCapacity(count)
        slots.reserveCapacity(count)
    }

    /// The key table's room, in keys (for tests of `shrinkIfSparse`).
    var tableCapacity: Int { entries.capacity }

    /// Keys with an expiry (for INFO's keyspace line).
    var expiresCount: Int { expiry.count }

    /// INFO keyspace's avg_ttl: the mean time left, in milliseconds, of
    /// the keys that have an expiry (0 for none), exact rather than sampled.
    func averageTTL(now: Int64) -> Int {
        guard expiry.count > 0 else { return 0 }
        return max(Int(expiry.deadlineSum / Int128(expiry.count)) - Int(now), 0)
    }

    // Every method that takes a key has two forms: `[UInt8]` for the
    // commands that build keys, and `UnsafeRawBufferPointer` for a key read
    // in place from a request (no allocation). The array form forwards.

    /// The live entry for `key`, deleting it first if it has expired (lazy
    /// expiry); a use of the key, which its access word records, unless
    /// `touching` is false (TYPE, TTL, EXISTS, OBJECT: Redis's LOOKUP_NOTOUCH).
    /// A read (`use`, KeyReads.swift) counts as a hit or a miss, and a miss
    /// publishes a keymiss event.
    func lookup(_ key: [UInt8], now: Int64, touching: Bool = true, use: KeyRead = .asCommand) -> Entry? {
        key.withUnsafeBytes { lookup($0, now: now, touching: touching, use: use) }
    }

    /// The live entry for `key` (see the other `lookup`).
    func lookup(
        _ key: UnsafeRawBufferPointer, now: Int64, touching: Bool = true, use: KeyRead = .asCommand
    ) -> Entry? {
        guard let index = find(key) else {
            missed(key, use)
            return nil
        }
        guard var entry = unexpiredEntry(at: index, now: now, touching: touching) else {
            expire(at: index, key, now: now)
            missed(key, use)
            return nil
        }
        if reads.counts(use) { reads.hits += 1 }
        // A snapshot being written may hold this collection: the caller
        // gets (and may change) a copy, the snapshot keeps the original.
        if fence.isOpen, let collection = entry.collection, fence.isShared(collection) {
            entry.collection = collection.detached(generation: fence.generation)
            entries[at: index].collection = entry.collection
        }
        return entry
    }

    /// A read of `key` (of kind `use`) found nothing: a miss, and a keymiss
    /// event unless it is quiet.
    @inline(__always)
    private func missed(_ key: UnsafeRawBufferPointer, _ use: KeyRead) {
        guard reads.counts(use) else { return }
        reads.misses += 1
        if use != .readQuietly { notify(.keyMiss, "keymiss", key) }
    }

    /// The entry at `index` unless it is past its deadline: one copy out of
    /// the table, read for the deadline and returned. Each copy is a trip
    /// through the shard's dictionary and a retain and a release of the
    /// value; reading the deadline through a copy of its own, then copying
    /// again, was most of the 229 instructions (of 2,769) per pipelined GET
    /// that this and one clock read fewer saved (callgrind, bench/amd-vm-2026-12-03.txt).
    /// nil drops the copy before `expire`: a large value must leave with
    /// its last reference on the reclaiming thread.
    ///
    /// A use is recorded in the same access, except while a snapshot is
    /// written: then the shard stays shared (Redis leaves its objects'
    /// access times alone while a child process holds the data set, so
    /// that pages are not copied for them).
    private func unexpiredEntry(at index: KeyTable.Index, now: Int64, touching: Bool) -> Entry? {
        guard touching && !fence.isOpen else {
            let entry = entries[at: index]
            if let deadline = entry.expiresAt, deadline <= now { return nil }
            return entry
        }
        return Keyspace.access(&entries[at: index]) { entry in
            if let deadline = entry.expiresAt, deadline <= now { return nil }
            entry.access = memory.touched(entry.access, now: now)
            return entry
        }
    }

    /// True when `key` is present but past its deadline (not deleted yet).
    func hasExpired(_ key: [UInt8], now: Int64) -> Bool {
        key.withUnsafeBytes { find($0).map { entries[at: $0].expiresAt.map { $0 <= now } ?? false } ?? false }
    }

    /// Stores `value` under `key` with `expiresAt` (nil: no expiry).
    func set(_ key: [UInt8], _ value: [UInt8], expiresAt: Int64?, form: StringForm = .encoded) {
        key.withUnsafeBytes { set($0, expiresAt: expiresAt, form: form) { $0 = value } }
    }

    /// Stores a copy of `value` under `key` with `expiresAt` (nil: no
    /// expiry). An existing value's buffer is refilled in place when it
    /// fits, so overwriting a key allocates nothing.
    func set(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, expiresAt: Int64?) {
        set(key, expiresAt: expiresAt) { stored in
            stored.replaceAll(with: value)
        }
    }

    /// Stores `value` itself (no copy) under `key`: a large bulk the parser
    /// read into an array of its own.
    func set(_ key: UnsafeRawBufferPointer, storing value: [UInt8], expiresAt: Int64?, form: StringForm = .encoded) {
        set(key, expiresAt: expiresAt, form: form) { $0 = value }
    }

    /// Stores `value` in decimal under `key` (INCR and friends), in the
    /// existing buffer when there is one.
    func set(_ key: UnsafeRawBufferPointer, decimal value: Int, expiresAt: Int64?) {
        set(key, expiresAt: expiresAt) { stored in
            stored.removeAll(keepingCapacity: stored.capacity <= 64)
            stored.reserveCapacity(20)  // any Int's digits: a counter never regrows its buffer
            appendDecimal(value, to: &stored)
        }
    }

    /// The one way a value is stored: `fill` writes the new value over
    /// the old one (an empty array for a new key). A key past its deadline
    /// expires first and the value is a new key, as Redis's lookup before
    /// its write expires it (an `expired` event, then a `new` one).
    private func set(
        _ key: UnsafeRawBufferPointer, expiresAt: Int64?, form: StringForm = .encoded, _ fill: (inout [UInt8]) -> Void
    ) {
        fence.changes += 1
        let form = memory.sharing(form)
        guard let index = find(key) else { return insert(key, expiresAt: expiresAt, form: form, fill) }
        // The common case: one hash lookup, the entry changed in place
        // through one access (each `entries[at:]` is a trip through the
        // shard's dictionary: five of them were a fifth of MSET's time).
        if !watchers.isEmpty { touch(entries.key(at: index)) }
        let now = self.now
        var expired = false
        let hadDeadline = Keyspace.overwrite(
            &entries[at: index], expiresAt: expiresAt, form: form, memory: memory, now: now,
            expiring: now >= expiryPausedUntil, expired: &expired, fill)
        if expired {
            expire(at: index, key, now: now)
            return insert(key, expiresAt: expiresAt, form: form, fill)
        }
        if hadDeadline || expiresAt != nil { reindex(at: index, deadline: expiresAt) }
    }

    /// Stores a new key (`set`'s other half), inlined as it was there.
    @inline(__always)
    private func insert(
        _ key: UnsafeRawBufferPointer, expiresAt: Int64?, form: StringForm, _ fill: (inout [UInt8]) -> Void
    ) {
        let bytes = [UInt8](copying: key)
        let stored = Key.stored(bytes)
        touch(stored)
        var value: [UInt8] = []
        fill(&value)
        // Queued first, so that the entry is stored with its handle: one
        // hash of the new key, not two.
        let handle = expiresAt.map { expiry.insert(bytes, deadline: $0) } ?? -1
        entries.insert(
            stored,
            Entry(
                value: value, collection: nil, expiresAt: expiresAt, form: form,
                access: memory.initialAccess(now: now), expiryIndex: handle, slot: slots.count))
        longestKey = max(longestKey, bytes.count)
        slots.append(bytes)
        notify(.newKey, "new", key)
    }

    /// Where the live entry for `key` is, deleting it first if it has
    /// expired (lazy expiry): `lookup` and the other readers share it (`update` checks the deadline in its own access).
    private func liveIndex(_ key: UnsafeRawBufferPointer, now: Int64) -> KeyTable.Index? {
        guard let index = find(key) else { return nil }
        if let deadline = entries[at: index].expiresAt, deadline <= now {
            expire(at: index, key, now: now)
            return nil
        }
        return index
    }

    /// The entry at `index` (of `key`) is past its deadline: it is deleted,
    /// except during CLIENT PAUSE, when the data set stays as it is (the key
    /// reads as gone and is deleted once the pause ends, as in Redis).
    private func expire(at index: KeyTable.Index, _ key: UnsafeRawBufferPointer, now: Int64) {
        if now < expiryPausedUntil { return }
        if feed.isOn { feed.expired(self.index, key) }
        delete(at: index, expired: true)
        expiredKeys += 1
        notify(.expired, "expired", key)
    }

    /// Where `key` is in `entries`, if it is there.
    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer) -> KeyTable.Index? {
        guard key.count <= longestKey else { return nil }
        return entries.index(forKey: .probe(key))
    }

    /// Gives a present key a new deadline (nil: persist), whether or not
    /// its old one has passed.
    func setExpiry(_ key: [UInt8], _ deadline: Int64?) {
        _ = key.withUnsafeBytes { key in
            changeExpiry(key, now: .min) { _ in deadline.map { .expire(at: $0) } ?? .persist }
        }
    }

    /// What `changeExpiry` does to a live key, given its deadline.
    enum ExpiryChange {
        /// Leave the key as it is.
        case keep
        /// Give it this deadline (Unix milliseconds).
        case expire(at: Int64)
        /// Remove its deadline.
        case persist
        /// Delete the key (a deadline already past).
        case remove
    }

    /// Changes the deadline of the live `key` as `decide` says, given the
    /// current one (nil: none), with one hash lookup: EXPIRE and its
    /// relatives, PERSIST. nil when the key is absent; otherwise whether
    /// anything changed.
    func changeExpiry(_ key: UnsafeRawBufferPointer, now: Int64, _ decide: (Int64?) -> ExpiryChange) -> Bool? {
        guard let index = liveIndex(key, now: now) else { return nil }
        let deadline: Int64?
        switch decide(entries[at: index].expiresAt) {
        case .keep: return false
        case .remove:
            delete(at: index)
            return true
        case .expire(let at): deadline = at
        case .persist: deadline = nil
        }
        fence.changes += 1
        if !watchers.isEmpty { touch(entries.key(at: index)) }
        entries[at: index].expiresAt = deadline
        entries[at: index].access = memory.touched(entries[at: index].access, now: self.now)
        reindex(at: index, deadline: deadline)
        return true
    }

    /// Deletes `key`; true when it was there.
    @discardableResult
    func remove(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { remove($0) }
    }

    /// Deletes `key`; true when it was there.
    @discardableResult
    func remove(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let index = find(key) else { return false }
        delete(at: index)
        return true
    }

    /// Changes the live value of `key` in place (the array stays uniquely
    /// referenced, so this does not copy it); nil when the key is absent.
    func modify<Result>(_ key: [UInt8], now: Int64, _ body: (inout [UInt8]) -> Result) -> Result? {
        key.withUnsafeBytes { modify($0, now: now, body) }
    }

    /// Changes the live value of `key` in place, with one hash lookup; nil
    /// when the key is absent (or had expired, and is deleted). The value
    /// is then `raw`, as Redis's APPEND and SETRANGE leave it.
    func modify<Result>(
        _ key: UnsafeRawBufferPointer, now: Int64, _ body: (inout [UInt8]) -> Result
    ) -> Result? {
        // Its callers looked the key up and answered WRONGTYPE already.
        update(
            key, now: now, ifCollection: { preconditionFailure("Keyspace.modify: the key holds a collection") },
            leaving: .raw
        ) {
            (body(&$0), changed: true)
        }
    }

    /// Like `modify`, but `body` says whether it changed the value: only
    /// then do the clients that WATCH the key see a change (an INCR that
    /// fails changes nothing, as in Redis). The value is left in `form`
    /// when it changed, or when `evenUnchanged` says so of the result
    /// (SETBIT makes a value raw before it looks at the bit, as Redis does).
    func update<Result>(
        _ key: UnsafeRawBufferPointer, now: Int64, ifCollection: () -> Result, leaving form: StringForm? = nil,
        evenUnchanged: (Result) -> Bool = { _ in false }, _ body: (inout [UInt8]) -> (Result, changed: Bool)
    ) -> Result? {
        guard let index = find(key) else { return nil }
        // One access to the entry for the deadline, the type and the change
        // (each read through `entries[at:]` copied the whole entry, its value
        // retained and released). It is a write access: while a snapshot
        // shares the shard, it makes the shard the keyspace's own, which the
        // change would do anyway, and which an expired key or a collection
        // (no change) then did for nothing: rare, and only a copy.
        let step: UpdateStep<Result> = Keyspace.access(&entries[at: index]) { entry in
            if let deadline = entry.expiresAt, deadline <= now { return .expired }
            guard entry.collection == nil else { return .collection }
            entry.access = memory.touched(entry.access, now: now)
            let (result, changed) = body(&entry.value)
            if let form, changed || evenUnchanged(result) { entry.form = memory.sharing(form) }
            return .updated(result, changed: changed)
        }
        switch step {
        case .expired:
            expire(at: index, key, now: now)
            return nil
        case .collection:
            return ifCollection()
        case .updated(let result, let changed):
            if changed { fence.changes += 1 }
            if changed && !watchers.isEmpty { touch(entries.key(at: index)) }
            return result
        }
    }

    /// What `update` found at the key.
    private enum UpdateStep<Result> {
        case expired
        case collection
        case updated(Result, changed: Bool)
    }

    /// `body` with `entry`, in place.
    @inline(__always)
    private static func access<R>(_ entry: inout Entry, _ body: (inout Entry) -> R) -> R { body(&entry) }

    /// Appends `suffix` to the live value of `key` in place; returns the new
    /// length, or nil when the key is absent.
    func append(_ suffix: [UInt8], to key: [UInt8], now: Int64) -> Int? {
        modify(key, now: now) { value in
            value.append(contentsOf: suffix)
            return value.count
        }
    }

    /// Stores `collection` under `key` with `expiresAt` (nil: no expiry),
    /// replacing whatever was there; a list or a sorted set stored where a
    /// client is blocked on the key makes the key ready (Redis's dbAdd).
    func store(_ key: UnsafeRawBufferPointer, _ collection: Collection, expiresAt: Int64? = nil) {
        set(key, expiresAt: expiresAt) { $0 = [] }
        entries.modify(.probe(key)) { $0.collection = collection }
        signalReady(key)
    }

    /// Stores `collection` under `key` (see the other `store`).
    func store(_ key: [UInt8], _ collection: Collection, expiresAt: Int64? = nil) {
        key.withUnsafeBytes { store($0, collection, expiresAt: expiresAt) }
    }

    /// Stores `entry`'s value (a string or a collection) and expiry under
    /// `key` (RENAME, MOVE; COPY with `copying`, which copies a collection).
    /// The key keeps its access word (Redis moves the object), a copy gets
    /// a new key's (Redis makes a new object).
    func put(_ key: [UInt8], _ entry: Entry, copying: Bool = false) {
        if let collection = entry.collection {
            store(key, copying ? collection.copy() : collection, expiresAt: entry.expiresAt)
        } else {
            // Redis duplicates a copied object: a small integer is no longer shared.
            let form = copying && entry.form == .encoded ? .encodedUnshared : entry.form
            set(key, entry.value, expiresAt: entry.expiresAt, form: form)
        }
        setAccess(key, copying ? memory.initialAccess(now: now) : entry.access)
    }

    /// Start-up only, while a file is loaded (nobody is served yet: no
    /// client watches or waits, no snapshot is open): stores `key` with
    /// `value` (a string's bytes, empty for a collection) or `collection`
    /// and the access word `access` (the file's, or a new key's),
    /// with one lookup where `set` makes two and `store` three. False,
    /// and the keyspace as it was, when the key was already there: the
    /// file is corrupt, and the load fails.
    func load(
        _ key: [UInt8], _ value: [UInt8], _ collection: Collection?, expiresAt: Int64?, access: UInt32
    ) -> Bool {
        let handle = expiresAt.map { expiry.insert(key, deadline: $0) } ?? -1
        let entry = Entry(
            value: value, collection: collection, expiresAt: expiresAt, form: memory.sharing(.encoded), access: access,
            expiryIndex: handle, slot: slots.count)
        guard entries.insertIfAbsent(.stored(key), entry) else {
            if handle >= 0 { expiry.remove(handle) }
            return false
        }
        longestKey = max(longestKey, key.count)
        slots.append(key)
        return true
    }

    /// Gives the present `key` the access word `access` (RESTORE's
    /// IDLETIME and FREQ).
    func setAccess(_ key: [UInt8], _ access: UInt32) {
        entries.modify(Key(key)) { $0.access = access }
    }

    /// The clients that WATCH `key` see a change (a collection changed in place).
    func changed(_ key: UnsafeRawBufferPointer) {
        fence.changes += 1
        guard !watchers.isEmpty else { return }
        touch(.probe(key))
    }

    // MARK: - Keys blocked on (BLPOP and friends)

    /// The keys of this database that parked clients wait on, and by each
    /// key's position the clients, first parked first (BlockedClients
    /// keeps the rest of a parked client). Empty almost always, so a push
    /// checks one count. A MemberTable, not a Dictionary keyed by the
    /// keys: 1,000 clients parked on 100 keys each leave 100,000 keys in
    /// one push round, and a Dictionary compared the bytes of every key it
    /// probed (and hashed again the keys after each one removed).
    @exclusivity(unchecked) private var blockedKeys = MemberTable<[UInt8]>(keepsOrder: false)
    @exclusivity(unchecked) private var blockedClients: [Waiters] = []
    /// Keys that got elements while somebody waited on them, in order,
    /// each once, until the dispatcher serves them (`takeReadyKeys`).
    @exclusivity(unchecked) private(set) var readyKeys: [[UInt8]] = []

    /// `client` parks on `key`.
    func block(_ client: Int, on key: [UInt8]) {
        if let position = blockedKeys.position(of: key) {
            blockedClients[position].rest.append(client)
        } else {
            blockedKeys.append(key)
            blockedClients.append(Waiters(first: client))
        }
    }

    /// `client` leaves `key` (served, timed out, unblocked, gone).
    func unblock(_ client: Int, on key: [UInt8]) {
        guard let (position, slot) = blockedKeys.locate(key) else { return }
        guard !blockedClients[position].remove(client) else { return }
        // As the table moves its last key into the hole, so do the clients.
        blockedKeys.remove(at: position, slot: slot)
        let last = blockedClients.removeLast()
        if position < blockedClients.count { blockedClients[position] = last }
        if blockedClients.isEmpty { blockedKeys.removeAll() }  // its index too
    }

    /// The clients waiting on `key`, first parked first.
    func clients(waitingOn key: [UInt8]) -> [Int] {
        guard blockedKeys.count > 0, let position = blockedKeys.position(of: key) else { return [] }
        return blockedClients[position].all
    }

    /// `key` may hold what a parked client waits for (a push, a new list).
    func signalReady(_ key: UnsafeRawBufferPointer) {
        guard blockedKeys.count > 0, blockedKeys.position(of: key) != nil else { return }
        guard !readyKeys.contains(where: { $0.withUnsafeBytes { $0.elementsEqual(key) } }) else { return }
        readyKeys.append(Array(key))
    }

    /// The ready keys, in the order they became ready; the list empties.
    func takeReadyKeys() -> [[UInt8]] {
        defer { readyKeys = [] }
        return readyKeys
    }

    /// Every key somebody waits on that holds something now (SWAPDB
    /// brings new keys in at once, as Redis's scanDatabaseForReadyKeys).
    func signalEveryBlockedKey() {
        for key in blockedKeys.members where entries[.stored(key)] != nil { key.withUnsafeBytes { signalReady($0) } }
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
            if lookup(key, now: now, touching: false, use: .uncounted) != nil { return key }
        }
        return nil
    }

    /// One step of SCAN: the keys in up to `count` slots below `cursor`
    /// (0: start from the top), live or due, in order, and the cursor to go
    /// on from (0: done). The caller filters them, and expires the due ones
    /// it keeps, as Redis's scanGenericCommand does after its walk.
    func scanSlots(cursor: Int, count: Int) -> (next: Int, keys: [[UInt8]]) {
        var position = cursor == 0 ? slots.count : min(cursor, slots.count)
        var found: [[UInt8]] = []
        while position > 0 && found.count < count {
            position -= 1
            found.append(slots[position])
        }
        return (position, found)
    }

    /// Deletes every key.
    func removeAll() {
        fence.changes += entries.count
        if !watchers.isEmpty {
            for key in watchers.keys where entries[key] != nil { touch(key) }
        }
        entries.forEachEntry { entry in
            if entry.collection != nil { Reclaimer.release(&entry.collection) }
        }
        entries.removeAll()
        expiry.removeAll()
        slots.removeAll()
    }

    /// SWAPDB: exchanges the keys of two databases. The watchers stay with
    /// their database (a WATCH names a database and a key), and every
    /// watched key that exists in either is marked changed.
    func swapContents(with other: Keyspace) {
        fence.changes += 1
        for keyspace in [self, other] where !keyspace.watchers.isEmpty {
            for key in keyspace.watchers.keys where entries[key] != nil || other.entries[key] != nil {
                keyspace.touch(key)
            }
        }
        swap(&entries, &other.entries)
        swap(&expiry, &other.expiry)
        swap(&slots, &other.slots)
        swap(&longestKey, &other.longestKey)
    }

    // MARK: - Eviction (Storage/Eviction/Evictor.swift)

    /// A key picked uniformly at random, among every key or among those
    /// with an expiry (`volatileOnly`), with its access word and deadline;
    /// nil when there is none. Not a use of the key, and expired keys are not deleted: the
    /// evictor may pick one, which deletes it all the same.
    func randomSample(volatileOnly: Bool) -> (key: [UInt8], access: UInt32, expiresAt: Int64?)? {
        let count = volatileOnly ? expiry.count : slots.count
        guard count > 0 else { return nil }
        let position = Int(nextRandom() % UInt64(count))
        let key = volatileOnly ? expiry.key(atPosition: position) : slots[position]
        guard let index = entries.index(forKey: .stored(key)) else { return nil }
        let (access, expiresAt) = entries.accessAndDeadline(at: index)
        return (key, access, expiresAt)
    }

    /// Deletes `key` to free memory (maxmemory): a DEL in the append-only
    /// file, a change for the clients that WATCH it, not a change for the
    /// save points (Redis counts none for an eviction). True when it was
    /// there (with an expiry, if `volatileOnly`).
    func evict(_ key: [UInt8], volatileOnly: Bool) -> Bool {
        key.withUnsafeBytes { bytes in
            guard let index = find(bytes) else { return false }
            if volatileOnly && entries.accessAndDeadline(at: index).expiresAt == nil { return false }
            if feed.isOn { feed.expired(self.index, bytes) }
            delete(at: index, expired: true)
            notify(.evicted, "evicted", bytes)
            return true
        }
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

    /// Removes the key at `index` and its places in both indexes.
    /// An expired key is not a change (Redis counts none for it).
    private func delete(at index: KeyTable.Index, expired: Bool = false) {
        var (key, entry) = entries.remove(at: index)
        if !expired { fence.changes += 1 }
        Reclaimer.release(&entry.value)
        if entry.collection != nil { Reclaimer.release(&entry.collection) }
        touch(key)
        if entry.expiryIndex >= 0 { forget(expiryHandle: entry.expiryIndex) }
        let last = slots.removeLast()
        if entry.slot < slots.count {
            slots[entry.slot] = last
            entries.modify(.stored(last)) { $0.slot = entry.slot }
        }
    }

    /// Writes a new value over `entry`'s (a large old value or collection
    /// is freed elsewhere) with the deadline `expiresAt`; true when the
    /// entry was in the expiry queue. When the entry is past its deadline
    /// and `expiring` (not during CLIENT PAUSE), it is left as it is and
    /// `expired` is set instead.
    @inline(__always)
    private static func overwrite(
        _ entry: inout Entry, expiresAt: Int64?, form: StringForm, memory: MemoryPolicy, now: Int64,
        expiring: @autoclosure () -> Bool, expired: inout Bool, _ fill: (inout [UInt8]) -> Void
    ) -> Bool {
        // `expiring` read only for a key that is due: a write to a key
        // without a deadline pays one test for all this.
        if let deadline = entry.expiresAt, deadline <= now, expiring() {
            expired = true
            return false
        }
        // A new value is a fresh use; under LFU it keeps the key's count
        // (Redis's dbSetValue keeps the old object's frequency).
        entry.access = memory.touched(entry.access, now: now)
        Reclaimer.release(&entry.value)
        if entry.collection != nil { Reclaimer.release(&entry.collection) }
        fill(&entry.value)
        entry.expiresAt = expiresAt
        entry.form = form
        return entry.expiryIndex >= 0
    }

    /// Keeps the expiry queue in step with the deadline just stored at
    /// `index`: the key joins when it gained one, moves when it changed,
    /// and leaves when it lost it.
    private func reindex(at index: KeyTable.Index, deadline: Int64?) {
        let handle = entries[at: index].expiryIndex
        switch (deadline, handle >= 0) {
        case (let deadline?, false):
            // a stored key: shared, not copied
            entries[at: index].expiryIndex = expiry.insert(entries.key(at: index).bytes, deadline: deadline)
        case (let deadline?, true):
            expiry.update(handle, deadline: deadline)
        case (nil, true):
            entries[at: index].expiryIndex = -1
            forget(expiryHandle: handle)
        case (nil, false):
            break
        }
    }

    /// Takes a key's handle out of the expiry queue, compacting the queue
    /// when it has become mostly free handles.
    private func forget(expiryHandle handle: Int) {
        expiry.remove(handle)
        guard expiry.wantsCompaction else { return }
        expiry.compact { key, handle in entries.modify(.stored(key)) { $0.expiryIndex = handle } }
    }

    private func nextRandom() -> UInt64 {
        randomState ^= randomState << 13
        randomState ^= randomState >> 7
        randomState ^= randomState << 17
        return randomState
    }

    /// Gives back the key table's and the slot array's spare memory once
    /// they hold under an eighth of their capacity (after an expiry storm,
    /// a mass delete, or eviction under a lowered maxmemory): Swift's tables
    /// never shrink by themselves, and Redis resizes its dictionaries down
    /// the same way. The table shrinks shard by shard (`KeyTable`); the
    /// slot array, a copy of every key's reference, only up to 64k keys, a
    /// few milliseconds at most on the core. Then, for a keyspace of up to
    /// 64k keys, the heap is trimmed, so the pages go back to the system
    /// (malloc_trim walks the free blocks: on a large heap that would be
    /// a stall of its own).
    func shrinkIfSparse() {
        let shardsShrank = entries.shrinkSparseShards()
        var shrank = shardsShrank && entries.count <= 65_536
        if slots.capacity >= 4096, slots.count * 8 < slots.capacity, slots.count <= 65_536 {
            var slots: [[UInt8]] = []
            slots.reserveCapacity(self.slots.count * 2)
            slots.append(contentsOf: self.slots)
            self.slots = slots
            shrank = true
        }
        if shrank { _ = mallocTrim?(0) }
    }

    /// Active expiry: deletes the keys whose deadline has passed, earliest
    /// first, until none is due or `budget` nanoseconds have passed. With
    /// none due it costs one comparison. Returns true when it stopped on the
    /// budget with keys still due: run it again soon.
    @discardableResult
    public func expireCycle(budget: UInt64 = 2_000_000) -> Bool {
        let start = monotonicNanoseconds()
        let now = unixMilliseconds()
        guard now >= expiryPausedUntil else { return false }
        var removed = 0
        while let (deadline, handle) = expiry.first, deadline <= now {
            guard let index = entries.index(forKey: .stored(expiry.key(handle))) else {
                preconditionFailure("Keyspace: the expiry queue holds a key the table does not")
            }
            if feed.isOn { expiry.key(handle).withUnsafeBytes { feed.expired(self.index, $0) } }
            let key = events.wants(.expired) ? expiry.key(handle) : nil
            delete(at: index, expired: true)
            expiredKeys += 1
            if let key { notify(.expired, "expired", key) }
            removed += 1
            if removed % 64 == 0 && monotonicNanoseconds() - start >= budget {
                return expiry.first.map { $0.deadline <= now } ?? false
            }
        }
        return false
    }
}

/// Zeros that `padWithZeros` copies from.
private let zeroPage = [UInt8](repeating: 0, count: 64 * 1024)

extension Array where Element == UInt8 {
    /// Replaces the contents with `bytes`, in the same buffer when it is
    /// unique and not more than twice as large as needed (a value that
    /// shrank a lot gets a buffer of its size, not the old one's).
    mutating func replaceAll(with bytes: UnsafeRawBufferPointer) {
        removeAll(keepingCapacity: capacity <= 2 * bytes.count + 64)
        append(bytes: bytes)
    }

    /// Grows the value to `count` bytes with zeros (SETBIT, SETRANGE and
    /// BITFIELD past the end). Appending a repeated zero is a loop per
    /// byte: 0.6 s for 256 MB in a release build and 46 s in a debug one,
    /// where Redis takes 0.7 s for the whole SETBIT. A growth past double
    /// the size is one zeroed allocation and a copy of the old bytes; a
    /// smaller one copies zeros from a page into capacity grown as Redis's
    /// sdsMakeRoomFor grows a string (double below 1 MB, then 1 MB more),
    /// so a large value grown a little at a time is not copied each time.
    mutating func padWithZeros(to count: Int) {
        guard count > self.count else { return }
        if count - self.count > self.count {
            var grown = [UInt8](repeating: 0, count: count)
            grown.withUnsafeMutableBytes { target in
                self.withUnsafeBytes { source in
                    guard let from = source.baseAddress, source.count > 0 else { return }
                    target.baseAddress!.copyMemory(from: from, byteCount: source.count)
                }
            }
            self = grown
            return
        }
        if capacity < count { reserveCapacity(count < 1 << 20 ? 2 * count : count + (1 << 20)) }
        zeroPage.withUnsafeBufferPointer { page in
            while self.count < count {
                append(contentsOf: UnsafeBufferPointer(rebasing: page[..<Swift.min(count - self.count, page.count)]))
            }
        }
    }
}

/// glibc's `malloc_trim`, which Swift's Glibc module does not export: after
/// a table shrinks, the pages it freed inside the heap go back to the
/// system (freed heap memory otherwise stays resident: after an expiry
/// storm kvd kept 31 MB of RSS where it had started at 10; with this, 12).
/// Looked up once, as a C function pointer.
private let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
}()

/// The clients parked on one key, first parked first: the first inline,
/// since most keys have one (no array to allocate and free per key for a
/// client parked on 100 keys), the others in an array.
private struct Waiters {
    var first: Int
    var rest: [Int] = []

    var all: [Int] { [first] + rest }

    /// Removes `client` (every time it is there); false when nobody is left.
    mutating func remove(_ client: Int) -> Bool {
        if !rest.isEmpty { rest.removeAll { $0 == client } }
        guard first == client else { return true }
        guard !rest.isEmpty else { return false }
        first = rest.removeFirst()
        return true
    }
}
