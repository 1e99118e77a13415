// ListValue.swift: a list as Redis 7.0 keeps one (its quicklist): a ring
// of nodes, each a buffer of up to 8 KiB holding several elements packed
// back to back (Redis's default `list-max-listpack-size -2`), so an
// element costs its bytes and two length bytes, not an array of its own:
// 5M small elements take about what redis-server takes.
//
// An element is packed as its length (a varint: 7 bits a byte, the high
// bit saying more follow), its bytes, then the same length bytes in
// reverse order, so a node is walked from either end. A node's elements
// sit in `buffer[start..<end]`, with room on both sides: a push at either
// end writes into that room (the buffer grows by doubling, up to the
// node's limit) and a pop moves `start` or `end`, so both are O(1) and
// allocate nothing once a node has room. A node that cannot take an
// element starts a new one; a node that empties is freed. Inserting or
// removing in the middle (LINSERT, LSET, LREM) moves at most one node's
// bytes, splitting a node that would grow past its limit.
//
// Reaching element i walks the node counts from the nearer end and then
// that node's elements: O(n / elements per node), as in Redis. The last
// position reached is remembered, so reading elements i, i + 1, ... in
// turn (the RDB writer's loop) costs O(1) each.

/// One node: `count` packed elements in `buffer[start..<end]`.
private struct ListNode {
    var buffer: UnsafeMutableRawPointer
    var capacity: Int
    var start: Int
    var end: Int
    var count: Int

    var used: Int { end - start }
}

/// A list value. Core loop only, like the keyspace that holds it (its last
/// reference may be dropped on the reclaiming thread, which then runs
/// `deinit`; a snapshot's writer thread reads one the core no longer
/// changes: Persistence/Snapshot.swift).
final class ListValue {
    /// Where an element is: its node (0 is the head's) and its offset in
    /// that node's buffer.
    private struct Position {
        var node: Int
        var offset: Int
    }

    /// A node takes elements while it holds at most this many bytes (an
    /// element larger than this gets a node of its own).
    static let nodeLimit = 8 * 1024
    /// A new node's smallest buffer.
    private static let smallestBuffer = 16

    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private(set) var count = 0
    /// `ringCapacity` node slots (a power of two); those `nodeCount` from
    /// `head` (wrapping) are in use.
    private var ring: UnsafeMutablePointer<ListNode>?
    private var ringCapacity = 0
    private var head = 0
    private var nodeCount = 0
    /// The element last reached by index, while nothing changed since.
    private var cursor: (index: Int, at: Position)?

    init() {}

    deinit {
        for index in 0..<nodeCount { node(index).pointee.buffer.deallocate() }
        ring?.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    // MARK: Both ends

    func pushFront(_ element: UnsafeRawBufferPointer) {
        cursor = nil
        let size = ListValue.packedSize(element.count)
        if nodeCount == 0 || !ListValue.fits(node(0).pointee, size) {
            insertNode(at: 0, room: roomForNewEnd(size), atFront: true)
        }
        let first = node(0)
        makeRoom(first, size, atFront: true)
        first.pointee.start -= size
        ListValue.pack(element, at: first.pointee.buffer + first.pointee.start)
        first.pointee.count += 1
        count += 1
    }

    func pushBack(_ element: UnsafeRawBufferPointer) {
        cursor = nil
        let size = ListValue.packedSize(element.count)
        if nodeCount == 0 || !ListValue.fits(node(nodeCount - 1).pointee, size) {
            insertNode(at: nodeCount, room: roomForNewEnd(size), atFront: false)
        }
        let last = node(nodeCount - 1)
        makeRoom(last, size, atFront: false)
        ListValue.pack(element, at: last.pointee.buffer + last.pointee.end)
        last.pointee.end += size
        last.pointee.count += 1
        count += 1
    }

    func pushFront(_ element: [UInt8]) { element.withUnsafeBytes { pushFront($0) } }

    func pushBack(_ element: [UInt8]) { element.withUnsafeBytes { pushBack($0) } }

    /// Removes the first element, handing its bytes to `body` first; nil
    /// when the list is empty.
    @discardableResult
    func popFront<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard count > 0 else { return nil }
        let at = Position(node: 0, offset: node(0).pointee.start)
        let result = try body(element(at))
        _ = remove(at)
        return result
    }

    /// Removes the last element, handing its bytes to `body` first; nil
    /// when the list is empty.
    @discardableResult
    func popBack<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard count > 0 else { return nil }
        let at = last()!
        let result = try body(element(at))
        _ = remove(at)
        return result
    }

    func popFront() -> [UInt8]? { popFront { Array($0) } }

    func popBack() -> [UInt8]? { popBack { Array($0) } }

    // MARK: By index

    /// Hands element `index` (0..<count) to `body`.
    func withElement<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(element(position(of: index)))
    }

    /// Element `index` (0..<count), copied out.
    subscript(index: Int) -> [UInt8] {
        get { withElement(at: index) { Array($0) } }
        set { newValue.withUnsafeBytes { replace(at: index, with: $0) } }
    }

    /// Calls `body` with each element's index and bytes, from element
    /// `index` towards the tail (`backward`: towards the head), until it
    /// returns false or the list ends.
    func scan(
        from index: Int, backward: Bool = false, _ body: (Int, UnsafeRawBufferPointer) throws -> Bool
    ) rethrows {
        guard index >= 0 && index < count else { return }
        var at: Position? = position(of: index)
        var current = index
        while let position = at {
            guard try body(current, element(position)) else { return }
            at = backward ? before(position) : after(position)
            current += backward ? -1 : 1
        }
    }

    /// Replaces element `index` (0..<count) with `element` (LSET).
    func replace(at index: Int, with element: UnsafeRawBufferPointer) {
        let at = position(of: index)
        cursor = nil
        let target = node(at.node)
        let old = ListValue.entrySize(target.pointee.buffer + at.offset)
        let size = ListValue.packedSize(element.count)
        guard target.pointee.count == 1 || target.pointee.used - old + size <= ListValue.nodeLimit else {
            _ = remove(at)
            return insert(element, at: index)
        }
        let offset = splice(target, at: at.offset, removing: old, inserting: size)
        ListValue.pack(element, at: target.pointee.buffer + offset)
    }

    /// Inserts `element` before element `index` (0...count).
    func insert(_ element: UnsafeRawBufferPointer, at index: Int) {
        if index == 0 { return pushFront(element) }
        if index == count { return pushBack(element) }
        let at = position(of: index)
        cursor = nil
        let size = ListValue.packedSize(element.count)
        let target = node(at.node)
        if ListValue.fits(target.pointee, size) {
            let offset = splice(target, at: at.offset, removing: 0, inserting: size)
            ListValue.pack(element, at: target.pointee.buffer + offset)
            target.pointee.count += 1
        } else if at.offset == target.pointee.start {
            // Before a node's first element: at the end of the node before
            // (there is one: index > 0), or in a node of its own.
            insertBetween(element, size, afterNode: at.node - 1)
        } else {
            split(at.node, at: at.offset)
            insertBetween(element, size, afterNode: at.node)
        }
        count += 1
    }

    func insert(_ element: [UInt8], at index: Int) { element.withUnsafeBytes { insert($0, at: index) } }

    /// Removes element `index` (0..<count).
    func remove(at index: Int) {
        _ = remove(position(of: index))
    }

    /// Keeps elements `range` only (LTRIM): O(elements removed / node).
    func keep(_ range: Range<Int>) {
        cursor = nil
        removeFromHead(range.lowerBound)
        removeFromTail(count - range.count)
    }

    /// Removes every element for which `matches` is true, scanning from the
    /// head (`fromBack`: from the tail), at most `limit` of them (0: all);
    /// returns how many were removed (LREM).
    func removeAll(limit: Int, fromBack: Bool, where matches: (UnsafeRawBufferPointer) -> Bool) -> Int {
        var removed = 0
        var at = fromBack ? last() : first()
        while let position = at, limit == 0 || removed < limit {
            if fromBack {
                // The element before keeps its place: a removal moves only
                // the bytes after the removed element.
                at = before(position)
                if matches(element(position)) {
                    _ = remove(position)
                    removed += 1
                }
            } else if matches(element(position)) {
                at = remove(position)
                removed += 1
            } else {
                at = after(position)
            }
        }
        return removed
    }

    func copy() -> ListValue {
        let copy = ListValue()
        guard nodeCount > 0 else { return copy }
        copy.ring = .allocate(capacity: ringCapacity)
        copy.ringCapacity = ringCapacity
        for index in 0..<nodeCount {
            let original = node(index).pointee
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: original.capacity, alignment: 1)
            (buffer + original.start).copyMemory(from: original.buffer + original.start, byteCount: original.used)
            var duplicate = original
            duplicate.buffer = buffer
            (copy.ring! + index).initialize(to: duplicate)
        }
        copy.nodeCount = nodeCount
        copy.count = count
        return copy
    }

    /// The counts agree with the nodes, every node is in bounds, holds
    /// elements and walks to its end in `count` steps (for the tests).
    var invariantsHold: Bool {
        var total = 0
        for index in 0..<nodeCount {
            let current = node(index).pointee
            guard current.count > 0, 0 <= current.start, current.start <= current.end, current.end <= current.capacity
            else { return false }
            var offset = current.start
            for _ in 0..<current.count { offset += ListValue.entrySize(current.buffer + offset) }
            guard offset == current.end else { return false }
            total += current.count
        }
        return total == count && (nodeCount == 0) == (ring == nil)
    }

    // MARK: Packing

    /// The bytes a varint of `length` takes.
    private static func varintSize(_ length: Int) -> Int {
        var size = 1
        var rest = length >> 7
        while rest > 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    /// The bytes an element of `length` bytes takes, packed.
    private static func packedSize(_ length: Int) -> Int { length + 2 * varintSize(length) }

    /// Writes `element` packed at `to`.
    private static func pack(_ element: UnsafeRawBufferPointer, at to: UnsafeMutableRawPointer) {
        let width = varintSize(element.count)
        let trailer = to + width + element.count
        var rest = element.count
        for index in 0..<width {
            let byte = UInt8(rest & 0x7F) | (index < width - 1 ? 0x80 : 0)
            to.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
            trailer.storeBytes(of: byte, toByteOffset: width - 1 - index, as: UInt8.self)
            rest >>= 7
        }
        if element.count > 0 { (to + width).copyMemory(from: element.baseAddress!, byteCount: element.count) }
    }

    /// The length of the element packed at `entry`, and its varint's width.
    private static func header(_ entry: UnsafeRawPointer) -> (length: Int, width: Int) {
        var length = 0
        var width = 0
        while true {
            let byte = entry.load(fromByteOffset: width, as: UInt8.self)
            length |= Int(byte & 0x7F) << (7 * width)
            width += 1
            if byte & 0x80 == 0 { return (length, width) }
        }
    }

    /// The packed size of the element at `entry`.
    private static func entrySize(_ entry: UnsafeRawPointer) -> Int {
        let (length, width) = header(entry)
        return length + 2 * width
    }

    /// The packed size of the element that ends just before `end`.
    private static func entrySize(endingAt end: UnsafeRawPointer) -> Int {
        var length = 0
        var width = 0
        while true {
            let byte = end.load(fromByteOffset: -1 - width, as: UInt8.self)
            length |= Int(byte & 0x7F) << (7 * width)
            width += 1
            if byte & 0x80 == 0 { return length + 2 * width }
        }
    }

    /// True when `node` may take an element of `size` packed bytes.
    private static func fits(_ node: ListNode, _ size: Int) -> Bool {
        node.count == 0 || node.used + size <= nodeLimit
    }

    // MARK: Positions

    private func node(_ index: Int) -> UnsafeMutablePointer<ListNode> {
        ring! + ((head + index) & (ringCapacity - 1))
    }

    private func element(_ at: Position) -> UnsafeRawBufferPointer {
        let entry = node(at.node).pointee.buffer + at.offset
        let (length, width) = ListValue.header(entry)
        return UnsafeRawBufferPointer(start: entry + width, count: length)
    }

    private func first() -> Position? {
        nodeCount == 0 ? nil : Position(node: 0, offset: node(0).pointee.start)
    }

    private func last() -> Position? {
        guard nodeCount > 0 else { return nil }
        let tail = node(nodeCount - 1).pointee
        return Position(node: nodeCount - 1, offset: tail.end - ListValue.entrySize(endingAt: tail.buffer + tail.end))
    }

    private func after(_ at: Position) -> Position? {
        let current = node(at.node).pointee
        let next = at.offset + ListValue.entrySize(current.buffer + at.offset)
        if next < current.end { return Position(node: at.node, offset: next) }
        return at.node + 1 < nodeCount ? Position(node: at.node + 1, offset: node(at.node + 1).pointee.start) : nil
    }

    private func before(_ at: Position) -> Position? {
        let current = node(at.node).pointee
        if at.offset > current.start {
            let size = ListValue.entrySize(endingAt: current.buffer + at.offset)
            return Position(node: at.node, offset: at.offset - size)
        }
        guard at.node > 0 else { return nil }
        let previous = node(at.node - 1).pointee
        return Position(
            node: at.node - 1, offset: previous.end - ListValue.entrySize(endingAt: previous.buffer + previous.end))
    }

    /// Where element `index` (0..<count) is: from the last position reached
    /// when it is that one or a neighbour, else from the nearer end.
    private func position(of index: Int) -> Position {
        if let cursor {
            if index == cursor.index { return cursor.at }
            if index == cursor.index + 1, let next = after(cursor.at) { return remember(index, next) }
            if index == cursor.index - 1, let previous = before(cursor.at) { return remember(index, previous) }
        }
        var nodeIndex: Int
        var within: Int
        if index < count / 2 {
            (nodeIndex, within) = (0, index)
            while within >= node(nodeIndex).pointee.count {
                within -= node(nodeIndex).pointee.count
                nodeIndex += 1
            }
        } else {
            (nodeIndex, within) = (nodeCount - 1, index - count)
            while true {
                within += node(nodeIndex).pointee.count
                if within >= 0 { break }
                nodeIndex -= 1
            }
        }
        let holder = node(nodeIndex).pointee
        var offset: Int
        if within < holder.count / 2 {
            offset = holder.start
            for _ in 0..<within { offset += ListValue.entrySize(holder.buffer + offset) }
        } else {
            offset = holder.end
            for _ in within..<holder.count { offset -= ListValue.entrySize(endingAt: holder.buffer + offset) }
        }
        return remember(index, Position(node: nodeIndex, offset: offset))
    }

    private func remember(_ index: Int, _ at: Position) -> Position {
        cursor = (index, at)
        return at
    }

    // MARK: Changing nodes

    /// Removes the element at `at`; returns where the element after it now
    /// is (nil when it was the last). Only the bytes after the removed
    /// element move (none when it was its node's first or last).
    private func remove(_ at: Position) -> Position? {
        cursor = nil
        let holder = node(at.node)
        let size = ListValue.entrySize(holder.pointee.buffer + at.offset)
        count -= 1
        holder.pointee.count -= 1
        if holder.pointee.count == 0 {
            removeNode(at.node)
            return at.node < nodeCount ? Position(node: at.node, offset: node(at.node).pointee.start) : nil
        }
        if at.offset == holder.pointee.start {
            holder.pointee.start += size
            return Position(node: at.node, offset: holder.pointee.start)
        }
        let tail = at.offset + size
        (holder.pointee.buffer + at.offset).copyMemory(
            from: holder.pointee.buffer + tail, byteCount: holder.pointee.end - tail)
        holder.pointee.end -= size
        if at.offset < holder.pointee.end { return at }
        return at.node + 1 < nodeCount ? Position(node: at.node + 1, offset: node(at.node + 1).pointee.start) : nil
    }

    /// Drops `dropped` elements from the head, whole nodes first.
    private func removeFromHead(_ dropped: Int) {
        var left = dropped
        while left > 0 {
            let first = node(0)
            if first.pointee.count <= left {
                left -= first.pointee.count
                count -= first.pointee.count
                removeNode(0)
                continue
            }
            for _ in 0..<left { first.pointee.start += ListValue.entrySize(first.pointee.buffer + first.pointee.start) }
            first.pointee.count -= left
            count -= left
            left = 0
        }
    }

    /// Drops `dropped` elements from the tail, whole nodes first.
    private func removeFromTail(_ dropped: Int) {
        var left = dropped
        while left > 0 {
            let last = node(nodeCount - 1)
            if last.pointee.count <= left {
                left -= last.pointee.count
                count -= last.pointee.count
                removeNode(nodeCount - 1)
                continue
            }
            for _ in 0..<left {
                last.pointee.end -= ListValue.entrySize(endingAt: last.pointee.buffer + last.pointee.end)
            }
            last.pointee.count -= left
            count -= left
            left = 0
        }
    }

    /// Makes room for `size` more bytes before `start` (`atFront`) or after
    /// `end`: in place when there is, by centring the elements when the
    /// buffer has room in all, else in a buffer twice as large (or as
    /// large as needed), the elements at the end the push comes from.
    private func makeRoom(_ target: UnsafeMutablePointer<ListNode>, _ size: Int, atFront: Bool) {
        let current = target.pointee
        if atFront ? current.start >= size : current.end + size <= current.capacity { return }
        let needed = current.used + size
        if needed <= current.capacity {
            let free = current.capacity - needed
            let start = atFront ? size + free / 2 : free / 2
            (current.buffer + start).copyMemory(from: current.buffer + current.start, byteCount: current.used)
            target.pointee.start = start
            target.pointee.end = start + current.used
            return
        }
        let capacity = max(ListValue.bufferSize(for: needed), current.capacity * 2)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        let start = atFront ? capacity - current.used : 0
        (buffer + start).copyMemory(from: current.buffer + current.start, byteCount: current.used)
        current.buffer.deallocate()
        target.pointee.buffer = buffer
        target.pointee.capacity = capacity
        target.pointee.start = start
        target.pointee.end = start + current.used
    }

    /// The room of a node a push starts: the element's own for a new
    /// list (a list of a few elements stays small); a whole node's when
    /// the end node is full, since the list grows that way (a queue then
    /// allocates once a node, not at every doubling of each new node).
    private func roomForNewEnd(_ size: Int) -> Int {
        nodeCount == 0 ? size : max(size, ListValue.nodeLimit)
    }

    /// A buffer size for `bytes`: a power of two from `smallestBuffer`, up
    /// to the node limit; exactly `bytes` past it (a large element alone).
    private static func bufferSize(for bytes: Int) -> Int {
        guard bytes <= nodeLimit else { return bytes }
        var size = smallestBuffer
        while size < bytes { size *= 2 }
        return size
    }

    /// Replaces `removing` bytes at `offset` in `target` by `inserting`
    /// bytes (not yet written); returns where they go.
    private func splice(
        _ target: UnsafeMutablePointer<ListNode>, at offset: Int, removing: Int, inserting: Int
    ) -> Int {
        let current = target.pointee
        let used = current.used - removing + inserting
        let before = offset - current.start
        let after = current.end - offset - removing
        if current.start + used <= current.capacity {
            // The bytes after the spliced ones move; the ones before stay.
            (current.buffer + offset + inserting).copyMemory(
                from: current.buffer + offset + removing, byteCount: after)
            target.pointee.end = current.start + used
            return offset
        }
        let capacity = used <= current.capacity ? current.capacity : ListValue.bufferSize(for: used)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        buffer.copyMemory(from: current.buffer + current.start, byteCount: before)
        (buffer + before + inserting).copyMemory(from: current.buffer + offset + removing, byteCount: after)
        current.buffer.deallocate()
        target.pointee = ListNode(buffer: buffer, capacity: capacity, start: 0, end: used, count: current.count)
        return before
    }

    /// Splits node `index` at `offset` (inside it): the elements from
    /// `offset` on go to a new node after it.
    private func split(_ index: Int, at offset: Int) {
        let original = node(index).pointee
        let moved = original.end - offset
        var elements = 0
        var walk = offset
        while walk < original.end {
            walk += ListValue.entrySize(original.buffer + walk)
            elements += 1
        }
        insertNode(at: index + 1, room: moved, atFront: false)
        let second = node(index + 1)
        second.pointee.buffer.copyMemory(from: original.buffer + offset, byteCount: moved)
        second.pointee.end = moved
        second.pointee.count = elements
        let first = node(index)
        first.pointee.end = offset
        first.pointee.count -= elements
    }

    /// Puts `element` between node `index` and the next one: at the end of
    /// the first, else at the start of the next, else in a node of its own.
    private func insertBetween(_ element: UnsafeRawBufferPointer, _ size: Int, afterNode index: Int) {
        let target: UnsafeMutablePointer<ListNode>
        let atFront: Bool
        if ListValue.fits(node(index).pointee, size) {
            (target, atFront) = (node(index), false)
        } else if index + 1 < nodeCount && ListValue.fits(node(index + 1).pointee, size) {
            (target, atFront) = (node(index + 1), true)
        } else {
            insertNode(at: index + 1, room: size, atFront: false)
            (target, atFront) = (node(index + 1), false)
        }
        makeRoom(target, size, atFront: atFront)
        if atFront { target.pointee.start -= size }
        ListValue.pack(element, at: target.pointee.buffer + (atFront ? target.pointee.start : target.pointee.end))
        if !atFront { target.pointee.end += size }
        target.pointee.count += 1
    }

    /// A new, empty node at `index` (0...nodeCount), with a buffer for
    /// `room` bytes, its free space after (`atFront`: before) them.
    private func insertNode(at index: Int, room: Int, atFront: Bool) {
        if nodeCount == ringCapacity { resizeRing(to: max(ringCapacity * 2, 1)) }
        let capacity = ListValue.bufferSize(for: room)
        let start = atFront ? capacity : 0
        let fresh = ListNode(
            buffer: .allocate(byteCount: capacity, alignment: 1), capacity: capacity, start: start, end: start,
            count: 0)
        if index == 0 {
            head = (head - 1) & (ringCapacity - 1)
        } else {
            var slot = nodeCount
            while slot > index {
                node(slot).initialize(to: node(slot - 1).move())
                slot -= 1
            }
        }
        nodeCount += 1
        node(index).initialize(to: fresh)
    }

    /// Frees node `index` and closes the gap.
    private func removeNode(_ index: Int) {
        node(index).move().buffer.deallocate()
        if index == 0 {
            head = (head + 1) & (ringCapacity - 1)
        } else {
            for slot in index..<(nodeCount - 1) { node(slot).initialize(to: node(slot + 1).move()) }
        }
        nodeCount -= 1
        if nodeCount == 0 {
            ring?.deallocate()
            ring = nil
            ringCapacity = 0
            head = 0
        } else if ringCapacity >= 16 && nodeCount * 4 <= ringCapacity {
            resizeRing(to: ringCapacity / 2)
        }
    }

    /// The nodes, in order, into a ring of `capacity` slots from its start.
    private func resizeRing(to capacity: Int) {
        let resized = UnsafeMutablePointer<ListNode>.allocate(capacity: capacity)
        for index in 0..<nodeCount { (resized + index).initialize(to: node(index).move()) }
        ring?.deallocate()
        ring = resized
        ringCapacity = capacity
        head = 0
    }
}
