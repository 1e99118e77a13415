// HashCommands.swift: Redis 7.0's hash commands (t_hash.c): HSET, HMSET,
// HSETNX, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HEXISTS, HLEN,
// HSTRLEN, HINCRBY, HINCRBYFLOAT, HRANDFIELD and HSCAN, with its argument
// order, wording and reply shapes (HGETALL is a map in RESP3).

let hashCommands: [Command] = [
    Command("hset", arity: -4, keys: .one) { ks, r, out in hset(ks, r, "hset", &out) },
    Command("hmset", arity: -4, keys: .one) { ks, r, out in hset(ks, r, "hmset", &out) },
    Command("hsetnx", arity: 4, keys: .one, hsetnx),
    Command("hget", arity: 3, keys: .one) { ks, r, out in
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        if let value = found?.value(of: r.raw(2)) { out.bulk(value) } else { out.null() }
    },
    Command("hmget", arity: -3, keys: .one) { ks, r, out in
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        out.arrayHeader(r.count - 2)
        for index in 2..<r.count {
            if let value = found?.value(of: r.raw(index)) { out.bulk(value) } else { out.null() }
        }
    },
    Command("hgetall", arity: 2, keys: .one) { ks, r, out in hgetall(ks, r, fields: true, values: true, &out) },
    Command("hkeys", arity: 2, keys: .one) { ks, r, out in hgetall(ks, r, fields: true, values: false, &out) },
    Command("hvals", arity: 2, keys: .one) { ks, r, out in hgetall(ks, r, fields: false, values: true, &out) },
    Command("hdel", arity: -3, keys: .one) { ks, r, out in
        let mark = ks.changeMark
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        guard let hash = found else { return out.integer(0) }
        var removed = 0
        for index in 2..<r.count where hash.remove(r.raw(index)) { removed += 1 }
        if removed > 0 { ks.changedCollection(r.raw(1), count: hash.count, .hash, "hdel") }
        ks.countChanges(removed, since: mark)
        out.integer(removed)
    },
    Command("hexists", arity: 3, keys: .one) { ks, r, out in
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        out.integer(found?.value(of: r.raw(2)) == nil ? 0 : 1)
    },
    Command("hlen", arity: 2, keys: .one) { ks, r, out in
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        out.integer(found?.count ?? 0)
    },
    Command("hstrlen", arity: 3, keys: .one) { ks, r, out in
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        out.integer(found?.value(of: r.raw(2))?.count ?? 0)
    },
    Command("hincrby", arity: 4, keys: .one, hincrby),
    Command("hincrbyfloat", arity: 4, keys: .one, hincrbyfloat),
    Command("hrandfield", arity: -2, keys: .one, hrandfield),
    Command("hscan", arity: -3, keys: .one, hscan),
]

/// HSET and HMSET: field-value pairs; HSET answers how many fields are
/// new, HMSET OK.
private func hset(_ ks: Keyspace, _ r: Request, _ name: String, _ out: inout ReplyWriter) {
    guard r.count % 2 == 0 else { return out.error("ERR wrong number of arguments for '\(name)' command") }
    let mark = ks.changeMark
    guard let hash = ks.hashForWriting(r.raw(1), &out) else { return }
    var added = 0
    for index in stride(from: 2, to: r.count, by: 2) where hash.set(r.raw(index), r.raw(index + 1), ks.limits) {
        added += 1
    }
    ks.changed(r.raw(1))
    ks.notify(.hash, "hset", r.raw(1))
    ks.countChanges((r.count - 2) / 2, since: mark)
    if name == "hset" { out.integer(added) } else { out.ok() }
}

private func hsetnx(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let mark = ks.changeMark
    guard let hash = ks.hashForWriting(r.raw(1), &out) else { return }
    guard hash.value(of: r.raw(2)) == nil else { return out.integer(0) }
    hash.set(r.raw(2), r.raw(3), ks.limits)
    ks.changed(r.raw(1))
    ks.notify(.hash, "hset", r.raw(1))
    ks.countChanges(1, since: mark)
    out.integer(1)
}

/// HGETALL, HKEYS, HVALS: in the hash's order; HGETALL is a map.
private func hgetall(_ ks: Keyspace, _ r: Request, fields: Bool, values: Bool, _ out: inout ReplyWriter) {
    guard let found = ks.lookupHash(r.raw(1), &out) else { return }
    let count = found?.count ?? 0
    if fields && values { out.mapHeader(count) } else { out.arrayHeader(count) }
    guard let hash = found else { return }
    var position = 0
    hash.forEachEntry { field, value in
        if out.passedLimit(at: position) { return false }
        if fields { out.bulk(field) }
        if values { out.bulk(value) }
        position += 1
        return true
    }
}

private func hincrby(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let increment = parseInteger(r.raw(3)) else { return out.error(notAnInteger) }
    let mark = ks.changeMark
    guard let hash = ks.hashForWriting(r.raw(1), &out) else { return }
    var current = 0
    if let value = hash.value(of: r.raw(2)) {
        guard let parsed = parseInteger(value) else { return out.error("ERR hash value is not an integer") }
        current = parsed
    }
    let (result, overflow) = current.addingReportingOverflow(increment)
    guard !overflow else { return out.error("ERR increment or decrement would overflow") }
    hash.set(r[2], decimalBytes(result), ks.limits)
    ks.changed(r.raw(1))
    ks.notify(.hash, "hincrby", r.raw(1))
    ks.countChanges(1, since: mark)
    out.integer(result)
}

private func hincrbyfloat(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let increment = parseLongDouble(r[3]) else { return out.error("ERR value is not a valid float") }
    guard !increment.isNaN, !increment.isInfinite else { return out.error("ERR value is NaN or Infinity") }
    let mark = ks.changeMark
    guard let hash = ks.hashForWriting(r.raw(1), &out) else { return }
    var current: Float80 = 0
    if let value = hash.value(of: r.raw(2)) {
        guard let parsed = parseLongDouble(Array(value)) else { return out.error("ERR hash value is not a float") }
        current = parsed
    }
    let result = current + increment
    guard !result.isNaN, !result.isInfinite else {
        return out.error("ERR increment would produce NaN or Infinity")
    }
    let text = humanReadable(result)
    hash.set(r[2], text, ks.limits)
    ks.changed(r.raw(1))
    ks.notify(.hash, "hincrbyfloat", r.raw(1))
    ks.countChanges(1, since: mark)
    out.bulk(text)
}

/// HRANDFIELD key [count [WITHVALUES]], as Redis's hrandfieldCommand: a
/// negative count may repeat fields; a count at least the size answers
/// the whole hash in its order; otherwise distinct fields at random.
private func hrandfield(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count >= 3 else {
        guard let found = ks.lookupHash(r.raw(1), &out) else { return }
        guard let hash = found, hash.count > 0 else { return out.null() }
        return out.bulk(hash.entry(at: Int.random(in: 0..<hash.count, using: &ks.random)).field)
    }
    guard let (requested, withValues) = randomCount(r, "withvalues", &out) else { return }
    guard let found = ks.lookupHash(r.raw(1), &out) else { return }
    guard let hash = found, requested != 0 else { return out.arrayHeader(0) }
    let entries = hash.reader()
    func reply(_ position: Int, _ out: inout ReplyWriter) {
        let (field, value) = entries[position]
        if withValues && out.resp3 { out.arrayHeader(2) }
        out.bulk(field)
        if withValues { out.bulk(value) }
    }
    let count = requested > 0 ? min(requested, hash.count) : Int(requested.magnitude)
    out.arrayHeader(withValues && !out.resp3 ? count * 2 : count)
    forEachRandomPosition(requested, of: hash.count, using: &ks.random, &out, reply)
}

/// HRANDFIELD's and ZRANDMEMBER's count and `word` (WITHVALUES,
/// WITHSCORES), in Redis's order of checks; nil after answering an error.
func randomCount(_ r: Request, _ word: StaticString, _ out: inout ReplyWriter) -> (Int, Bool)? {
    guard let requested = parseInteger(r.raw(2), in: -Int.max...Int.max, &out) else { return nil }
    let withWord = r.count == 4
    if r.count > 4 || (withWord && !equalsIgnoringCase(r.raw(3), word)) {
        out.error("ERR syntax error")
        return nil
    }
    if withWord && (requested < -Int.max / 2 || requested > Int.max / 2) {
        out.error("ERR value is out of range")
        return nil
    }
    return (requested, withWord)
}

/// The positions HRANDFIELD, SRANDMEMBER and ZRANDMEMBER pick among
/// `size` elements for `requested` (Redis's cases), each handed to `reply`:
/// negative, `-requested` picks that may repeat; at least `size`, every
/// position in order; otherwise that many distinct positions at random.
/// Repeated picks are not collected but written as they are drawn, and stop
/// once the reply passes the writer's limit, or are not drawn at all when
/// they cannot fit under it: the client is then closed over its output
/// buffer limit, as Redis stops at it (a count of -2^63 would otherwise
/// fill memory; redis-server 7.0.15 dies of it, limit or not).
func forEachRandomPosition(
    _ requested: Int, of size: Int, using random: inout CommandRandom, _ out: inout ReplyWriter,
    _ reply: (Int, inout ReplyWriter) -> Void
) {
    guard requested < 0 || requested == 1 else {
        for position in randomPositions(requested, of: size, using: &random) { reply(position, &out) }
        return
    }
    // Each pick is at least an empty bulk string (6 bytes).
    if out.cannotFit(Int(requested.magnitude), each: 6) { return }
    for pick in 0..<Int(requested.magnitude) {
        if out.passedLimit(at: pick) { return }
        reply(Int.random(in: 0..<size, using: &random), &out)
    }
}

/// Distinct positions among `size` for a positive `requested` (above 1):
/// at least `size`, every position in order; otherwise that many at random.
func randomPositions(_ requested: Int, of size: Int, using random: inout CommandRandom) -> [Int] {
    if requested >= size { return Array(0..<size) }
    var chosen = Set<Int>()
    var picks: [Int] = []
    if requested * 3 > size {
        // Most of them: shuffle and take a prefix.
        return Array((0..<size).shuffled(using: &random).prefix(requested))
    }
    while picks.count < requested {
        let position = Int.random(in: 0..<size, using: &random)
        if chosen.insert(position).inserted { picks.append(position) }
    }
    return picks
}

private func hscan(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard var scan = ScanArguments(cursorOf: r, &out) else { return }
    guard let found = ks.lookupHash(r.raw(1), &out) else { return }
    guard let hash = found else { return out.emptyScan() }
    guard scan.readOptions(r, &out) else { return }
    let (next, positions) = scan.step(total: hash.count, whole: hash.isCompact)
    let reader = hash.reader()
    let entries = positions.map { reader[$0] }.filter { scan.matches($0.field) }
    out.arrayHeader(2)
    out.bulk(decimalBytes(next))
    out.arrayHeader(entries.count * 2)
    for (field, value) in entries {
        out.bulk(field)
        out.bulk(value)
    }
}
