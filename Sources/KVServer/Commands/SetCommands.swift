// SetCommands.swift: Redis 7.0's set commands (t_set.c): SADD, SREM,
// SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER,
// SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE and
// SSCAN, with its argument order, wording and reply shapes (sets in RESP3).

let setCommands: [Command] = [
    Command("sadd", arity: -3, keys: .one) { ks, r, out in
        let mark = ks.changeMark
        guard let set = ks.setForWriting(r.raw(1), &out) else { return }
        var added = 0
        for index in 2..<r.count where set.add(r.raw(index), ks.limits) { added += 1 }
        if added > 0 {
            ks.changed(r.raw(1))
            ks.notify(.set, "sadd", r.raw(1))
        }
        ks.countChanges(added, since: mark)
        out.integer(added)
    },
    Command("srem", arity: -3, keys: .one) { ks, r, out in
        let mark = ks.changeMark
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        guard let set = found else { return out.integer(0) }
        var removed = 0
        for index in 2..<r.count where set.remove(r.raw(index)) { removed += 1 }
        if removed > 0 { ks.changedCollection(r.raw(1), count: set.count, .set, "srem") }
        ks.countChanges(removed, since: mark)
        out.integer(removed)
    },
    Command("smembers", arity: 2, keys: .one) { ks, r, out in
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        guard let set = found else { return out.emptySet() }
        out.setHeader(set.count)
        for position in 0..<set.count {
            if out.passedLimit(at: position) { return }
            out.bulk(set[position])
        }
    },
    Command("sismember", arity: 3, keys: .one) { ks, r, out in
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        out.integer(found?.contains(r.raw(2)) == true ? 1 : 0)
    },
    Command("smismember", arity: -3, keys: .one) { ks, r, out in
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        out.arrayHeader(r.count - 2)
        for index in 2..<r.count { out.integer(found?.contains(r.raw(index)) == true ? 1 : 0) }
    },
    Command("scard", arity: 2, keys: .one) { ks, r, out in
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        out.integer(found?.count ?? 0)
    },
    Command("spop", arity: -2, keys: .one, spop),
    Command("srandmember", arity: -2, keys: .one, srandmember),
    Command("smove", arity: 4, keys: .all, smove),
    Command("sinter", arity: -2, keys: .all) { ks, r, out in
        combine(ks, Array(1..<r.count), r, .intersection, into: nil, &out)
    },
    Command("sinterstore", arity: -3, keys: .all) { ks, r, out in
        combine(ks, Array(2..<r.count), r, .intersection, into: r.raw(1), &out)
    },
    Command("sintercard", arity: -3, keys: .none, sintercard),
    Command("sunion", arity: -2, keys: .all) { ks, r, out in
        combine(ks, Array(1..<r.count), r, .union, into: nil, &out)
    },
    Command("sunionstore", arity: -3, keys: .all) { ks, r, out in
        combine(ks, Array(2..<r.count), r, .union, into: r.raw(1), &out)
    },
    Command("sdiff", arity: -2, keys: .all) { ks, r, out in
        combine(ks, Array(1..<r.count), r, .difference, into: nil, &out)
    },
    Command("sdiffstore", arity: -3, keys: .all) { ks, r, out in
        combine(ks, Array(2..<r.count), r, .difference, into: r.raw(1), &out)
    },
    Command("sscan", arity: -3, keys: .one, sscan),
]

private func spop(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count <= 3 else { return out.error("ERR syntax error") }
    guard r.count == 3 else {
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        guard let set = found else { return out.null() }
        let member = set.remove(at: Int.random(in: 0..<set.count, using: &ks.random))
        out.bulk(member)
        // The random pick is logged as what it removed (Redis's SREM).
        ks.propagate([Array("SREM".utf8), r[1], member])
        return ks.changedCollection(r.raw(1), count: set.count, .set, "spop")
    }
    guard let requested = parsePositive(r.raw(2), message: "value is out of range, must be positive", &out) else {
        return
    }
    guard let found = ks.lookupSet(r.raw(1), &out) else { return }
    guard let set = found, requested > 0 else { return out.emptySet() }
    let mark = ks.changeMark
    if requested >= set.count {
        // The whole set, in its order, and the key goes. Redis answers it
        // through SUNION's code, whose lookup of the key is a read (a hit).
        _ = ks.lookup(r.raw(1), now: ks.now, use: .read)
        out.setHeader(set.count)
        for position in 0..<set.count { out.bulk(set[position]) }
        ks.propagate([Array("DEL".utf8), r[1]])
        ks.changedCollection(r.raw(1), count: 0, .set, "spop")
        return ks.countChanges(set.count, since: mark)
    }
    out.setHeader(requested)
    var removed = [Array("SREM".utf8), r[1]]
    for _ in 0..<requested {
        let member = set.remove(at: Int.random(in: 0..<set.count, using: &ks.random))
        out.bulk(member)
        if ks.feed.isOn { removed.append(member) }
    }
    ks.propagate(removed)
    ks.changedCollection(r.raw(1), count: set.count, .set, "spop")
    ks.countChanges(requested, since: mark)
}

private func srandmember(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count <= 3 else { return out.error("ERR syntax error") }
    guard r.count == 3 else {
        guard let found = ks.lookupSet(r.raw(1), &out) else { return }
        guard let set = found else { return out.null() }
        return out.bulk(set[Int.random(in: 0..<set.count, using: &ks.random)])
    }
    guard let requested = parseInteger(r.raw(2), in: -Int.max...Int.max, &out) else { return }
    guard let found = ks.lookupSet(r.raw(1), &out) else { return }
    guard let set = found, requested != 0 else { return out.arrayHeader(0) }
    out.arrayHeader(requested > 0 ? min(requested, set.count) : Int(requested.magnitude))
    forEachRandomPosition(requested, of: set.count, using: &ks.random, &out) { position, out in out.bulk(set[position])
    }
}

private func smove(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    let source = ks.lookup(r.raw(1), now: now)
    let destination = ks.lookup(r.raw(2), now: now)
    guard let source else { return out.integer(0) }
    guard case .set(let from) = source.collection else { return out.error(wrongTypeError) }
    if let destination, case .set = destination.collection {
    } else if destination != nil {
        return out.error(wrongTypeError)
    }
    if case .set(let to) = destination?.collection, to === from {
        return out.integer(from.contains(r.raw(3)) ? 1 : 0)
    }
    guard from.remove(r.raw(3)) else { return out.integer(0) }
    let mark = ks.changeMark
    ks.changedCollection(r.raw(1), count: from.count, .set, "srem")
    guard let to = ks.setForWriting(r.raw(2), &out) else { return }
    // The destination changes (for WATCH) only when the member is new to it.
    let added = to.add(r.raw(3), ks.limits)
    if added {
        ks.changed(r.raw(2))
        ks.notify(.set, "sadd", r.raw(2))
    }
    ks.countChanges(added ? 2 : 1, since: mark)
    out.integer(1)
}

/// What SINTER, SUNION and SDIFF compute.
private enum SetOperation {
    case intersection, union, difference
}

/// SINTER, SUNION, SDIFF and their STORE forms, as Redis's
/// sinterGenericCommand and sunionDiffGenericCommand: every key's type is
/// checked first (an absent key is an empty set); the result is answered
/// as a set, or stored at `destination` (deleted when the result is
/// empty) and its size answered.
private func combine(
    _ ks: Keyspace, _ keys: [Int], _ r: Request, _ operation: SetOperation, into destination: UnsafeRawBufferPointer?,
    _ out: inout ReplyWriter
) {
    var sets: [SetValue?] = []
    for index in keys {
        // A read, STORE or not (Redis's sinterGenericCommand and sunionDiffGenericCommand).
        guard let found = ks.lookupSet(r.raw(index), use: .read, &out) else { return }
        sets.append(found)
    }
    // SINTER answers its members as it finds them, in the smallest set's
    // order, as Redis does: no set of its own (SUNION and SDIFF reply from
    // the set they build, whose order an intset may change, as in Redis).
    var found: [[UInt8]] = []
    let result = SetValue()
    func keep(_ member: [UInt8]) {
        if destination == nil && operation == .intersection {
            found.append(member)
        } else {
            result.add(member, ks.limits)
        }
    }
    switch operation {
    case .intersection:
        if !sets.contains(where: { $0 == nil }) {
            let present = sets.map { $0! }.sorted { $0.count < $1.count }
            let smallest = present[0]
            for position in 0..<smallest.count {
                let member = smallest[position]
                if present.dropFirst().allSatisfy({ $0.contains(member) }) { keep(member) }
            }
        }
    case .union:
        for set in sets.compactMap({ $0 }) {
            for position in 0..<set.count { keep(set[position]) }
        }
    case .difference:
        if let first = sets[0] {
            let others = sets.dropFirst().compactMap { $0 }
            for position in 0..<first.count where !others.contains(where: { $0.contains(first[position]) }) {
                keep(first[position])
            }
        }
    }
    guard let destination else {
        if operation == .intersection {
            out.setHeader(found.count)
            for member in found { out.bulk(member) }
            return
        }
        out.setHeader(result.count)
        for position in 0..<result.count { out.bulk(result[position]) }
        return
    }
    if result.count == 0 {
        if ks.remove(destination) { ks.notify(.generic, "del", destination) }
    } else {
        ks.store(destination, .set(result))
        switch operation {
        case .intersection: ks.notify(.set, "sinterstore", destination)
        case .union: ks.notify(.set, "sunionstore", destination)
        case .difference: ks.notify(.set, "sdiffstore", destination)
        }
    }
    out.integer(result.count)
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
private func sintercard(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let keyCount = parseInteger(r.raw(1), in: 1...Int.max, message: "numkeys should be greater than 0", &out)
    else { return }
    guard keyCount <= r.count - 2 else { return out.error("ERR Number of keys can't be greater than number of args") }
    var limit = 0
    var index = 2 + keyCount
    while index < r.count {
        guard equalsIgnoringCase(r.raw(index), "limit"), index + 1 < r.count else {
            return out.error("ERR syntax error")
        }
        guard let parsed = parsePositive(r.raw(index + 1), message: "LIMIT can't be negative", &out) else { return }
        limit = parsed
        index += 2
    }
    var sets: [SetValue] = []
    var empty = false
    for index in 2..<(2 + keyCount) {
        guard let found = ks.lookupSet(r.raw(index), &out) else { return }
        if let found { sets.append(found) } else { empty = true }
    }
    guard !empty else { return out.integer(0) }
    sets.sort { $0.count < $1.count }
    var count = 0
    for position in 0..<sets[0].count {
        let member = sets[0][position]
        if sets.dropFirst().allSatisfy({ $0.contains(member) }) {
            count += 1
            if limit > 0 && count >= limit { break }
        }
    }
    out.integer(count)
}

private func sscan(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard var scan = ScanArguments(cursorOf: r, &out) else { return }
    guard let found = ks.lookupSet(r.raw(1), &out) else { return }
    guard let set = found else { return out.emptyScan() }
    guard scan.readOptions(r, &out) else { return }
    let (next, positions) = scan.step(total: set.count, whole: set.isIntset)
    let members = positions.map { set[$0] }.filter { scan.matches($0) }
    out.arrayHeader(2)
    out.bulk(decimalBytes(next))
    out.arrayHeader(members.count)
    for member in members { out.bulk(member) }
}
