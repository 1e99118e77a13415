// SubscriptionSet.swift: a client's channels (or patterns, or shard
// channels): membership, insertion and removal in constant time, and a
// walk over them all in time proportional to their number. A client
// subscribed to a million patterns costs a PSUBSCRIBE or a PUNSUBSCRIBE a
// hash lookup, not a search through its list (Redis searches its list).

/// A set of byte strings, kept in an array for the walk; removal moves the
/// last member into the hole, so the order is the insertion order until
/// something is removed (Redis's own is a hash table's, in no order).
struct SubscriptionSet {
    private(set) var members: [[UInt8]] = []
    /// Keyed by `Key`, which hashes a name in one call, not byte by byte.
    private var positions: [Key: Int] = [:]

    var count: Int { members.count }

    func contains(_ member: [UInt8]) -> Bool { positions[Key(member)] != nil }

    /// Adds `member`; false when it was there already.
    mutating func insert(_ member: [UInt8]) -> Bool {
        guard positions[Key(member)] == nil else { return false }
        positions[Key(member)] = members.count
        members.append(member)
        return true
    }

    /// Removes `member`; false when it was not there.
    mutating func remove(_ member: [UInt8]) -> Bool {
        guard let position = positions.removeValue(forKey: Key(member)) else { return false }
        let last = members.removeLast()
        if position < members.count {
            members[position] = last
            positions[Key(last)] = position
        }
        return true
    }

    /// Empties the set and returns what it held.
    mutating func removeAll() -> [[UInt8]] {
        let all = members
        members = []
        positions = [:]
        return all
    }
}
