// SortedSetValue.swift: a sorted set: each member's score by member (a
// hash table, O(1) ZSCORE with the request's bytes in place) and the
// members in score order (SkipList: O(log n) ranks and range starts), as
// Redis's zset pairs a dict with a zskiplist.
//
// `isCompact` says what Redis 7.0 would call the encoding: a listpack while
// the set has at most 128 members and none longer than 64 bytes
// (zset-max-listpack-entries and -value: EncodingLimits), a skiplist after;
// like Redis it never goes back. The order is the same either way.

/// A sorted-set value. Core loop only, like the keyspace that holds it.
final class SortedSetValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private var scores: [Key: Double] = [:]
    let order = SkipList()
    private(set) var isCompact = true

    init() {}

    var count: Int { order.count }

    func score(of member: UnsafeRawBufferPointer) -> Double? { scores[.probe(member)] }

    func score(of member: [UInt8]) -> Double? { member.withUnsafeBytes { scores[.probe($0)] } }

    /// Sets `member`'s score; true when the member is new.
    @discardableResult
    func set(_ member: [UInt8], _ score: Double, _ limits: EncodingLimits) -> Bool {
        let old = self.score(of: member)
        if old == nil && isCompact && (order.count >= limits.zsetEntries || member.count > limits.zsetValue) {
            isCompact = false
        }
        // A listpack holds a score as text, in which -0 is written "0":
        // Redis's compact sets never hold -0 (its skiplists do).
        let score = isCompact && score == 0 ? 0 : score
        if let old {
            guard old != score else { return false }
            order.remove(old, member)
            order.insert(score, member)
            scores[.stored(member)] = score
            return false
        }
        scores[.stored(member)] = score
        order.insert(score, member)
        return true
    }

    /// Fills an empty set with `members`, distinct and in Redis's order
    /// (a computed result being stored): the same set, encoding and
    /// scores as setting each in turn, without a search per member.
    func load(sorted members: [(member: [UInt8], score: Double)], _ limits: EncodingLimits) {
        precondition(order.count == 0, "load(sorted:) fills an empty sorted set")
        scores.reserveCapacity(members.count)
        // Set in turn, the encoding would turn at the first member past a
        // limit, and the members before it would keep -0 written as 0.
        let compactCount =
            members.indices.first { $0 >= limits.zsetEntries || members[$0].member.count > limits.zsetValue }
            ?? members.count
        isCompact = compactCount == members.count
        for (index, (member, score)) in members.enumerated() {
            scores[.stored(member)] = index < compactCount && score == 0 ? 0 : score
        }
        order.append(
            sorted: members.enumerated().lazy.map { index, element in
                (element.member, index < compactCount && element.score == 0 ? 0 : element.score)
            })
    }

    /// Removes `member`; true when it was there.
    @discardableResult
    func remove(_ member: [UInt8]) -> Bool {
        guard let score = self.score(of: member) else { return false }
        scores[.stored(member)] = nil
        order.remove(score, member)
        return true
    }

    /// The 0-based rank of `member` from the lowest, if present.
    func rank(of member: [UInt8]) -> Int? {
        score(of: member).map { order.rank($0, member) - 1 }
    }

    /// The (member, score) pairs at 0-based ranks `range`, lowest first
    /// (`reverse`: ranks counted from the highest, highest first).
    func elements(ranks range: ClosedRange<Int>, reverse: Bool) -> [(member: [UInt8], score: Double)] {
        var result: [(member: [UInt8], score: Double)] = []
        result.reserveCapacity(range.count)
        var node = order.node(atRank: reverse ? count - range.lowerBound : range.lowerBound + 1)
        while let current = node, result.count < range.count {
            result.append((current.member, current.score))
            node = reverse ? current.backward : current.forward[0]
        }
        return result
    }

    func copy() -> SortedSetValue {
        let copy = SortedSetValue()
        copy.isCompact = isCompact
        var node = order.first
        while let current = node {
            copy.scores[.stored(current.member)] = current.score
            copy.order.insert(current.score, current.member)
            node = current.forward[0]
        }
        return copy
    }
}
