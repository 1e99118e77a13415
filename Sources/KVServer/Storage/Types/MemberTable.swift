// MemberTable.swift: the distinct byte strings of a hash's fields or a
// set's members: an array in order, and a hash index from each member to
// its position. The array gives what Redis's small encodings give (a
// stable order for HGETALL and SMEMBERS) and what its tables give (a random
// pick in O(1) for HRANDFIELD, SPOP and SRANDMEMBER, and a SCAN cursor that
// is a position, as in Keyspace); the index finds a member in O(1), hashing
// a request's bytes in place (no allocation).
//
// The index is open addressing with linear probing, 8 bytes a slot: the
// member's position and 32 bits of its hash (Swift's Hasher: SipHash with
// a per-process random seed, so a client cannot aim members at one
// slot). A probe compares the hash bits before it touches a member's
// bytes, so a lookup reads one or two cache lines of the index and the one
// member it finds; a Swift Dictionary keyed by the members compared every
// probed member's bytes (a cache miss each), which made a 1M-member SINTER
// slower than Redis's. The stored hash bits also place a slot again when
// the index grows, or when a removal shifts the slots after it back (no
// tombstones).
//
// While `keepsOrder` (a small collection, which Redis keeps as a listpack
// or an intset), a removal shifts the members after it, so the order is
// Redis's; once the collection is large it never goes back (Redis does not
// convert back either), and a removal moves the last member into the hole:
// O(1), and a member present for a whole SCAN is still returned (a scan
// runs from the top down, and only the last member moves).

import Glibc

/// What a MemberTable holds: something with the bytes it is found by (a
/// set's member, a hash's field with its value: HashEntry).
protocol TableMember {
    /// Calls `body` with the bytes this member is found by.
    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: TableMember where Element == UInt8 {
    @inline(__always)
    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try withUnsafeBytes(body) }
}

/// Distinct byte strings by position, with a hash index.
struct MemberTable<Member: TableMember> {
    /// The members, in order.
    private(set) var members: [Member] = []
    /// The index: 0 for an empty slot, else the member's hash bits in the
    /// high half and its position + 1 in the low half. Its size is a power
    /// of two, at least a third empty.
    private var slots: [UInt64] = []
    /// Removals keep the order (see the file's comment).
    var keepsOrder = true

    var count: Int { members.count }

    /// An empty table; `keepsOrder` false for one that never needs the
    /// order (removals then move the last member into the hole).
    init(keepsOrder: Bool = true) { self.keepsOrder = keepsOrder }

    /// The position of `member`, if present.
    func position(of member: UnsafeRawBufferPointer) -> Int? {
        guard !slots.isEmpty else { return nil }
        let slot = find(member, MemberTable.hash(member))
        return slots[slot] == 0 ? nil : MemberTable.position(slots[slot])
    }

    /// The position of `member`, if present.
    func position(of member: Member) -> Int? {
        member.withKeyBytes { position(of: $0) }
    }

    /// Appends `member`, which must be absent; returns its position.
    @discardableResult
    mutating func append(_ member: Member) -> Int {
        precondition(members.count < Int(UInt32.max) - 1, "a collection of 2^32 members")
        if (members.count + 1) * 3 > slots.count * 2 { grow() }
        let hash = member.withKeyBytes { MemberTable.hash($0) }
        let slot = member.withKeyBytes { find($0, hash) }
        members.append(member)
        slots[slot] = MemberTable.slot(hash, members.count - 1)
        return members.count - 1
    }

    /// Inserts `member`, which must be absent, at `position`, shifting
    /// the members after it (small collections only: O(n)).
    mutating func insert(_ member: Member, at position: Int) {
        if (members.count + 1) * 3 > slots.count * 2 { grow() }
        members.insert(member, at: position)
        reindex()
    }

    /// The position of `member` and its slot in the index, if present
    /// (for a `remove` that follows, with no change in between).
    func locate(_ member: Member) -> (position: Int, slot: Int)? {
        guard !slots.isEmpty else { return nil }
        let slot = member.withKeyBytes { find($0, MemberTable.hash($0)) }
        return slots[slot] == 0 ? nil : (MemberTable.position(slots[slot]), slot)
    }

    /// Removes the member at `position`: the members after it shift while
    /// `keepsOrder`; otherwise the last one moves into the hole. Returns
    /// the member. `slot`: its slot, when `locate` found it.
    @discardableResult
    mutating func remove(at position: Int, slot known: Int? = nil) -> Member {
        let member = members[position]
        let slot = known ?? member.withKeyBytes { find($0, MemberTable.hash($0)) }
        vacate(slot)
        if keepsOrder {
            members.remove(at: position)
            reindex()
        } else {
            let last = members.removeLast()
            if position < members.count {
                members[position] = last
                move(last, from: members.count, to: position)
            }
        }
        return member
    }

    /// Changes the member at `position` in place; `body` must keep its key
    /// bytes (a hash's field whose value changes).
    mutating func modify(at position: Int, _ body: (inout Member) -> Void) {
        body(&members[position])
    }

    /// Empties the table.
    mutating func removeAll() {
        members.removeAll()
        slots.removeAll()
    }

    // MARK: The index

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    private static func slot(_ hash: UInt32, _ position: Int) -> UInt64 {
        UInt64(hash) << 32 | UInt64(position + 1)
    }

    private static func position(_ slot: UInt64) -> Int { Int(slot & 0xFFFF_FFFF) - 1 }

    /// The slot holding `member` (whose hash is `hash`), or the empty slot
    /// where it would go. The index must not be empty.
    private func find(_ member: UnsafeRawBufferPointer, _ hash: UInt32) -> Int {
        slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var index = Int(hash) & mask
            while true {
                let slot = slots[index]
                if slot == 0 { return index }
                if UInt32(truncatingIfNeeded: slot >> 32) == hash
                    && members[MemberTable.position(slot)].withKeyBytes({ equalBytes($0, member) })
                {
                    return index
                }
                index = (index + 1) & mask
            }
        }
    }

    /// Points the slot of `member`, found at `old`, at `position`.
    private mutating func move(_ member: Member, from old: Int, to position: Int) {
        let hash = member.withKeyBytes { MemberTable.hash($0) }
        let mask = slots.count - 1
        var index = Int(hash) & mask
        while slots[index] != MemberTable.slot(hash, old) { index = (index + 1) & mask }
        slots[index] = MemberTable.slot(hash, position)
    }

    /// Places every member again (after the positions shifted: a small
    /// collection's insertion or removal).
    private mutating func reindex() {
        slots = Array(repeating: 0, count: slots.count)
        for position in members.indices {
            let hash = members[position].withKeyBytes { MemberTable.hash($0) }
            let slot = members[position].withKeyBytes { find($0, hash) }
            slots[slot] = MemberTable.slot(hash, position)
        }
    }

    /// Empties slot `index` and shifts back the slots after it that would
    /// otherwise no longer be found.
    private mutating func vacate(_ index: Int) {
        LinearProbing.vacate(&slots, index) { Int($0 >> 32) }
    }

    /// Doubles the index (8 slots at first), placing every slot again.
    private mutating func grow() {
        slots = LinearProbing.rehash(slots, size: max(8, slots.count * 2)) { Int($0 >> 32) }
    }
}

/// The same bytes.
func equalBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}
