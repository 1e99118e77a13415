// CollectionAccess.swift: what the hash, set and list commands share: a
// key looked up as the type a command needs (WRONGTYPE otherwise, in
// Redis's words), a collection created on first write and deleted when
// its last element goes (Redis never keeps an empty collection), the
// argument rules of Redis's getRangeLong and getPositiveLong, and the
// cursor and options of HSCAN and SSCAN.
import Glibc

extension Keyspace {
    /// The hash at `key`: `.some(nil)` when absent, nil after answering WRONGTYPE.
    func lookupHash(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> HashValue?? {
        typed(key, .asCommand, &out) { if case .hash(let hash) = $0 { hash } else { nil } }
    }

    /// The set at `key`: `.some(nil)` when absent, nil after answering
    /// WRONGTYPE; `use` says whether the lookup is a read.
    func lookupSet(_ key: UnsafeRawBufferPointer, use: KeyRead = .asCommand, _ out: inout ReplyWriter) -> SetValue?? {
        typed(key, use, &out) { if case .set(let set) = $0 { set } else { nil } }
    }

    /// The list at `key`: `.some(nil)` when absent, nil after answering WRONGTYPE.
    func lookupList(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> ListValue?? {
        typed(key, .asCommand, &out) { if case .list(let list) = $0 { list } else { nil } }
    }

    /// The sorted set at `key`: `.some(nil)` when absent, nil after
    /// answering WRONGTYPE; `use` says whether the lookup is a read.
    func lookupSortedSet(
        _ key: UnsafeRawBufferPointer, use: KeyRead = .asCommand, _ out: inout ReplyWriter
    ) -> SortedSetValue?? {
        typed(key, use, &out) { if case .sortedSet(let sortedSet) = $0 { sortedSet } else { nil } }
    }

    /// The sorted set at `key`, created empty and stored when absent; nil
    /// after answering WRONGTYPE.
    func sortedSetForWriting(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> SortedSetValue? {
        forWriting(key, lookupSortedSet(key, &out)) {
            let sortedSet = SortedSetValue()
            return (sortedSet, .sortedSet(sortedSet))
        }
    }

    /// The hash at `key`, created empty and stored when absent; nil after
    /// answering WRONGTYPE.
    func hashForWriting(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> HashValue? {
        forWriting(key, lookupHash(key, &out)) {
            let hash = HashValue(); return (hash, .hash(hash))
        }
    }

    /// The set at `key`, created empty and stored when absent; nil after
    /// answering WRONGTYPE.
    func setForWriting(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> SetValue? {
        forWriting(key, lookupSet(key, &out)) {
            let set = SetValue(); return (set, .set(set))
        }
    }

    /// The list at `key`, created empty and stored when absent; nil after
    /// answering WRONGTYPE.
    func listForWriting(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> ListValue? {
        forWriting(key, lookupList(key, &out)) {
            let list = ListValue(); return (list, .list(list))
        }
    }

    /// The live value at `key` as `pick` finds it in the collection; a
    /// string or another collection answers WRONGTYPE.
    private func typed<T>(
        _ key: UnsafeRawBufferPointer, _ use: KeyRead, _ out: inout ReplyWriter, _ pick: (Collection) -> T?
    ) -> T?? {
        guard let entry = lookup(key, now: now, use: use) else { return .some(nil) }
        guard let found = entry.collection.flatMap(pick) else {
            out.error(wrongTypeError)
            return nil
        }
        return found
    }

    /// `found` as a lookup answered it, or a new collection from `make`,
    /// stored at `key`.
    private func forWriting<T>(
        _ key: UnsafeRawBufferPointer, _ found: T??, _ make: () -> (T, Collection)
    ) -> T? {
        guard let found else { return nil }
        if let found { return found }
        let (value, collection) = make()
        store(key, collection)
        return value
    }

    /// Where the change count stands, for `countChanges(_:since:)`.
    var changeMark: Int { fence.changes }

    /// What ran since `mark` changed `count` elements, as Redis counts
    /// them: a collection command counts one per element added, removed or
    /// updated (`SADD s a b c` on a new key is 3), and neither the key it
    /// creates nor the emptied key it deletes (kvd's steps count each).
    func countChanges(_ count: Int, since mark: Int) {
        fence.changes = mark + count
    }

    /// After a command changed the collection at `key` in place: its
    /// watchers see the change, `event` is notified, and an emptied
    /// collection is deleted (a `del` event after it, as in Redis).
    func changedCollection(
        _ key: UnsafeRawBufferPointer, count: Int, _ type: KeyspaceEventClasses, _ event: StaticString
    ) {
        if count == 0 { remove(key) } else { changed(key) }
        notify(type, event, key)
        if count == 0 { notify(.generic, "del", key) }
    }
}

// MARK: - Argument rules

/// Redis's getRangeLongFromObjectOrReply: an integer in `range`; `message`
/// (when given) answers both a non-integer and one out of range.
func parseInteger(
    _ bytes: UnsafeRawBufferPointer, in range: ClosedRange<Int>, message: String? = nil, _ out: inout ReplyWriter
) -> Int? {
    guard let value = parseInteger(bytes) else {
        out.error(message.map { "ERR " + $0 } ?? notAnInteger)
        return nil
    }
    guard range.contains(value) else {
        out.error(
            message.map { "ERR " + $0 }
                ?? "ERR value is out of range, value must between \(range.lowerBound) and \(range.upperBound)")
        return nil
    }
    return value
}

/// Redis's getPositiveLongFromObjectOrReply: a non-negative integer.
func parsePositive(_ bytes: UnsafeRawBufferPointer, message: String, _ out: inout ReplyWriter) -> Int? {
    parseInteger(bytes, in: 0...Int.max, message: message, &out)
}

/// Redis's list range rule (LRANGE, GETRANGE): negative positions count
/// from the end; nil when the range is empty.
func clampRange(start: Int, end: Int, count: Int) -> ClosedRange<Int>? {
    var (start, end) = (start, end)
    if start < 0 { start = max(start + count, 0) }
    if end < 0 { end += count }
    if end >= count { end = count - 1 }
    guard start <= end, start < count else { return nil }
    return start...end
}

// MARK: - HSCAN and SSCAN

/// Redis's parseScanCursorOrReply: strtoul over the argument as the C
/// string Redis passes (up to a NUL), so a sign is allowed (-1 is the
/// largest cursor) and an empty cursor is 0; a leading space, bytes left
/// unread or a value past 64 bits are refused (nil). Cursors past
/// `Int.max` are clamped to it: a cursor past the slots scans on from the
/// last one down (see Keyspace.scanSlots), as one does after keys went.
func parseScanCursor(_ bytes: UnsafeRawBufferPointer) -> Int? {
    guard bytes.first.map({ $0 != 32 && !(9...13).contains($0) }) ?? true else { return nil }
    let length = bytes.firstIndex(of: 0) ?? bytes.count
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { chars -> Int? in
        for index in 0..<length { chars[index] = CChar(bitPattern: bytes[index]) }
        chars[length] = 0
        var end: UnsafeMutablePointer<CChar>?
        errno = 0
        let cursor = strtoul(chars.baseAddress!, &end, 10)
        guard end == chars.baseAddress! + length, errno != ERANGE else { return nil }
        return Int(min(cursor, UInt(Int.max)))
    }
}

/// A collection SCAN's cursor and options, read in Redis's order: the
/// cursor (parseScanCursorOrReply), then the command looks the key up (a
/// missing key answers an empty scan, whatever the options), then the
/// options (scanGenericCommand's loop).
struct ScanArguments {
    var cursor: Int
    var pattern: [UInt8]?
    var count = 10

    /// Parses the cursor, `r[2]`; nil after answering an error.
    init?(cursorOf r: Request, _ out: inout ReplyWriter) {
        guard let cursor = parseScanCursor(r.raw(2)) else {
            out.error("ERR invalid cursor")
            return nil
        }
        self.cursor = cursor
    }

    /// Parses the options, `r[3...]`; false after answering an error.
    mutating func readOptions(_ r: Request, _ out: inout ReplyWriter) -> Bool {
        var index = 3
        while index < r.count {
            guard index + 1 < r.count else {
                out.error("ERR syntax error")
                return false
            }
            if equalsIgnoringCase(r.raw(index), "count") {
                guard let parsed = parseInteger(r.raw(index + 1)) else {
                    out.error(notAnInteger)
                    return false
                }
                guard parsed >= 1 else {
                    out.error("ERR syntax error")
                    return false
                }
                count = parsed
            } else if equalsIgnoringCase(r.raw(index), "match") {
                let value = r[index + 1]
                pattern = value == [UInt8(ascii: "*")] ? nil : value
            } else {
                out.error("ERR syntax error")
                return false
            }
            index += 2
        }
        return true
    }

    /// One step over `total` positions: every position at once when
    /// `whole` (Redis answers a listpack or an intset in one reply, cursor
    /// 0), else up to `count` positions below the cursor, from the top
    /// down (see MemberTable). Returns the next cursor and the positions.
    func step(total: Int, whole: Bool) -> (next: Int, positions: [Int]) {
        if whole { return (0, Array(0..<total)) }
        var position = cursor == 0 ? total : min(cursor, total)
        var positions: [Int] = []
        while position > 0 && positions.count < count {
            position -= 1
            positions.append(position)
        }
        return (position, positions)
    }

    /// True when `member` passes MATCH.
    func matches(_ member: [UInt8]) -> Bool {
        pattern.map { globMatch($0, member) } ?? true
    }

    /// True when `member` passes MATCH.
    func matches(_ member: UnsafeRawBufferPointer) -> Bool {
        guard let pattern else { return true }
        return pattern.withUnsafeBufferPointer { globMatch($0, member.assumingMemoryBound(to: UInt8.self)) }
    }
}

extension ReplyWriter {
    /// An empty SCAN reply: cursor 0, no elements (an absent key).
    mutating func emptyScan() {
        arrayHeader(2)
        bulk([UInt8(ascii: "0")])
        arrayHeader(0)
    }

    /// An empty set: `*0`, `~0` in RESP3.
    mutating func emptySet() { setHeader(0) }

    /// An empty map: `*0`, `%0` in RESP3.
    mutating func emptyMap() { mapHeader(0) }
}
