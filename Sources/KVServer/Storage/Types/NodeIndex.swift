// NodeIndex.swift: a sorted set's members, found by their bytes: the hash
// half of Redis's zset (its dict from member to score), pointing at the
// skip list's nodes, which hold the member and its score. A Swift
// Dictionary from member to score kept a second reference and a copy of
// the score in a 24-byte key and an 8-byte value at three-quarters load
// (about 45 bytes an element); this is one 8-byte slot at two thirds or
// less (12 to 24 bytes).
//
// Open addressing with linear probing, no tombstones (LinearProbing, as
// MemberTable's index). A slot is the node's address
// in its low 48 bits and the top 16 bits of the member's 32-bit hash in its
// high 16 (a tag): a probe compares the tag before it reads a node. The
// node keeps the hash (SipHash with the process's random seed, as
// MemberTable's), so growing the index or shifting slots back reads it
// instead of hashing the member again.

/// Skip-list nodes by member.
struct NodeIndex {
    /// 0 for an empty slot. Its size is a power of two, at least a third empty.
    private var slots: [UInt64] = []
    private(set) var count = 0

    /// A member's hash (the home slot's bits; its top 16 bits are the tag).
    typealias Hash = UInt32

    static func hash(_ member: UnsafeRawBufferPointer) -> Hash {
        var hasher = Hasher()
        hasher.combine(bytes: member)
        return Hash(truncatingIfNeeded: hasher.finalize())
    }

    @inline(__always)
    private static func tag(_ hash: Hash) -> UInt64 { UInt64(hash >> 16) << 48 }

    private static let addressMask: UInt64 = (1 << 48) - 1

    @inline(__always)
    private static func node(_ slot: UInt64) -> SkipList.Node {
        SkipList.Node(address: UnsafeMutableRawPointer(bitPattern: UInt(slot & addressMask))!)
    }

    /// The node holding `member`, if any. The index must not be empty.
    @inline(__always)
    private func find(_ member: UnsafeRawBufferPointer, _ hash: Hash) -> SkipList.Node? {
        slots.withUnsafeBufferPointer { slots -> SkipList.Node? in
            let mask = slots.count - 1
            var index = Int(hash) & mask
            while true {
                let slot = slots[index]
                if slot == 0 { return nil }
                if slot & ~NodeIndex.addressMask == NodeIndex.tag(hash) {
                    let node = NodeIndex.node(slot)
                    if equalBytes(node.memberBytes, member) { return node }
                }
                index = (index + 1) & mask
            }
        }
    }

    /// The node holding `member`, if any.
    func node(_ member: UnsafeRawBufferPointer) -> SkipList.Node? {
        slots.isEmpty ? nil : find(member, NodeIndex.hash(member))
    }

    /// The node holding `member`, if any, with `member`'s hash.
    func lookup(_ member: UnsafeRawBufferPointer) -> (node: SkipList.Node?, hash: Hash) {
        let hash = NodeIndex.hash(member)
        return (slots.isEmpty ? nil : find(member, hash), hash)
    }

    /// The slot bits of `node`'s address, which must fit in 48 bits (as
    /// x86_64's and arm64's user addresses do without tagging).
    @inline(__always)
    private static func address(_ node: SkipList.Node) -> UInt64 {
        let address = UInt64(UInt(bitPattern: node.address))
        precondition(address & ~addressMask == 0, "kvd: a heap address beyond 48 bits (tagged pointers?)")
        return address
    }

    /// Adds `node`, whose member is absent (hashed as `node.hash`).
    mutating func insert(_ node: SkipList.Node) {
        if (count + 1) * 3 > slots.count * 2 { grow() }
        let mask = slots.count - 1
        var index = Int(node.hash) & mask
        while slots[index] != 0 { index = (index + 1) & mask }
        slots[index] = NodeIndex.tag(node.hash) | NodeIndex.address(node)
        count += 1
    }

    /// Points `old`'s slot at `new`, which holds the same member.
    mutating func replace(_ old: SkipList.Node, with new: SkipList.Node) {
        let mask = slots.count - 1
        var index = Int(old.hash) & mask
        let address = UInt64(UInt(bitPattern: old.address))
        while slots[index] & NodeIndex.addressMask != address { index = (index + 1) & mask }
        slots[index] = slots[index] & ~NodeIndex.addressMask | NodeIndex.address(new)
    }

    /// Removes `node`, which is indexed, and shifts back the slots after it
    /// that would otherwise no longer be found.
    mutating func remove(_ node: SkipList.Node) {
        let mask = slots.count - 1
        var hole = Int(node.hash) & mask
        let address = UInt64(UInt(bitPattern: node.address))
        while slots[hole] & NodeIndex.addressMask != address { hole = (hole + 1) & mask }
        LinearProbing.vacate(&slots, hole) { Int(NodeIndex.node($0).hash) }
        count -= 1
    }

    /// Room for `capacity` members without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        var size = max(8, slots.count)
        while capacity * 3 > size * 2 { size *= 2 }
        if size > slots.count { grow(to: size) }
    }

    /// Doubles the index (8 slots at first), or makes it `size` slots,
    /// placing every slot again.
    private mutating func grow(to size: Int? = nil) {
        slots = LinearProbing.rehash(slots, size: size ?? max(8, slots.count * 2)) { Int(NodeIndex.node($0).hash) }
    }
}
