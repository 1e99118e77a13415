// SortCommand.swift: SORT and SORT_RO, as Redis 7.0's sort.c answers them.
// The elements of a list, set or sorted set, ordered as numbers (each
// parsed as strtod parses it) or as bytes (ALPHA), by themselves or by the
// values other keys hold (BY pattern: a `*` in the pattern replaced by the
// element names a string key, or with `->field` a hash field), then a LIMIT
// window of them, or what GET patterns find for each, answered or stored
// as a list (STORE, SORT only).
//
// Redis's own rules that decide what a client sees are kept: the options
// are parsed before the key is looked up; a BY pattern with no `*` means
// no sorting (a list or sorted set keeps its order, DESC reversing it); a
// set is sorted as bytes anyway when it is stored or sorted by a script,
// so that a replica and a replay see one order; equal numbers are ordered
// by the elements' bytes; an element whose BY key is missing sorts as 0
// (or first, with ALPHA); a value that is not a number fails the whole
// command, stored or not. An empty result deletes the STORE key.
import Glibc

let sortCommands: [Command] = [
    Command("sort", arity: -2, keys: .one) { $0.sort($1, $2, readOnly: false, &$3) },
    Command("sort_ro", arity: -2, keys: .one) { $0.sort($1, $2, readOnly: true, &$3) },
]

/// SORT's options, as parsed from its arguments.
private struct SortOptions {
    var descending = false
    var alpha = false
    var limitStart = 0
    var limitCount = -1
    var by: [UInt8]?
    var gets: [[UInt8]] = []
    var store: [UInt8]?
    /// A BY pattern without `*`: the elements keep their order.
    var dontSort = false

    /// Nil after answering a syntax error.
    init?(_ r: Request, readOnly: Bool, _ out: inout ReplyWriter) {
        var index = 2
        while index < r.count {
            let left = r.count - index - 1
            let word = r.raw(index)
            if equalsIgnoringCase(word, "asc") {
                descending = false
            } else if equalsIgnoringCase(word, "desc") {
                descending = true
            } else if equalsIgnoringCase(word, "alpha") {
                alpha = true
            } else if equalsIgnoringCase(word, "limit") && left >= 2 {
                guard let start = parseInteger(r.raw(index + 1)), let count = parseInteger(r.raw(index + 2)) else {
                    out.error(notAnInteger)
                    return nil
                }
                (limitStart, limitCount) = (start, count)
                index += 2
            } else if !readOnly && equalsIgnoringCase(word, "store") && left >= 1 {
                store = r[index + 1]
                index += 1
            } else if equalsIgnoringCase(word, "by") && left >= 1 {
                let pattern = r[index + 1]
                by = pattern
                // Redis looks for the `*` with strchr: not past a NUL. Once
                // a constant BY turns sorting off, a later BY does not turn
                // it back on.
                if !cString(pattern).contains(UInt8(ascii: "*")) { dontSort = true }
                index += 1
            } else if equalsIgnoringCase(word, "get") && left >= 1 {
                gets.append(r[index + 1])
                index += 1
            } else {
                out.error("ERR syntax error")
                return nil
            }
            index += 1
        }
    }
}

/// One element to sort, with what it sorts by.
private struct SortItem {
    let element: [UInt8]
    var score = 0.0
    /// ALPHA with BY: the value found by the pattern (nil: none, sorts first).
    var key: [UInt8]?
}

extension Dispatcher {
    fileprivate func sort(_ session: ClientSession, _ r: Request, readOnly: Bool, _ out: inout ReplyWriter) {
        guard var options = SortOptions(r, readOnly: readOnly, &out) else { return }
        let keyspace = databases[session.database]
        guard let found = keyspace.sortable(r.raw(1), &out) else { return }
        // A set has no order of its own: stored, or sorted inside a script,
        // it is sorted as bytes, so that every replay sees one order.
        if options.dontSort, case .set = found, options.store != nil || scripts.run != nil {
            (options.dontSort, options.alpha, options.by) = (false, true, nil)
        }
        var items = found.elements(keepingOrder: options.dontSort, descending: options.descending)
            .map { SortItem(element: $0) }
        // Redis's LIMIT arithmetic, to the letter: a start past the end
        // leaves an empty window.
        let count = items.count
        var start = min(max(options.limitStart, 0), count)
        let limit = min(max(options.limitCount, -1), count)
        var end = limit < 0 ? count - 1 : start + limit - 1
        if start >= count { (start, end) = (count - 1, count - 2) }
        if end >= count { end = count - 1 }
        if !options.dontSort {
            var notANumber = false
            for index in items.indices {
                let value: [UInt8]
                if let by = options.by {
                    guard let found = keyspace.lookup(pattern: by, for: items[index].element) else { continue }
                    value = found
                } else {
                    value = items[index].element
                }
                if options.alpha {
                    if options.by != nil { items[index].key = value }
                } else if let score = sortScore(value) {
                    items[index].score = score
                } else {
                    notANumber = true
                }
            }
            if notANumber { return out.error("ERR One or more scores can't be converted into double") }
            let compare = sortOrder(options, binary: options.store != nil)
            if options.by != nil && (start != 0 || end != count - 1) {
                // With BY and a narrowing LIMIT Redis sorts only the window
                // (pqsort): the same swaps leave elements equal under ALPHA
                // (or without a BY value) in the same order.
                partialQuickSort(&items, keeping: start, through: end, by: compare)
            } else {
                // Stable, as glibc's qsort (a merge sort) is for Redis's
                // full sort; numbers never tie (bytes break ties).
                items.sort { compare($0, $1) < 0 }
            }
        }
        let window = start <= end ? items[start...end] : []
        guard let store = options.store else {
            out.arrayHeader(options.gets.isEmpty ? window.count : window.count * options.gets.count)
            for item in window {
                if options.gets.isEmpty { out.bulk(item.element) }
                for pattern in options.gets {
                    if let value = keyspace.lookup(pattern: pattern, for: item.element) {
                        out.bulk(value)
                    } else {
                        out.null()
                    }
                }
            }
            return
        }
        let list = ListValue()
        for item in window {
            if options.gets.isEmpty { list.pushBack(item.element) }
            for pattern in options.gets { list.pushBack(keyspace.lookup(pattern: pattern, for: item.element) ?? []) }
        }
        store.withUnsafeBytes { key in
            if list.count > 0 {
                // Redis counts one change per element stored.
                let mark = keyspace.changeMark
                keyspace.store(key, .list(list))
                keyspace.countChanges(list.count, since: mark)
                keyspace.notify(.list, "sortstore", key)
            } else if keyspace.remove(key) {
                keyspace.notify(.generic, "del", key)
            }
        }
        out.integer(list.count)
    }
}

/// Redis's sortCompare for `options`: numbers, ties broken by the
/// elements' bytes; or ALPHA, by the BY values (missing ones first) or the
/// elements. `binary`: whole byte strings compared (STORE); otherwise as
/// strcoll in the C locale compares them, up to a NUL.
private func sortOrder(_ options: SortOptions, binary: Bool) -> (SortItem, SortItem) -> Int {
    func bytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in binary ? SkipList.compare(a, b) : SkipList.compare(cString(a), cString(b)) }
        }
    }
    let direction = options.descending ? -1 : 1
    if !options.alpha {
        return { a, b in
            let order: Int
            if a.score > b.score {
                order = 1
            } else if a.score < b.score {
                order = -1
            } else {
                order = SkipList.compare(a.element, b.element)
            }
            return direction * order
        }
    }
    if options.by != nil {
        return { a, b in
            switch (a.key, b.key) {
            case (nil, nil): 0
            case (nil, _): -direction
            case (_, nil): direction
            case (let x?, let y?): direction * bytes(x, y)
            }
        }
    }
    return { a, b in direction * bytes(a.element, b.element) }
}

/// The bytes before the first NUL: what a C string function sees.
private func cString(_ bytes: [UInt8]) -> [UInt8] {
    guard let nul = bytes.firstIndex(of: 0) else { return bytes }
    return Array(bytes[..<nul])
}

/// The bytes before the first NUL, in place.
private func cString(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.firstIndex(of: 0) ?? bytes.count)])
}

/// SORT's number: strtod over the value up to its first NUL, which must
/// take all of it (leading spaces, hexadecimal and "inf" included, an empty
/// value 0); nil for anything else, an overflow or NaN. Looser than a
/// sorted set's score (`parseDouble`), as Redis's SORT is.
private func sortScore(_ value: [UInt8]) -> Double? {
    let parsed = value.withUnsafeBytes { strtod(cString($0)) }
    guard parsed.whole, !parsed.outOfRange, !parsed.value.isNaN else { return nil }
    return parsed.value
}

/// What SORT reads its elements from.
private enum Sortable {
    case list(ListValue)
    case set(SetValue)
    case sortedSet(SortedSetValue)
    case missing

    /// The elements: a list's and a sorted set's in their order (reversed
    /// for `descending` when they keep it), a set's in its own.
    func elements(keepingOrder: Bool, descending: Bool) -> [[UInt8]] {
        switch self {
        case .missing:
            return []
        case .set(let set):
            return (0..<set.count).map { set[$0] }
        case .list(let list):
            var elements: [[UInt8]] = []
            elements.reserveCapacity(list.count)
            list.scan(from: 0) { _, element in
                elements.append(Array(element))
                return true
            }
            return keepingOrder && descending ? elements.reversed() : elements
        case .sortedSet(let sortedSet):
            guard sortedSet.count > 0 else { return [] }
            let reverse = keepingOrder && descending
            return sortedSet.elements(ranks: 0...(sortedSet.count - 1), reverse: reverse).map(\.member)
        }
    }
}

extension Keyspace {
    /// The list, set or sorted set at `key` (`.missing` when absent); nil
    /// after answering WRONGTYPE for a string or a hash.
    fileprivate func sortable(_ key: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> Sortable? {
        guard let entry = lookup(key, now: now, use: .read) else { return .missing }
        switch entry.collection {
        case .list(let list): return .list(list)
        case .set(let set): return .set(set)
        case .sortedSet(let sortedSet): return .sortedSet(sortedSet)
        default:
            out.error(wrongTypeError)
            return nil
        }
    }

    /// Redis's lookupKeyByPattern: `#` is the element itself; otherwise the
    /// first `*` is replaced by the element, and the key so named read as
    /// a string, or with `->field` after the `*` as a hash's field. Nil
    /// when the pattern has no `*`, the key is missing or of another type,
    /// or the field is missing.
    fileprivate func lookup(pattern: [UInt8], for element: [UInt8]) -> [UInt8]? {
        let text = cString(pattern)
        if text == [UInt8(ascii: "#")] { return element }
        guard let star = text.firstIndex(of: UInt8(ascii: "*")) else { return nil }
        var field: [UInt8]?
        var keyEnd = pattern.count
        var arrow = star + 1
        // strstr, as Redis finds the arrow: not past a NUL either.
        while arrow + 1 < text.count {
            if text[arrow] == UInt8(ascii: "-") && text[arrow + 1] == UInt8(ascii: ">") {
                if arrow + 2 < text.count {
                    field = Array(pattern[(arrow + 2)...])
                    keyEnd = arrow
                }
                break
            }
            arrow += 1
        }
        let key = Array(pattern[..<star]) + element + Array(pattern[(star + 1)..<keyEnd])
        guard let entry = key.withUnsafeBytes({ lookup($0, now: now, use: .read) }) else { return nil }
        guard let field else { return entry.collection == nil ? entry.value : nil }
        guard case .hash(let hash) = entry.collection else { return nil }
        return field.withUnsafeBytes { hash.value(of: $0).map { Array($0) } }
    }
}
