// SkipList.swift: the order of a sorted set: Redis's zskiplist, ported.
// Elements are ordered by score, then by member bytes (memcmp, shorter
// first on a tie), exactly as Redis orders them, so ranks, ranges and
// ties answer as Redis's do. Each level's forward link carries its span
// (how many elements it skips), so an element's rank and the element at
// a rank are O(log n), as are inserts, removals and the start of a range.
//
// Why a skip list and not an order-statistic B-tree: it is Redis's own
// structure, so every edge case (ties, exclusive bounds, lexicographic
// ranges over equal scores, the walk back for REV) has a known reference
// to follow line by line; a B-tree would use less memory per element and
// fewer cache misses, and is the better choice if memory per element is
// what matters most (see the measurement plan).
//
// Nodes are classes: forward links own the next node, the backward link is
// `unowned(unsafe)` (the node it names is owned by the chain before it).
// Core loop only, like the sorted set that holds it.
import Glibc

/// A skip list of (score, member), in Redis's order.
final class SkipList {
    static let maxLevel = 32

    final class Node {
        let member: [UInt8]
        var score: Double
        var forward: [Node?]
        var span: [Int]
        unowned(unsafe) var backward: Node?

        init(level: Int, score: Double, member: [UInt8]) {
            self.member = member
            self.score = score
            forward = [Node?](repeating: nil, count: level)
            span = [Int](repeating: 0, count: level)
        }
    }

    private let head = Node(level: SkipList.maxLevel, score: 0, member: [])
    private(set) unowned(unsafe) var tail: Node?
    private(set) var count = 0
    private var level = 1
    private var randomState: UInt64 = 0x2545_F491_4F6C_DD1D

    init() {}

    /// The first element (lowest), if any.
    var first: Node? { head.forward[0] }

    /// `a` sorts before `b` (Redis's order: score, then member bytes).
    @inline(__always)
    static func precedes(_ score: Double, _ member: [UInt8], _ otherScore: Double, _ other: [UInt8]) -> Bool {
        score < otherScore || (score == otherScore && compare(member, other) < 0)
    }

    /// memcmp order, the shorter first on a common prefix (Redis's sdscmp).
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let common = min(a.count, b.count)
        let result =
            common == 0
            ? 0
            : a.withUnsafeBytes { x in
                b.withUnsafeBytes { y in
                    Int(memcmp(x.baseAddress!, y.baseAddress!, common))
                }
            }
        return result != 0 ? result : a.count - b.count
    }

    private func randomLevel() -> Int {
        var level = 1
        while level < SkipList.maxLevel {
            randomState ^= randomState << 13
            randomState ^= randomState >> 7
            randomState ^= randomState << 17
            guard randomState & 0xFFFF < 0xFFFF / 4 else { break }  // Redis's ZSKIPLIST_P, 1/4
            level += 1
        }
        return level
    }

    /// Inserts (score, member); the member must not be present.
    @discardableResult
    func insert(_ score: Double, _ member: [UInt8]) -> Node {
        var update = [Node](repeating: head, count: SkipList.maxLevel)
        var rank = [Int](repeating: 0, count: SkipList.maxLevel)
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            rank[i] = i == level - 1 ? 0 : rank[i + 1]
            while let next = x.forward[i], SkipList.precedes(next.score, next.member, score, member) {
                rank[i] += x.span[i]
                x = next
            }
            update[i] = x
        }
        let newLevel = randomLevel()
        if newLevel > level {
            for i in level..<newLevel {
                rank[i] = 0
                update[i] = head
                head.span[i] = count
            }
            level = newLevel
        }
        let node = Node(level: newLevel, score: score, member: member)
        for i in 0..<newLevel {
            node.forward[i] = update[i].forward[i]
            update[i].forward[i] = node
            node.span[i] = update[i].span[i] - (rank[0] - rank[i])
            update[i].span[i] = (rank[0] - rank[i]) + 1
        }
        for i in newLevel..<level { update[i].span[i] += 1 }
        node.backward = update[0] === head ? nil : update[0]
        if let next = node.forward[0] { next.backward = node } else { tail = node }
        count += 1
        return node
    }

    /// Appends `elements`, which must sort after every element already
    /// here and each after the one before (distinct members, Redis's
    /// order). A store of a computed result (ZUNIONSTORE and friends) comes
    /// sorted: each element links after the last node of each of its
    /// levels, with no search from the head and no per-insert scratch.
    func append(sorted elements: some Sequence<(member: [UInt8], score: Double)>) {
        var last = [Node](repeating: head, count: SkipList.maxLevel)
        var lastRank = [Int](repeating: 0, count: SkipList.maxLevel)
        var x = head
        var traversed = 0
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward[i] {
                traversed += x.span[i]
                x = next
            }
            last[i] = x
            lastRank[i] = traversed
        }
        for (member, score) in elements {
            let newLevel = randomLevel()
            if newLevel > level {
                for i in level..<newLevel {
                    last[i] = head
                    lastRank[i] = 0
                    head.span[i] = count
                }
                level = newLevel
            }
            let node = Node(level: newLevel, score: score, member: member)
            let rank = count + 1
            for i in 0..<newLevel {
                last[i].forward[i] = node
                last[i].span[i] = rank - lastRank[i]
                last[i] = node
                lastRank[i] = rank
            }
            for i in newLevel..<level { last[i].span[i] += 1 }
            node.backward = tail
            tail = node
            count = rank
        }
    }

    /// Removes (score, member); false when it is not there.
    @discardableResult
    func remove(_ score: Double, _ member: [UInt8]) -> Bool {
        var update = [Node](repeating: head, count: SkipList.maxLevel)
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward[i], SkipList.precedes(next.score, next.member, score, member) { x = next }
            update[i] = x
        }
        guard let found = x.forward[0], found.score == score, found.member == member else { return false }
        unlink(found, update)
        return true
    }

    private func unlink(_ node: Node, _ update: [Node]) {
        for i in 0..<level {
            if update[i].forward[i] === node {
                update[i].span[i] += node.span[i] - 1
                update[i].forward[i] = node.forward[i]
            } else {
                update[i].span[i] -= 1
            }
        }
        if let next = node.forward[0] { next.backward = node.backward } else { tail = node.backward }
        while level > 1 && head.forward[level - 1] == nil { level -= 1 }
        count -= 1
    }

    /// The 1-based rank of (score, member), 0 when it is not there.
    func rank(_ score: Double, _ member: [UInt8]) -> Int {
        var rank = 0
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward[i],
                SkipList.precedes(next.score, next.member, score, member)
                    || (next.score == score && next.member == member)
            {
                rank += x.span[i]
                x = next
            }
            if x !== head && x.member == member && x.score == score { return rank }
        }
        return 0
    }

    /// The element at 1-based `rank`, if there is one.
    func node(atRank rank: Int) -> Node? {
        guard rank >= 1 && rank <= count else { return nil }
        var traversed = 0
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward[i], traversed + x.span[i] <= rank {
                traversed += x.span[i]
                x = next
            }
            if traversed == rank { return x }
        }
        return nil
    }

    /// The first element for which `isAbove` is false... precisely: the
    /// first element not below the range (`below` true for elements that
    /// sort before it), or nil.
    func first(notBelow below: (Node) -> Bool) -> Node? {
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward[i], below(next) { x = next }
        }
        return x.forward[0]
    }

    /// The last element not above the range (`above` true for elements
    /// that sort after it), or nil.
    func last(notAbove above: (Node) -> Bool) -> Node? {
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward[i], !above(next) { x = next }
        }
        return x === head ? nil : x
    }
}
