// MemberTable.swift: the distinct byte strings of a hash's fields or a
// set's members: an array in order, and a hash index from each member to
// its position. The array gives what Redis's small encodings give (a
// stable order for HGETALL and SMEMBERS) and what its tables give (a random
// pick in O(1) for HRANDFIELD, SPOP and SRANDMEMBER, and a SCAN cursor that
// is a position, as in Keyspace); the index finds a member in O(1), hashing
// a request's bytes in place (`Key.probe`, no allocation).
//
// While `keepsOrder` (a small collection, which Redis keeps as a listpack
// or an intset), a removal shifts the members after it, so the order is
// Redis's; once the collection is large it never goes back (Redis does not
// convert back either), and a removal moves the last member into the hole:
// O(1), and a member present for a whole SCAN is still returned (a scan
// runs from the top down, and only the last member moves).

/// Distinct byte strings by position, with a hash index.
struct MemberTable {
    /// The members, in order.
    private(set) var members: [[UInt8]] = []
    /// Each member's position in `members` (stored keys, sharing the bytes).
    private var positions: [Key: Int] = [:]
    /// Removals keep the order (see the file's comment).
    var keepsOrder = true

    var count: Int { members.count }

    /// The position of `member`, if present.
    func position(of member: UnsafeRawBufferPointer) -> Int? {
        positions[.probe(member)]
    }

    /// The position of `member`, if present.
    func position(of member: [UInt8]) -> Int? {
        member.withUnsafeBytes { positions[.probe($0)] }
    }

    /// Appends `member`, which must be absent; returns its position.
    @discardableResult
    mutating func append(_ member: [UInt8]) -> Int {
        positions[.stored(member)] = members.count
        members.append(member)
        return members.count - 1
    }

    /// Inserts `member`, which must be absent, at `position`, shifting
    /// the members after it (small collections only: O(n)).
    mutating func insert(_ member: [UInt8], at position: Int) {
        members.insert(member, at: position)
        for index in position..<members.count { positions[.stored(members[index])] = index }
    }

    /// Removes the member at `position`: the members after it shift while
    /// `keepsOrder`; otherwise the last one moves into the hole. Returns
    /// the member.
    @discardableResult
    mutating func remove(at position: Int) -> [UInt8] {
        let member = members[position]
        positions[.stored(member)] = nil
        if keepsOrder {
            members.remove(at: position)
            for index in position..<members.count { positions[.stored(members[index])] = index }
        } else {
            let last = members.removeLast()
            if position < members.count {
                members[position] = last
                positions[.stored(last)] = position
            }
        }
        return member
    }

    /// Empties the table.
    mutating func removeAll() {
        members.removeAll()
        positions.removeAll()
    }
}
