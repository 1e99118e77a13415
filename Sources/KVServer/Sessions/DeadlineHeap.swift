// DeadlineHeap.swift: the parked clients' deadlines, earliest first: a
// binary min-heap, so parking and expiring cost O(log n) and the earliest
// deadline (the one loop timer's) is at the top. An entry is not removed
// when its client leaves some other way (served, unblocked, gone): it
// carries the park's serial, and the owner skips an entry whose serial is
// no longer current when it reaches the top.

/// Deadlines in order, each with its client and the park's serial.
struct DeadlineHeap {
    struct Entry {
        let deadline: Int64
        let client: Int
        let serial: Int
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    /// The earliest entry.
    var first: Entry? { entries.first }

    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry.
    @discardableResult
    mutating func removeFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let first = entries.removeLast()
        var parent = 0
        while true {
            let (left, right) = (2 * parent + 1, 2 * parent + 2)
            var smallest = parent
            if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
            guard smallest != parent else { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
