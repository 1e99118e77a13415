// ListValue.swift: a list, as a ring buffer of byte strings: O(1) push and
// pop at both ends and O(1) access by index (LINDEX, LSET, LRANGE's start),
// O(n) insertion and removal in the middle (LINSERT, LREM), as in Redis.
// The buffer's capacity is a power of two, so an index wraps with a mask;
// it doubles when full and halves when a quarter full, so a list that
// grew and drained gives its memory back. Empty slots hold the empty
// array, which allocates nothing.

/// A list value. Core loop only, like the keyspace that holds it.
final class ListValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private var ring: [[UInt8]] = []
    /// Where element 0 is in `ring`.
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    private func slot(_ index: Int) -> Int { (head + index) & (ring.count - 1) }

    /// Element `index` (0..<count).
    subscript(index: Int) -> [UInt8] {
        get { ring[slot(index)] }
        set { ring[slot(index)] = newValue }
    }

    func pushFront(_ element: [UInt8]) {
        growIfFull()
        head = (head - 1) & (ring.count - 1)
        ring[head] = element
        count += 1
    }

    func pushBack(_ element: [UInt8]) {
        growIfFull()
        ring[slot(count)] = element
        count += 1
    }

    func popFront() -> [UInt8]? {
        guard count > 0 else { return nil }
        let element = ring[head]
        ring[head] = []
        head = (head + 1) & (ring.count - 1)
        count -= 1
        shrinkIfSparse()
        return element
    }

    func popBack() -> [UInt8]? {
        guard count > 0 else { return nil }
        let position = slot(count - 1)
        let element = ring[position]
        ring[position] = []
        count -= 1
        shrinkIfSparse()
        return element
    }

    /// Inserts `element` before element `index` (0...count).
    func insert(_ element: [UInt8], at index: Int) {
        if index == 0 { return pushFront(element) }
        pushBack(element)
        var position = count - 1
        while position > index {
            ring.swapAt(slot(position), slot(position - 1))
            position -= 1
        }
    }

    /// Removes element `index` (0..<count).
    func remove(at index: Int) {
        var position = index
        while position < count - 1 {
            ring.swapAt(slot(position), slot(position + 1))
            position += 1
        }
        _ = popBack()
    }

    /// Keeps elements `range` only (LTRIM).
    func keep(_ range: Range<Int>) {
        let kept = range.map { self[$0] }
        ring = []
        head = 0
        count = 0
        for element in kept { pushBack(element) }
    }

    /// Removes every element for which `matches` is true, scanning from the
    /// head (`fromBack`: from the tail), at most `limit` of them (0: all);
    /// returns how many were removed (LREM).
    func removeAll(limit: Int, fromBack: Bool, where matches: ([UInt8]) -> Bool) -> Int {
        var kept: [[UInt8]] = []
        kept.reserveCapacity(count)
        var removed = 0
        let order = fromBack ? Array((0..<count).reversed()) : Array(0..<count)
        for index in order {
            let element = self[index]
            if (limit == 0 || removed < limit) && matches(element) {
                removed += 1
            } else {
                kept.append(element)
            }
        }
        guard removed > 0 else { return 0 }
        if fromBack { kept.reverse() }
        ring = []
        head = 0
        count = 0
        for element in kept { pushBack(element) }
        return removed
    }

    func copy() -> ListValue {
        let copy = ListValue()
        copy.ring = ring
        copy.head = head
        copy.count = count
        return copy
    }

    private func growIfFull() {
        guard count == ring.count else { return }
        var bigger = [[UInt8]](repeating: [], count: max(ring.count * 2, 4))
        for index in 0..<count { bigger[index] = ring[slot(index)] }
        ring = bigger
        head = 0
    }

    private func shrinkIfSparse() {
        guard ring.count >= 64, count * 4 <= ring.count else { return }
        var smaller = [[UInt8]](repeating: [], count: ring.count / 2)
        for index in 0..<count { smaller[index] = ring[slot(index)] }
        ring = smaller
        head = 0
    }
}
