// ExpiryQueue.swift: the keys that have a deadline, in deadline order, so
// that active expiry removes exactly the keys that are due: no sampling,
// no stale key left behind by luck, and nothing to do while none is due.
// Owned by one Keyspace, on its loop's thread.
//
// Invariants:
// - A key is in the queue at most once, under a handle (its index in
//   `slots`) that `Keyspace` keeps in `Entry.expiryIndex`. A new deadline
//   moves the key within the heap; it never adds a second copy. So the
//   queue never holds more than the keys that have an expiry, however often
//   TTLs are refreshed.
// - `heap` is a 4-ary min-heap on `deadline`, and `slots[h].position` is
//   where handle h sits in it. A move writes that field: an array store,
//   not a hash lookup, so a sift costs no lookup in the key table.
// - A removed handle joins a free list threaded through `position`, and
//   the next insert takes it: a removal moves no other key, so it costs no
//   lookup in the key table (a dense array would, for the key it moved).
// - `heap` gives memory back when it falls to a quarter of its capacity;
//   `slots` when the queue empties, or, while it is under a quarter full,
//   through `compact`, which renumbers the live handles for the caller to
//   record. So an expiry storm does not leave its peak behind.

/// The keys of a keyspace that have an expiry, ordered by deadline.
struct ExpiryQueue {
    private struct Slot {
        /// The key (stored bytes, shared with the key table); empty when free.
        var key: [UInt8]
        /// Where this handle sits in `heap`; when free, the next free handle (-1: none).
        var position: Int
    }

    private struct Item {
        var deadline: Int64
        var handle: Int
    }

    private var slots: [Slot] = []
    private var heap: [Item] = []
    private var freeHandle = -1
    /// The sum of every deadline, exact (INFO keyspace's avg_ttl).
    private(set) var deadlineSum: Int128 = 0

    /// The number of keys in the queue.
    var count: Int { heap.count }

    /// The earliest deadline and the handle of its key.
    var first: (deadline: Int64, handle: Int)? {
        heap.first.map { ($0.deadline, $0.handle) }
    }

    /// The key under `handle`.
    func key(_ handle: Int) -> [UInt8] { slots[handle].key }

    /// The key at `position` of the queue's order (0..<count), which is
    /// no order a caller can rely on: a uniform pick, for eviction.
    func key(atPosition position: Int) -> [UInt8] { slots[heap[position].handle].key }

    /// True when fewer than a quarter of a large slot array's handles are
    /// live: time for `compact`.
    var wantsCompaction: Bool { slots.count >= 4096 && heap.count < slots.count / 4 }

    /// Adds `key` (not in the queue yet) with `deadline`; returns its handle.
    mutating func insert(_ key: [UInt8], deadline: Int64) -> Int {
        let handle: Int
        if freeHandle >= 0 {
            handle = freeHandle
            freeHandle = slots[handle].position
            slots[handle] = Slot(key: key, position: heap.count)
        } else {
            handle = slots.count
            slots.append(Slot(key: key, position: heap.count))
        }
        heap.append(Item(deadline: deadline, handle: handle))
        deadlineSum += Int128(deadline)
        siftUp(heap.count - 1)
        return handle
    }

    /// Gives the key under `handle` a new deadline, in place.
    mutating func update(_ handle: Int, deadline: Int64) {
        let position = slots[handle].position
        let earlier = deadline < heap[position].deadline
        deadlineSum += Int128(deadline) - Int128(heap[position].deadline)
        heap[position].deadline = deadline
        if earlier { siftUp(position) } else { siftDown(position) }
    }

    /// Removes the key under `handle`; the handle is free for reuse.
    mutating func remove(_ handle: Int) {
        let position = slots[handle].position
        deadlineSum -= Int128(heap[position].deadline)
        let lastItem = heap.removeLast()
        if position < heap.count {
            heap[position] = lastItem
            slots[lastItem.handle].position = position
            if position > 0 && lastItem.deadline < heap[(position - 1) >> 2].deadline {
                siftUp(position)
            } else {
                siftDown(position)
            }
        }
        if heap.isEmpty {
            removeAll()
            return
        }
        slots[handle] = Slot(key: [], position: freeHandle)
        freeHandle = handle
        if heap.capacity >= 4096 && heap.count <= heap.capacity / 4 {
            var heap: [Item] = []
            heap.reserveCapacity(self.heap.count * 2)
            heap.append(contentsOf: self.heap)
            self.heap = heap
        }
    }

    /// Renumbers the live handles densely from 0 and gives the slot array's
    /// spare memory back; `relocated` hears each key's new handle.
    mutating func compact(_ relocated: (_ key: [UInt8], _ handle: Int) -> Void) {
        var slots: [Slot] = []
        slots.reserveCapacity(heap.count * 2)
        for position in heap.indices {
            let key = self.slots[heap[position].handle].key
            heap[position].handle = slots.count
            relocated(key, slots.count)
            slots.append(Slot(key: key, position: position))
        }
        self.slots = slots
        freeHandle = -1
    }

    /// Empties the queue and gives its memory back.
    mutating func removeAll() {
        slots = []
        heap = []
        freeHandle = -1
        deadlineSum = 0
    }

    private mutating func siftUp(_ start: Int) {
        let item = heap[start]
        var position = start
        while position > 0 {
            let parent = (position - 1) >> 2
            guard heap[parent].deadline > item.deadline else { break }
            heap[position] = heap[parent]
            slots[heap[position].handle].position = position
            position = parent
        }
        heap[position] = item
        slots[item.handle].position = position
    }

    private mutating func siftDown(_ start: Int) {
        let item = heap[start]
        var position = start
        while true {
            let firstChild = 4 * position + 1
            guard firstChild < heap.count else { break }
            var least = firstChild
            for child in (firstChild + 1)..<min(firstChild + 4, heap.count)
            where heap[child].deadline < heap[least].deadline {
                least = child
            }
            guard heap[least].deadline < item.deadline else { break }
            heap[position] = heap[least]
            slots[heap[position].handle].position = position
            position = least
        }
        heap[position] = item
        slots[item.handle].position = position
    }
}
