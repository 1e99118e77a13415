// ListValue.swift: a list, as a ring buffer of byte strings: O(1) push and
// pop at both ends and O(1) access by index (LINDEX, LSET, LRANGE's start),
// O(n) insertion and removal in the middle (LINSERT, LREM), as in Redis.
// The buffer's capacity is a power of two, so an index wraps with a mask;
// it doubles when full and halves when a quarter full, so a list that
// grew and drained gives its memory back.
//
// The ring is raw memory in which only the `count` slots from `head` hold
// an element: growing it moves the elements' bytes (a memcpy), where an
// Array of arrays had to fill every new slot, retain or swap each element
// and release every old slot; that held the core 0.2-0.4 s when a
// 4M-element list doubled. It is still O(n) at once (tens of milliseconds
// at 4M), where Redis's quicklist grows a node at a time.

/// A list value. Core loop only, like the keyspace that holds it (its last
/// reference may be dropped on the reclaiming thread, which then runs
/// `deinit`; nothing else touches it there).
final class ListValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    /// `capacity` slots; those `count` from `head` (wrapping) are initialized.
    private var ring: UnsafeMutablePointer<[UInt8]>?
    private var capacity = 0
    /// Where element 0 is in `ring`.
    private var head = 0
    private(set) var count = 0

    init() {}

    deinit { removeAll() }

    var isEmpty: Bool { count == 0 }

    private func slot(_ index: Int) -> UnsafeMutablePointer<[UInt8]> { ring! + ((head + index) & (capacity - 1)) }

    /// Element `index` (0..<count).
    subscript(index: Int) -> [UInt8] {
        get { slot(index).pointee }
        set { slot(index).pointee = newValue }
    }

    func pushFront(_ element: [UInt8]) {
        growIfFull()
        head = (head - 1) & (capacity - 1)
        (ring! + head).initialize(to: element)
        count += 1
    }

    func pushBack(_ element: [UInt8]) {
        growIfFull()
        slot(count).initialize(to: element)
        count += 1
    }

    func popFront() -> [UInt8]? {
        guard count > 0 else { return nil }
        let element = slot(0).move()
        head = (head + 1) & (capacity - 1)
        count -= 1
        shrinkIfSparse()
        return element
    }

    func popBack() -> [UInt8]? {
        guard count > 0 else { return nil }
        let element = slot(count - 1).move()
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
            swap(&slot(position).pointee, &slot(position - 1).pointee)
            position -= 1
        }
    }

    /// Removes element `index` (0..<count).
    func remove(at index: Int) {
        var position = index
        while position < count - 1 {
            swap(&slot(position).pointee, &slot(position + 1).pointee)
            position += 1
        }
        _ = popBack()
    }

    /// Keeps elements `range` only (LTRIM).
    func keep(_ range: Range<Int>) {
        let kept = range.map { self[$0] }
        removeAll()
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
        removeAll()
        for element in kept { pushBack(element) }
        return removed
    }

    func copy() -> ListValue {
        let copy = ListValue()
        guard count > 0 else { return copy }
        copy.ring = .allocate(capacity: capacity)
        copy.capacity = capacity
        for index in 0..<count { (copy.ring! + index).initialize(to: self[index]) }
        copy.count = count
        return copy
    }

    /// Every element gone, and the ring with them.
    private func removeAll() {
        guard let ring else { return }
        let first = min(count, capacity - head)
        (ring + head).deinitialize(count: first)
        ring.deinitialize(count: count - first)
        ring.deallocate()
        self.ring = nil
        capacity = 0
        head = 0
        count = 0
    }

    private func growIfFull() {
        guard count == capacity else { return }
        move(to: max(capacity * 2, 4))
    }

    private func shrinkIfSparse() {
        guard capacity >= 64, count * 4 <= capacity else { return }
        move(to: capacity / 2)
    }

    /// The elements, in order, into a ring of `newCapacity` slots from its
    /// start: their bytes move, nothing is retained or released.
    private func move(to newCapacity: Int) {
        let moved = UnsafeMutablePointer<[UInt8]>.allocate(capacity: newCapacity)
        if let ring {
            let first = min(count, capacity - head)
            moved.moveInitialize(from: ring + head, count: first)
            (moved + first).moveInitialize(from: ring, count: count - first)
            ring.deallocate()
        }
        ring = moved
        capacity = newCapacity
        head = 0
    }
}
