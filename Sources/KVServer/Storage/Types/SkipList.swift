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
// to follow line by line. A B-tree would use fewer cache misses; what made
// kvd's sets cost twice Redis's memory was not the skip list but its
// nodes: a class with two arrays (forward links and spans) was three
// allocations and 190 bytes an element.
//
// So a node is one allocation, as Redis's zskiplistNode is: a fixed header
// (the score, the backward link, the level, the member's length and its
// hash, which the set's index reads when it grows), `level` (forward,
// span) pairs, then the member's bytes: 64 bytes for most nodes of a short
// member, where a separate member array was another 64. The head has only
// the levels the list has used. The list owns its nodes
// and frees them itself (`remove`, `deinit`, walking level 0: no recursion
// however long the list). A `Node` is a plain pointer, valid until its
// element is removed or the list is freed; commands read nodes within one
// run on the core, and a snapshot reads a set nobody changes (a copy is
// made for the core first: Persistence/Snapshot.swift).
import Glibc

/// A skip list of (score, member), in Redis's order.
final class SkipList {
    static let maxLevel = 32

    /// An element: a pointer to its node.
    struct Node: Equatable {
        fileprivate let raw: UnsafeMutableRawPointer

        // The header's layout, in bytes; the levels follow it, then the
        // member's bytes.
        private static let scoreOffset = 0
        private static let backwardOffset = 8
        private static let levelOffset = 16
        private static let hashOffset = 20
        private static let lengthOffset = 24
        fileprivate static let headerSize = 32

        /// Allocates a node of `level` levels, its links empty.
        fileprivate static func make(level: Int, score: Double, member: UnsafeRawBufferPointer, hash: UInt32) -> Node {
            precondition(member.count < Int(UInt32.max), "a sorted-set member of 4 GiB")
            let raw = malloc(headerSize + 16 * level + member.count)!
            if let base = member.baseAddress {
                (raw + headerSize + 16 * level).copyMemory(from: base, byteCount: member.count)
            }
            raw.storeBytes(of: UInt32(member.count), toByteOffset: lengthOffset, as: UInt32.self)
            raw.storeBytes(of: score, toByteOffset: scoreOffset, as: Double.self)
            raw.storeBytes(of: nil, toByteOffset: backwardOffset, as: UnsafeMutableRawPointer?.self)
            raw.storeBytes(of: UInt32(level), toByteOffset: levelOffset, as: UInt32.self)
            raw.storeBytes(of: hash, toByteOffset: hashOffset, as: UInt32.self)
            for i in 0..<level {
                raw.storeBytes(of: nil, toByteOffset: headerSize + 16 * i, as: UnsafeMutableRawPointer?.self)
                raw.storeBytes(of: 0, toByteOffset: headerSize + 16 * i + 8, as: Int.self)
            }
            return Node(raw: raw)
        }

        /// Frees the node.
        fileprivate func free() { Glibc.free(raw) }

        /// The node at `raw`, if any.
        @inline(__always)
        fileprivate init?(_ raw: UnsafeMutableRawPointer?) {
            guard let raw else { return nil }
            self.raw = raw
        }

        @inline(__always)
        fileprivate init(raw: UnsafeMutableRawPointer) { self.raw = raw }

        /// The node at `address` (an index's slot; NodeIndex).
        @inline(__always)
        init(address: UnsafeMutableRawPointer) { raw = address }

        /// The node's address (an index's slot; NodeIndex).
        var address: UnsafeMutableRawPointer { raw }

        /// The member's bytes, valid while the node is.
        var memberBytes: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(
                start: raw + Node.headerSize + 16 * level,
                count: Int(raw.load(fromByteOffset: Node.lengthOffset, as: UInt32.self)))
        }

        /// A copy of the member's bytes.
        var member: [UInt8] { Array(memberBytes) }

        var score: Double {
            get { raw.load(fromByteOffset: Node.scoreOffset, as: Double.self) }
            nonmutating set { raw.storeBytes(of: newValue, toByteOffset: Node.scoreOffset, as: Double.self) }
        }

        /// The element before this one, nil for the first.
        var backward: Node? {
            get { Node(raw.load(fromByteOffset: Node.backwardOffset, as: UnsafeMutableRawPointer?.self)) }
            nonmutating set {
                raw.storeBytes(of: newValue?.raw, toByteOffset: Node.backwardOffset, as: UnsafeMutableRawPointer?.self)
            }
        }

        /// The element after this one, nil for the last.
        var next: Node? { forward(0) }

        /// The member's hash, as the sorted set's index placed it.
        var hash: UInt32 { raw.load(fromByteOffset: Node.hashOffset, as: UInt32.self) }

        fileprivate var level: Int { Int(raw.load(fromByteOffset: Node.levelOffset, as: UInt32.self)) }

        @inline(__always)
        fileprivate func forward(_ i: Int) -> Node? {
            Node(raw.load(fromByteOffset: Node.headerSize + 16 * i, as: UnsafeMutableRawPointer?.self))
        }

        @inline(__always)
        fileprivate func setForward(_ i: Int, _ node: Node?) {
            raw.storeBytes(of: node?.raw, toByteOffset: Node.headerSize + 16 * i, as: UnsafeMutableRawPointer?.self)
        }

        @inline(__always)
        fileprivate func span(_ i: Int) -> Int {
            raw.load(fromByteOffset: Node.headerSize + 16 * i + 8, as: Int.self)
        }

        @inline(__always)
        fileprivate func setSpan(_ i: Int, _ span: Int) {
            raw.storeBytes(of: span, toByteOffset: Node.headerSize + 16 * i + 8, as: Int.self)
        }
    }

    /// The head: links only, as many levels as the list has used (it
    /// grows to at most `maxLevel`: a small set does not pay Redis's 32).
    private var head = Node.make(level: 4, score: 0, member: UnsafeRawBufferPointer(start: nil, count: 0), hash: 0)
    private var headLevels = 4
    private(set) var tail: Node?
    private(set) var count = 0
    private var level = 1
    private var randomState: UInt64 = 0x2545_F491_4F6C_DD1D

    init() {}

    /// Gives the head at least `levels` levels: a new head with the old
    /// one's links. Returns the old head (freed by the caller once no
    /// pointer to it is left), or nil when it was big enough.
    private func growHead(to levels: Int) -> Node? {
        guard levels > headLevels else { return nil }
        let old = head
        let size = min(SkipList.maxLevel, max(levels, headLevels * 2))
        head = Node.make(level: size, score: 0, member: UnsafeRawBufferPointer(start: nil, count: 0), hash: 0)
        for i in 0..<headLevels {
            head.setForward(i, old.forward(i))
            head.setSpan(i, old.span(i))
        }
        headLevels = size
        return old
    }

    deinit {
        var node = head.next
        while let current = node {
            node = current.next
            current.free()
        }
        head.free()
    }

    /// The first element (lowest), if any.
    var first: Node? { head.next }

    /// `a` sorts before `b` (Redis's order: score, then member bytes).
    @inline(__always)
    static func precedes(_ score: Double, _ member: [UInt8], _ otherScore: Double, _ other: [UInt8]) -> Bool {
        score < otherScore || (score == otherScore && compare(member, other) < 0)
    }

    /// `node` sorts before (score, member).
    @inline(__always)
    static func precedes(_ node: Node, _ score: Double, _ member: UnsafeRawBufferPointer) -> Bool {
        let nodeScore = node.score
        return nodeScore < score || (nodeScore == score && compare(node.memberBytes, member) < 0)
    }

    /// memcmp order, the shorter first on a common prefix (Redis's sdscmp).
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in compare(a, b) } }
    }

    /// memcmp order, the shorter first on a common prefix (Redis's sdscmp).
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        let result = common == 0 ? 0 : Int(memcmp(a.baseAddress!, b.baseAddress!, common))
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

    /// Inserts (score, member); the member must not be present. `hash`:
    /// the member's hash, kept in the node for the set's index.
    @discardableResult
    func insert(_ score: Double, _ member: UnsafeRawBufferPointer, hash: UInt32) -> Node {
        let newLevel = randomLevel()
        growHead(to: newLevel)?.free()  // before the search: nothing points at the old head yet
        // The search's scratch is on the stack: an allocation per insert
        // cost more than the rest of it.
        return withUnsafeTemporaryAllocation(of: Node.self, capacity: SkipList.maxLevel) { update in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: SkipList.maxLevel) { rank in
                var x = head
                for i in stride(from: level - 1, through: 0, by: -1) {
                    rank[i] = i == level - 1 ? 0 : rank[i + 1]
                    while let next = x.forward(i), SkipList.precedes(next, score, member) {
                        rank[i] += x.span(i)
                        x = next
                    }
                    update[i] = x
                }
                if newLevel > level {
                    for i in level..<newLevel {
                        rank[i] = 0
                        update[i] = head
                        head.setSpan(i, count)
                    }
                    level = newLevel
                }
                let node = Node.make(level: newLevel, score: score, member: member, hash: hash)
                for i in 0..<newLevel {
                    node.setForward(i, update[i].forward(i))
                    update[i].setForward(i, node)
                    node.setSpan(i, update[i].span(i) - (rank[0] - rank[i]))
                    update[i].setSpan(i, (rank[0] - rank[i]) + 1)
                }
                for i in newLevel..<level { update[i].setSpan(i, update[i].span(i) + 1) }
                node.backward = update[0] == head ? nil : update[0]
                if let next = node.next { next.backward = node } else { tail = node }
                count += 1
                return node
            }
        }
    }

    /// Appends elements that sort after every element already here, each
    /// after the one before (distinct members, Redis's order). A store of
    /// a computed result (ZUNIONSTORE and friends) and a copy come sorted:
    /// each element links after the last node of each of its levels, with
    /// no search from the head.
    struct Appender {
        fileprivate let list: SkipList
        fileprivate var last: [Node]
        fileprivate var lastRank: [Int]

        /// Appends (score, member), `hash` as for `insert`.
        @discardableResult
        mutating func append(_ score: Double, _ member: UnsafeRawBufferPointer, hash: UInt32) -> Node {
            let newLevel = list.randomLevel()
            if let old = list.growHead(to: newLevel) {
                for i in 0..<list.level where last[i] == old { last[i] = list.head }
                old.free()
            }
            if newLevel > list.level {
                for i in list.level..<newLevel {
                    last[i] = list.head
                    lastRank[i] = 0
                    list.head.setSpan(i, list.count)
                }
                list.level = newLevel
            }
            let node = Node.make(level: newLevel, score: score, member: member, hash: hash)
            let rank = list.count + 1
            for i in 0..<newLevel {
                last[i].setForward(i, node)
                last[i].setSpan(i, rank - lastRank[i])
                last[i] = node
                lastRank[i] = rank
            }
            for i in newLevel..<list.level { last[i].setSpan(i, last[i].span(i) + 1) }
            node.backward = list.tail
            list.tail = node
            list.count = rank
            return node
        }
    }

    /// An appender after the last element.
    func appender() -> Appender {
        var last = [Node](repeating: head, count: SkipList.maxLevel)
        var lastRank = [Int](repeating: 0, count: SkipList.maxLevel)
        var x = head
        var traversed = 0
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward(i) {
                traversed += x.span(i)
                x = next
            }
            last[i] = x
            lastRank[i] = traversed
        }
        return Appender(list: self, last: last, lastRank: lastRank)
    }

    /// Removes `node`, an element of this list, and frees it.
    func remove(_ node: Node) {
        let (score, member) = (node.score, node.memberBytes)
        withUnsafeTemporaryAllocation(of: Node.self, capacity: SkipList.maxLevel) { update in
            var x = head
            for i in stride(from: level - 1, through: 0, by: -1) {
                while let next = x.forward(i), next != node, SkipList.precedes(next, score, member) { x = next }
                update[i] = x
            }
            precondition(x.next == node, "SkipList.remove: the node is not in this list")
            for i in 0..<level {
                if update[i].forward(i) == node {
                    update[i].setSpan(i, update[i].span(i) + node.span(i) - 1)
                    update[i].setForward(i, node.forward(i))
                } else {
                    update[i].setSpan(i, update[i].span(i) - 1)
                }
            }
        }
        if let next = node.next { next.backward = node.backward } else { tail = node.backward }
        while level > 1 && head.forward(level - 1) == nil { level -= 1 }
        count -= 1
        node.free()
    }

    /// Gives `node` the score `score` if that leaves it where it is in the
    /// order (Redis's zslUpdateScore fast path); false when it would move.
    func rescoreInPlace(_ node: Node, _ score: Double) -> Bool {
        let member = node.memberBytes
        if let previous = node.backward, !SkipList.precedes(previous, score, member) { return false }
        if let next = node.next,
            !(score < next.score || (score == next.score && SkipList.compare(member, next.memberBytes) < 0))
        {
            return false
        }
        node.score = score
        return true
    }

    /// The 1-based rank of `node`, an element of this list.
    func rank(of node: Node) -> Int {
        let (score, member) = (node.score, node.memberBytes)
        var rank = 0
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward(i), next == node || SkipList.precedes(next, score, member) {
                rank += x.span(i)
                x = next
            }
            if x == node { return rank }
        }
        preconditionFailure("SkipList.rank: the node is not in this list")
    }

    /// The element at 1-based `rank`, if there is one.
    func node(atRank rank: Int) -> Node? {
        guard rank >= 1 && rank <= count else { return nil }
        var traversed = 0
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward(i), traversed + x.span(i) <= rank {
                traversed += x.span(i)
                x = next
            }
            if traversed == rank { return x }
        }
        return nil
    }

    /// The first element not below the range (`below` true for elements
    /// that sort before it), or nil.
    func first(notBelow below: (Node) -> Bool) -> Node? {
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward(i), below(next) { x = next }
        }
        return x.next
    }

    /// The last element not above the range (`above` true for elements
    /// that sort after it), or nil.
    func last(notAbove above: (Node) -> Bool) -> Node? {
        var x = head
        for i in stride(from: level - 1, through: 0, by: -1) {
            while let next = x.forward(i), !above(next) { x = next }
        }
        return x == head ? nil : x
    }
}
