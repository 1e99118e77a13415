// SortedSetValue.swift: a sorted set: the members in score order
// (SkipList: O(log n) ranks and range starts), and each member's node by
// its bytes (NodeIndex: O(1) ZSCORE with the request's bytes in place),
// as Redis's zset pairs a zskiplist with a dict. The node holds the member
// and its score; the index only points at it.
//
// `isCompact` says what Redis 7.0 would call the encoding: a listpack while
// the set has at most 128 members and none longer than 64 bytes
// (zset-max-listpack-entries and -value: EncodingLimits), a skiplist after;
// like Redis it never goes back. The order is the same either way.

/// A sorted-set value. Core loop only, like the keyspace that holds it.
final class SortedSetValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private var index = NodeIndex()
    let order = SkipList()
    private(set) var isCompact = true

    init() {}

    var count: Int { order.count }

    func score(of member: UnsafeRawBufferPointer) -> Double? { index.node(member)?.score }

    func score(of member: [UInt8]) -> Double? { member.withUnsafeBytes { index.node($0)?.score } }

    /// Sets `member`'s score; true when the member is new.
    @discardableResult
    func set(_ member: [UInt8], _ score: Double, _ limits: EncodingLimits) -> Bool {
        let (found, hash) = member.withUnsafeBytes { index.lookup($0) }
        if found == nil && isCompact && (order.count >= limits.zsetEntries || member.count > limits.zsetValue) {
            isCompact = false
        }
        // A listpack holds a score as text, in which -0 is written "0":
        // Redis's compact sets never hold -0 (its skiplists do).
        let score = isCompact && score == 0 ? 0 : score
        if let node = found {
            guard node.score != score else { return false }
            if order.rescoreInPlace(node, score) { return false }
            // The new node goes in before the old one leaves: the index
            // finds the old one's slot through it.
            index.replace(node, with: member.withUnsafeBytes { order.insert(score, $0, hash: hash) })
            order.remove(node)
            return false
        }
        index.insert(member.withUnsafeBytes { order.insert(score, $0, hash: hash) })
        return true
    }

    /// Fills an empty set with `members`, distinct and in Redis's order
    /// (a computed result being stored): the same set, encoding and
    /// scores as setting each in turn, without a search per member.
    func load(sorted members: [(member: [UInt8], score: Double)], _ limits: EncodingLimits) {
        precondition(order.count == 0, "load(sorted:) fills an empty sorted set")
        index.reserveCapacity(members.count)
        // Set in turn, the encoding would turn at the first member past a
        // limit, and the members before it would keep -0 written as 0.
        let compactCount =
            members.indices.first { $0 >= limits.zsetEntries || members[$0].member.count > limits.zsetValue }
            ?? members.count
        isCompact = compactCount == members.count
        var appender = order.appender()
        for (position, (member, score)) in members.enumerated() {
            let score = position < compactCount && score == 0 ? 0 : score
            member.withUnsafeBytes { index.insert(appender.append(score, $0, hash: NodeIndex.hash($0))) }
        }
    }

    /// Removes `member`; true when it was there.
    @discardableResult
    func remove(_ member: [UInt8]) -> Bool {
        guard let node = member.withUnsafeBytes({ index.node($0) }) else { return false }
        remove(node)
        return true
    }

    /// Removes the element at `node`, which is then freed.
    func remove(_ node: SkipList.Node) {
        index.remove(node)
        order.remove(node)
    }

    /// The 0-based rank of `member` from the lowest, if present.
    func rank(of member: [UInt8]) -> Int? {
        member.withUnsafeBytes { index.node($0) }.map { order.rank(of: $0) - 1 }
    }

    /// The elements at 0-based ranks `range`, lowest first (`reverse`:
    /// ranks counted from the highest, highest first). The nodes are the
    /// set's own: read them while the set is held and unchanged.
    func elements(ranks range: ClosedRange<Int>, reverse: Bool) -> [SkipList.Node] {
        var result: [SkipList.Node] = []
        result.reserveCapacity(range.count)
        var node = order.node(atRank: reverse ? count - range.lowerBound : range.lowerBound + 1)
        while let current = node, result.count < range.count {
            result.append(current)
            node = reverse ? current.backward : current.next
        }
        return result
    }

    func copy() -> SortedSetValue {
        let copy = SortedSetValue()
        copy.isCompact = isCompact
        copy.index.reserveCapacity(count)
        var appender = copy.order.appender()
        var node = order.first
        while let current = node {
            copy.index.insert(appender.append(current.score, current.memberBytes, hash: current.hash))
            node = current.next
        }
        return copy
    }
}
