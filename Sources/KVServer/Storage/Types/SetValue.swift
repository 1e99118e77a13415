// SetValue.swift: a set of byte strings, a MemberTable.
//
// `isIntset` says what Redis 7.0 would call the encoding: an intset while
// every member is an integer as Redis writes them (string2ll) and there
// are at most 512 (set-max-intset-entries: EncodingLimits), a hashtable after (Redis 7.0
// has no listpack sets). An intset is sorted by value, and so SMEMBERS of
// a small set of numbers answers in Redis's order; this set keeps its
// members in that order while it is one (an insertion is then O(n), n at
// most 512). Like Redis it never converts back.

/// A set value. Core loop only, like the keyspace that holds it.
final class SetValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private(set) var members = MemberTable<[UInt8]>()

    init() {}

    var count: Int { members.count }
    /// Redis would keep it as an intset.
    var isIntset: Bool { members.keepsOrder }

    func contains(_ member: UnsafeRawBufferPointer) -> Bool {
        members.position(of: member) != nil
    }

    func contains(_ member: [UInt8]) -> Bool {
        members.position(of: member) != nil
    }

    /// Adds `member`; true when it is new.
    @discardableResult
    func add(_ member: UnsafeRawBufferPointer, _ limits: EncodingLimits) -> Bool {
        guard !contains(member) else { return false }
        insert(Array(member), limits)
        return true
    }

    /// Adds `member`; true when it is new.
    @discardableResult
    func add(_ member: [UInt8], _ limits: EncodingLimits) -> Bool {
        guard !contains(member) else { return false }
        insert(member, limits)
        return true
    }

    private func insert(_ member: [UInt8], _ limits: EncodingLimits) {
        if isIntset {
            if let value = parseInteger(member), members.count < limits.intsetEntries {
                // Binary search for the first member above `value`.
                var (low, high) = (0, members.count)
                while low < high {
                    let middle = (low + high) / 2
                    if parseInteger(members.members[middle])! < value { low = middle + 1 } else { high = middle }
                }
                members.insert(member, at: low)
                return
            }
            members.keepsOrder = false
        }
        members.append(member)
    }

    /// Removes `member`; true when it was there.
    @discardableResult
    func remove(_ member: UnsafeRawBufferPointer) -> Bool {
        guard let position = members.position(of: member) else { return false }
        members.remove(at: position)
        return true
    }

    /// Removes and returns the member at `position`.
    func remove(at position: Int) -> [UInt8] {
        members.remove(at: position)
    }

    /// The member at `position` (0..<count).
    subscript(position: Int) -> [UInt8] { members.members[position] }

    func copy() -> SetValue {
        let copy = SetValue()
        copy.members = members
        return copy
    }
}
