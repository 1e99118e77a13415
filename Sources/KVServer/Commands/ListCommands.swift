// ListCommands.swift: Redis 7.0's list commands that never block (t_list.c):
// LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP (with a count), LLEN, LRANGE,
// LINDEX, LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH and LMPOP,
// with its argument order, wording and reply shapes. The blocking forms
// are BlockingCommands.swift; they share `popFor` and `move` from here.
//
// A push never has to wake anybody by itself: a client blocks only on a
// key that holds no list, so a list that somebody waits for is always a
// new one, and the keyspace marks the key ready when the list is stored
// (Keyspace.store, as Redis's dbAdd does).

/// Which end of a list.
enum ListEnd {
    case head, tail

    /// LEFT or RIGHT, in any case; nil otherwise.
    init?(_ bytes: UnsafeRawBufferPointer) {
        if equalsIgnoringCase(bytes, "left") {
            self = .head
        } else if equalsIgnoringCase(bytes, "right") {
            self = .tail
        } else {
            return nil
        }
    }
}

let listCommands: [Command] = [
    Command("lpush", arity: -3, keys: .one) { ks, r, out in push(ks, r, .head, onlyIfExists: false, &out) },
    Command("rpush", arity: -3, keys: .one) { ks, r, out in push(ks, r, .tail, onlyIfExists: false, &out) },
    Command("lpushx", arity: -3, keys: .one) { ks, r, out in push(ks, r, .head, onlyIfExists: true, &out) },
    Command("rpushx", arity: -3, keys: .one) { ks, r, out in push(ks, r, .tail, onlyIfExists: true, &out) },
    Command("lpop", arity: -2, keys: .one) { ks, r, out in pop(ks, r, .head, "lpop", &out) },
    Command("rpop", arity: -2, keys: .one) { ks, r, out in pop(ks, r, .tail, "rpop", &out) },
    Command("llen", arity: 2, keys: .one) { ks, r, out in
        guard let found = ks.lookupList(r.raw(1), &out) else { return }
        out.integer(found?.count ?? 0)
    },
    Command("lrange", arity: 4, keys: .one, lrange),
    Command("lindex", arity: 3, keys: .one, lindex),
    Command("lset", arity: 4, keys: .one, lset),
    Command("linsert", arity: 5, keys: .one, linsert),
    Command("lrem", arity: 4, keys: .one, lrem),
    Command("ltrim", arity: 4, keys: .one, ltrim),
    Command("lpos", arity: -3, keys: .one, lpos),
    Command("lmove", arity: 5, keys: .all) { ks, r, out in
        guard let from = ListEnd(r.raw(3)), let to = ListEnd(r.raw(4)) else { return out.error("ERR syntax error") }
        move(ks, r.raw(1), r.raw(2), from, to, &out)
    },
    Command("rpoplpush", arity: 3, keys: .all) { ks, r, out in move(ks, r.raw(1), r.raw(2), .tail, .head, &out) },
    Command("lmpop", arity: -4, keys: .none) { ks, r, out in
        guard let arguments = MultiPopArguments(r, keysAt: 1, &out) else { return }
        for index in arguments.keys {
            guard let found = ks.lookupList(r.raw(index), &out) else { return }
            if found != nil {
                return popFor(ks, r.raw(index), arguments.end, count: arguments.count, withKey: true, &out)
            }
        }
        out.nullArray()
    },
]

private func push(_ ks: Keyspace, _ r: Request, _ end: ListEnd, onlyIfExists: Bool, _ out: inout ReplyWriter) {
    let mark = ks.changeMark
    let list: ListValue
    if onlyIfExists {
        guard let found = ks.lookupList(r.raw(1), &out) else { return }
        guard let found else { return out.integer(0) }
        list = found
    } else {
        guard let found = ks.listForWriting(r.raw(1), &out) else { return }
        list = found
    }
    for index in 2..<r.count {
        if end == .head { list.pushFront(r.raw(index)) } else { list.pushBack(r.raw(index)) }
    }
    ks.changed(r.raw(1))
    ks.notify(.list, end == .head ? "lpush" : "rpush", r.raw(1))
    ks.countChanges(r.count - 2, since: mark)
    out.integer(list.count)
}

/// LPOP and RPOP: one element as a bulk, or with a count an array.
private func pop(_ ks: Keyspace, _ r: Request, _ end: ListEnd, _ name: String, _ out: inout ReplyWriter) {
    guard r.count <= 3 else { return out.error("ERR wrong number of arguments for '\(name)' command") }
    var count: Int?
    if r.count == 3 {
        guard let parsed = parsePositive(r.raw(2), message: "value is out of range, must be positive", &out) else {
            return
        }
        count = parsed
    }
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard found != nil else { return count == nil ? out.null() : out.nullArray() }
    if count == 0 { return out.arrayHeader(0) }
    popFor(ks, r.raw(1), end, count: count, withKey: false, &out)
}

/// Pops from the list at `key` (present and not empty) and answers: one
/// element as a bulk when `count` is nil, else up to `count` as an array;
/// `withKey` puts the key first ([key, [elements]], LMPOP's shape). The
/// key goes when the list empties.
func popFor(
    _ ks: Keyspace, _ key: UnsafeRawBufferPointer, _ end: ListEnd, count: Int?, withKey: Bool,
    _ out: inout ReplyWriter
) {
    guard case .list(let list) = ks.lookup(key, now: ks.now)?.collection else { return out.nullArray() }
    let mark = ks.changeMark
    let before = list.count
    if withKey {
        out.arrayHeader(2)
        out.bulk(key)
    }
    if let count {
        let taken = min(count, list.count)
        out.arrayHeader(taken)
        for _ in 0..<taken { pop(list, end, &out) }
    } else {
        pop(list, end, &out)
    }
    ks.changedCollection(key, count: list.count, .list, end == .head ? "lpop" : "rpop")
    ks.countChanges(before - list.count, since: mark)
}

/// Pops one element from `end` of `list` (not empty) into a bulk reply,
/// straight from the list's node (no copy of its own).
private func pop(_ list: ListValue, _ end: ListEnd, _ out: inout ReplyWriter) {
    if end == .head { list.popFront { out.bulk($0) } } else { list.popBack { out.bulk($0) } }
}

/// LMOVE and RPOPLPUSH (and BLMOVE with the source present): pops from
/// `source`, pushes onto `destination` (created when absent) and answers
/// the element; null when the source is absent.
func move(
    _ ks: Keyspace, _ source: UnsafeRawBufferPointer, _ destination: UnsafeRawBufferPointer, _ from: ListEnd,
    _ to: ListEnd, _ out: inout ReplyWriter
) {
    guard let found = ks.lookupList(source, &out) else { return }
    guard let list = found else { return out.null() }
    guard ks.lookupList(destination, &out) != nil else { return }
    let mark = ks.changeMark
    let element = (from == .head ? list.popFront() : list.popBack())!
    // Pushed before the source may go: with the same key for both, the
    // element goes back into the same list.
    guard let target = ks.listForWriting(destination, &out) else { return }
    if to == .head { target.pushFront(element) } else { target.pushBack(element) }
    ks.changed(destination)
    ks.notify(.list, to == .head ? "lpush" : "rpush", destination)
    ks.changedCollection(source, count: list.count, .list, from == .head ? "lpop" : "rpop")
    ks.countChanges(1, since: mark)
    out.bulk(element)
}

/// LMPOP's and BLMPOP's arguments after the name (and BLMPOP's timeout):
/// numkeys, the keys, LEFT|RIGHT, [COUNT count], checked in Redis's order.
struct MultiPopArguments {
    /// The keys' argument positions.
    var keys: Range<Int>
    var end: ListEnd
    var count = 1

    /// `keysAt` is numkeys' position, `ends` the words for the head and
    /// the tail (ZMPOP's MIN and MAX); nil after answering an error.
    init?(
        _ r: Request, keysAt start: Int, ends: (StaticString, StaticString) = ("left", "right"),
        _ out: inout ReplyWriter
    ) {
        guard
            let keyCount = parseInteger(
                r.raw(start), in: 1...Int.max, message: "numkeys should be greater than 0", &out)
        else { return nil }
        let whereIndex = start + 1 + min(keyCount, r.count)  // min: a huge numkeys must not overflow
        guard whereIndex < r.count else {
            out.error("ERR syntax error")
            return nil
        }
        if equalsIgnoringCase(r.raw(whereIndex), ends.0) {
            end = .head
        } else if equalsIgnoringCase(r.raw(whereIndex), ends.1) {
            end = .tail
        } else {
            out.error("ERR syntax error")
            return nil
        }
        self.keys = (start + 1)..<whereIndex
        var index = whereIndex + 1
        var counted = false
        while index < r.count {
            guard !counted, equalsIgnoringCase(r.raw(index), "count"), index + 1 < r.count else {
                out.error("ERR syntax error")
                return nil
            }
            guard
                let parsed = parseInteger(
                    r.raw(index + 1), in: 1...Int.max, message: "count should be greater than 0", &out)
            else { return nil }
            count = parsed
            counted = true
            index += 2
        }
    }
}

private func lrange(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let start = parseInteger(r.raw(2)), let end = parseInteger(r.raw(3)) else { return out.error(notAnInteger) }
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found, let range = clampRange(start: start, end: end, count: list.count) else {
        return out.arrayHeader(0)
    }
    out.arrayHeader(range.count)
    list.scan(from: range.lowerBound) { index, element in
        guard index <= range.upperBound, !out.passedLimit(at: index - range.lowerBound) else { return false }
        out.bulk(element)
        return true
    }
}

private func lindex(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found else { return out.null() }
    guard var index = parseInteger(r.raw(2)) else { return out.error(notAnInteger) }
    if index < 0 { index += list.count }
    guard index >= 0 && index < list.count else { return out.null() }
    list.withElement(at: index) { out.bulk($0) }
}

private func lset(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found else { return out.error("ERR no such key") }
    guard var index = parseInteger(r.raw(2)) else { return out.error(notAnInteger) }
    if index < 0 { index += list.count }
    guard index >= 0 && index < list.count else { return out.error("ERR index out of range") }
    list.replace(at: index, with: r.raw(3))
    ks.changed(r.raw(1))
    ks.notify(.list, "lset", r.raw(1))
    out.ok()
}

private func linsert(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let after: Bool
    if equalsIgnoringCase(r.raw(2), "after") {
        after = true
    } else if equalsIgnoringCase(r.raw(2), "before") {
        after = false
    } else {
        return out.error("ERR syntax error")
    }
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found else { return out.integer(0) }
    let pivot = r.raw(3)
    var pivotIndex: Int?
    list.scan(from: 0) { index, element in
        if element.elementsEqual(pivot) { pivotIndex = index }
        return pivotIndex == nil
    }
    guard let index = pivotIndex else { return out.integer(-1) }
    list.insert(r.raw(4), at: after ? index + 1 : index)
    ks.changed(r.raw(1))
    ks.notify(.list, "linsert", r.raw(1))
    out.integer(list.count)
}

private func lrem(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let count = parseInteger(r.raw(2)) else { return out.error(notAnInteger) }
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found else { return out.integer(0) }
    let element = r.raw(3)
    let mark = ks.changeMark
    // Int.min's magnitude does not fit an Int: it is as good as no limit.
    let removed = list.removeAll(limit: Int(clamping: count.magnitude), fromBack: count < 0) {
        $0.elementsEqual(element)
    }
    if removed > 0 { ks.changedCollection(r.raw(1), count: list.count, .list, "lrem") }
    ks.countChanges(removed, since: mark)
    out.integer(removed)
}

private func ltrim(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let start = parseInteger(r.raw(2)), let end = parseInteger(r.raw(3)) else { return out.error(notAnInteger) }
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found else { return out.ok() }
    let mark = ks.changeMark
    let before = list.count
    if let range = clampRange(start: start, end: end, count: list.count) {
        if range.count != list.count { list.keep(range.lowerBound..<(range.upperBound + 1)) }
    } else {
        list.keep(0..<0)
    }
    ks.changedCollection(r.raw(1), count: list.count, .list, "ltrim")
    ks.countChanges(before - list.count, since: mark)
    out.ok()
}

/// LPOS key element [RANK rank] [COUNT num] [MAXLEN len].
private func lpos(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    var rank = 1
    var count: Int?
    var maxLength = 0
    var index = 3
    while index < r.count {
        let more = index + 1 < r.count
        if equalsIgnoringCase(r.raw(index), "rank") && more {
            guard let parsed = parseInteger(r.raw(index + 1)) else { return out.error(notAnInteger) }
            guard parsed != 0 else {
                return out.error(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
                )
            }
            // Redis 7.0 negates the rank; -2^63 stays negative, and every
            // match then passes its `matches >= rank` test: the first match
            // from the tail, as RANK -1 finds.
            rank = parsed == Int.min ? -1 : parsed
        } else if equalsIgnoringCase(r.raw(index), "count") && more {
            guard let parsed = parsePositive(r.raw(index + 1), message: "COUNT can't be negative", &out) else { return }
            count = parsed
        } else if equalsIgnoringCase(r.raw(index), "maxlen") && more {
            guard let parsed = parsePositive(r.raw(index + 1), message: "MAXLEN can't be negative", &out) else {
                return
            }
            maxLength = parsed
        } else {
            return out.error("ERR syntax error")
        }
        index += 2
    }
    guard let found = ks.lookupList(r.raw(1), &out) else { return }
    guard let list = found else { return count == nil ? out.null() : out.arrayHeader(0) }
    let element = r.raw(2)
    let fromTail = rank < 0
    var skip = Int(rank.magnitude) - 1
    var matches: [Int] = []
    var compared = 0
    list.scan(from: fromTail ? list.count - 1 : 0, backward: fromTail) { position, candidate in
        guard maxLength == 0 || compared < maxLength else { return false }
        compared += 1
        if candidate.elementsEqual(element) {
            if skip > 0 {
                skip -= 1
            } else {
                matches.append(position)
                if count == nil || (count! > 0 && matches.count >= count!) { return false }
            }
        }
        return true
    }
    guard count != nil else { return matches.first.map { out.integer($0) } ?? out.null() }
    out.arrayHeader(matches.count)
    for match in matches { out.integer(match) }
}
