// SortedSetCommands.swift: Redis 7.0's sorted-set commands (t_zset.c) that
// never block: ZADD (NX XX GT LT CH INCR), ZINCRBY, ZREM, ZSCORE, ZMSCORE,
// ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK, ZREVRANK, ZRANGE (BYSCORE BYLEX REV
// LIMIT WITHSCORES), ZRANGESTORE, ZRANGEBYSCORE, ZREVRANGE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREMRANGEBYRANK,
// ZREMRANGEBYSCORE, ZREMRANGEBYLEX, ZPOPMIN, ZPOPMAX, ZMPOP, ZRANDMEMBER,
// ZUNION, ZUNIONSTORE, ZINTER, ZINTERSTORE, ZINTERCARD, ZDIFF, ZDIFFSTORE
// and ZSCAN, with its argument order, wording and reply shapes (scores are
// doubles in RESP3; pairs are nested arrays in RESP3). BZPOPMIN, BZPOPMAX
// and BZMPOP are in BlockingCommands.swift and share `popScores`.

let sortedSetCommands: [Command] = [
    Command("zadd", arity: -4, keys: .one) { ks, r, out in zadd(ks, r, incrementOnly: false, &out) },
    Command("zincrby", arity: 4, keys: .one) { ks, r, out in zadd(ks, r, incrementOnly: true, &out) },
    Command("zrem", arity: -3, keys: .one) { ks, r, out in
        let mark = ks.changeMark
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        guard let sortedSet = found else { return out.integer(0) }
        var removed = 0
        for index in 2..<r.count where sortedSet.remove(r[index]) { removed += 1 }
        if removed > 0 { ks.changedCollection(r.raw(1), count: sortedSet.count, .sortedSet, "zrem") }
        ks.countChanges(removed, since: mark)
        out.integer(removed)
    },
    Command("zscore", arity: 3, keys: .one) { ks, r, out in
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        if let score = found?.score(of: r.raw(2)) { out.double(score) } else { out.null() }
    },
    Command("zmscore", arity: -3, keys: .one) { ks, r, out in
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        out.arrayHeader(r.count - 2)
        for index in 2..<r.count {
            if let score = found?.score(of: r.raw(index)) { out.double(score) } else { out.null() }
        }
    },
    Command("zcard", arity: 2, keys: .one) { ks, r, out in
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        out.integer(found?.count ?? 0)
    },
    Command("zcount", arity: 4, keys: .one) { ks, r, out in
        guard let range = ScoreRange(r.raw(2), r.raw(3)) else { return out.error("ERR min or max is not a float") }
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        out.integer(found.map { byScore($0, range, reverse: false, offset: 0, limit: -1).count } ?? 0)
    },
    Command("zlexcount", arity: 4, keys: .one) { ks, r, out in
        guard let range = LexRange(r.raw(2), r.raw(3)) else {
            return out.error("ERR min or max not valid string range item")
        }
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        out.integer(found.map { byLex($0, range, reverse: false, offset: 0, limit: -1).count } ?? 0)
    },
    Command("zrank", arity: 3, keys: .one) { ks, r, out in rank(ks, r, reverse: false, &out) },
    Command("zrevrank", arity: 3, keys: .one) { ks, r, out in rank(ks, r, reverse: true, &out) },
    Command("zrange", arity: -4, keys: .one) { ks, r, out in zrange(ks, r, from: 1, .auto, reverse: nil, &out) },
    Command("zrangestore", arity: -5, keys: .all) { ks, r, out in
        zrange(ks, r, from: 2, .auto, reverse: nil, store: r.raw(1), &out)
    },
    Command("zrangebyscore", arity: -4, keys: .one) { ks, r, out in
        zrange(ks, r, from: 1, .score, reverse: false, &out)
    },
    Command("zrevrange", arity: -4, keys: .one) { ks, r, out in zrange(ks, r, from: 1, .rank, reverse: true, &out) },
    Command("zrevrangebyscore", arity: -4, keys: .one) { ks, r, out in
        zrange(ks, r, from: 1, .score, reverse: true, &out)
    },
    Command("zrangebylex", arity: -4, keys: .one) { ks, r, out in zrange(ks, r, from: 1, .lex, reverse: false, &out) },
    Command("zrevrangebylex", arity: -4, keys: .one) { ks, r, out in
        zrange(ks, r, from: 1, .lex, reverse: true, &out)
    },
    Command("zremrangebyrank", arity: 4, keys: .one) { ks, r, out in removeRange(ks, r, .rank, &out) },
    Command("zremrangebyscore", arity: 4, keys: .one) { ks, r, out in removeRange(ks, r, .score, &out) },
    Command("zremrangebylex", arity: 4, keys: .one) { ks, r, out in removeRange(ks, r, .lex, &out) },
    Command("zpopmin", arity: -2, keys: .one) { ks, r, out in zpop(ks, r, max: false, &out) },
    Command("zpopmax", arity: -2, keys: .one) { ks, r, out in zpop(ks, r, max: true, &out) },
    Command("zmpop", arity: -4, keys: .none) { ks, r, out in
        guard let arguments = MultiPopArguments(r, keysAt: 1, ends: ("min", "max"), &out) else { return }
        for index in arguments.keys {
            guard let found = ks.lookupSortedSet(r.raw(index), &out) else { return }
            if found != nil {
                return popScores(
                    ks, r.raw(index), max: arguments.end == .tail, count: arguments.count, shape: .keyAndPairs, &out)
            }
        }
        out.nullArray()
    },
    Command("zrandmember", arity: -2, keys: .one, zrandmember),
    Command("zunion", arity: -3, keys: .none) { ks, r, out in combine(ks, r, .union, store: false, &out) },
    Command("zunionstore", arity: -4, keys: .none) { ks, r, out in combine(ks, r, .union, store: true, &out) },
    Command("zinter", arity: -3, keys: .none) { ks, r, out in combine(ks, r, .intersection, store: false, &out) },
    Command("zinterstore", arity: -4, keys: .none) { ks, r, out in combine(ks, r, .intersection, store: true, &out) },
    Command("zintercard", arity: -3, keys: .none) { ks, r, out in
        combine(ks, r, .intersection, store: false, cardinality: true, &out)
    },
    Command("zdiff", arity: -3, keys: .none) { ks, r, out in combine(ks, r, .difference, store: false, &out) },
    Command("zdiffstore", arity: -4, keys: .none) { ks, r, out in combine(ks, r, .difference, store: true, &out) },
    Command("zscan", arity: -3, keys: .one, zscan),
]

/// A member and its score.
typealias ScoredMember = (member: [UInt8], score: Double)

// MARK: - ZADD

/// ZADD and ZINCRBY (Redis's zaddGenericCommand): options, then every
/// score parsed before anything changes, then the key.
private func zadd(_ ks: Keyspace, _ r: Request, incrementOnly: Bool, _ out: inout ReplyWriter) {
    var nx = false, xx = false, gt = false, lt = false, ch = false, incr = incrementOnly
    var index = 2
    while !incrementOnly && index < r.count {
        let option = r.raw(index)
        if equalsIgnoringCase(option, "nx") {
            nx = true
        } else if equalsIgnoringCase(option, "xx") {
            xx = true
        } else if equalsIgnoringCase(option, "ch") {
            ch = true
        } else if equalsIgnoringCase(option, "incr") {
            incr = true
        } else if equalsIgnoringCase(option, "gt") {
            gt = true
        } else if equalsIgnoringCase(option, "lt") {
            lt = true
        } else {
            break
        }
        index += 1
    }
    let elements = r.count - index
    guard elements > 0, elements % 2 == 0 else { return out.error("ERR syntax error") }
    if nx && xx { return out.error("ERR XX and NX options at the same time are not compatible") }
    if (gt && nx) || (lt && nx) || (gt && lt) {
        return out.error("ERR GT, LT, and/or NX options at the same time are not compatible")
    }
    if incr && elements > 2 { return out.error("ERR INCR option supports a single increment-element pair") }
    var pairs: [ScoredMember] = []
    for position in stride(from: index, to: r.count, by: 2) {
        guard let score = parseDouble(r.raw(position)) else { return out.error("ERR value is not a valid float") }
        pairs.append((r[position + 1], score))
    }
    let mark = ks.changeMark
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    var added = 0, updated = 0, processed = 0
    var lastScore = 0.0
    if let sortedSet = found ?? (xx ? nil : ks.sortedSetForWriting(r.raw(1), &out)) {
        for (member, given) in pairs {
            var score = given
            if let current = sortedSet.score(of: member) {
                if nx { continue }
                if incr {
                    score += current
                    guard !score.isNaN else { return out.error("ERR resulting score is not a number (NaN)") }
                }
                if (lt && score >= current) || (gt && score <= current) { continue }
                if score != current {
                    sortedSet.set(member, score, ks.limits)
                    updated += 1
                }
            } else {
                if xx { continue }
                sortedSet.set(member, score, ks.limits)
                added += 1
            }
            processed += 1
            lastScore = score
        }
        if added + updated > 0 {
            ks.changed(r.raw(1))
            ks.notify(.sortedSet, incr ? "zincr" : "zadd", r.raw(1))
        }
        if sortedSet.count == 0 { ks.remove(r.raw(1)) }
        ks.countChanges(added + updated, since: mark)
    }
    if incr {
        if processed > 0 { out.double(lastScore) } else { out.null() }
    } else {
        out.integer(ch ? added + updated : added)
    }
}

private func rank(_ ks: Keyspace, _ r: Request, reverse: Bool, _ out: inout ReplyWriter) {
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    guard let sortedSet = found, let rank = sortedSet.rank(of: r[2]) else { return out.null() }
    out.integer(reverse ? sortedSet.count - 1 - rank : rank)
}

// MARK: - Ranges

/// The members of `sortedSet` in `range`, from the lowest (`reverse`:
/// from the highest), after skipping `offset`, at most `limit` (negative:
/// all). A negative offset gives nothing, as in Redis.
func byScore(
    _ sortedSet: SortedSetValue, _ range: ScoreRange, reverse: Bool, offset: Int, limit: Int
) -> [SkipList.Node] {
    guard !range.isEmpty, offset >= 0 else { return [] }
    var node =
        reverse
        ? sortedSet.order.last { !range.isBelowMax($0.score) } : sortedSet.order.first { !range.isAboveMin($0.score) }
    return walk(&node, reverse: reverse, offset: offset, limit: limit) {
        reverse ? range.isAboveMin($0.score) : range.isBelowMax($0.score)
    }
}

/// Like `byScore`, over a lexicographic range. Among different scores the
/// answer is Redis's, though its docs leave it unspecified: nothing unless
/// the last member is at least the minimum and the first at most the
/// maximum; then where the range starts is found in a listpack (a small
/// set) by scanning from its first member (its last, reversed) for the
/// first on the range's side of the bound, and in a skiplist by descending
/// it, as kvd does for every large set (where Redis's answer depends on its
/// nodes' random levels).
func byLex(_ sortedSet: SortedSetValue, _ range: LexRange, reverse: Bool, offset: Int, limit: Int) -> [SkipList.Node] {
    guard !range.isEmpty, offset >= 0 else { return [] }
    // Redis's zslIsInLexRange and zzlIsInLexRange first: nothing unless the
    // last member is on the minimum's side and the first on the maximum's.
    guard let first = sortedSet.order.first, let last = sortedSet.order.tail,
        range.isAboveMin(last.memberBytes), range.isBelowMax(first.memberBytes)
    else { return [] }
    var node: SkipList.Node?
    if sortedSet.isCompact {
        node = reverse ? sortedSet.order.tail : sortedSet.order.first
        while let current = node,
            reverse ? !range.isBelowMax(current.memberBytes) : !range.isAboveMin(current.memberBytes)
        {
            node = reverse ? current.backward : current.next
        }
    } else {
        node =
            reverse
            ? sortedSet.order.last { !range.isBelowMax($0.memberBytes) }
            : sortedSet.order.first { !range.isAboveMin($0.memberBytes) }
    }
    return walk(&node, reverse: reverse, offset: offset, limit: limit) {
        reverse ? range.isAboveMin($0.memberBytes) : range.isBelowMax($0.memberBytes)
    }
}

/// From `node` (nothing unless it is in range), in the direction asked:
/// skips `offset`, then collects while `inRange`, up to `limit` (negative:
/// no limit). As Redis, the skipped members are not checked: in score
/// order it makes no difference, among different scores in a lexicographic
/// range it does.
private func walk(
    _ node: inout SkipList.Node?, reverse: Bool, offset: Int, limit: Int, inRange: (SkipList.Node) -> Bool
) -> [SkipList.Node] {
    guard let first = node, inRange(first) else { return [] }
    var skipped = 0
    while let current = node, skipped < offset {
        skipped += 1
        node = reverse ? current.backward : current.next
    }
    var result: [SkipList.Node] = []
    while let current = node, inRange(current), limit < 0 || result.count < limit {
        result.append(current)
        node = reverse ? current.backward : current.next
    }
    return result
}

/// What kind of range a ZRANGE-family command reads.
enum RangeKind {
    case auto, rank, score, lex
}

/// The ZRANGE family (Redis's zrangeGenericCommand): options, then the
/// range, then the key; answered as an array (scores as pairs in RESP3),
/// or stored at `store` (ZRANGESTORE) and its size answered.
private func zrange(
    _ ks: Keyspace, _ r: Request, from start: Int, _ given: RangeKind, reverse givenReverse: Bool?,
    store: UnsafeRawBufferPointer? = nil, _ out: inout ReplyWriter
) {
    var kind = given
    var reverse = givenReverse
    var withScores = false
    var offset = 0, limit = -1
    var index = start + 3
    while index < r.count {
        let option = r.raw(index)
        if store == nil && equalsIgnoringCase(option, "withscores") {
            withScores = true
        } else if equalsIgnoringCase(option, "limit") && index + 2 < r.count {
            guard let parsedOffset = parseInteger(r.raw(index + 1)), let parsedLimit = parseInteger(r.raw(index + 2))
            else { return out.error(notAnInteger) }
            (offset, limit) = (parsedOffset, parsedLimit)
            index += 2
        } else if reverse == nil && equalsIgnoringCase(option, "rev") {
            reverse = true
        } else if kind == .auto && equalsIgnoringCase(option, "bylex") {
            kind = .lex
        } else if kind == .auto && equalsIgnoringCase(option, "byscore") {
            kind = .score
        } else {
            return out.error("ERR syntax error")
        }
        index += 1
    }
    let descending = reverse ?? false
    if kind == .auto { kind = .rank }
    // Redis checks the count only: `LIMIT n -1` is no limit, whatever n.
    if limit != -1 && kind == .rank {
        return out.error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    }
    if withScores && kind == .lex {
        return out.error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    }
    // REV with BYSCORE or BYLEX takes the range as max, min.
    let (low, high) =
        descending && kind != .rank ? (r.raw(start + 2), r.raw(start + 1)) : (r.raw(start + 1), r.raw(start + 2))
    var pick: (SortedSetValue) -> [SkipList.Node]
    switch kind {
    case .score:
        guard let range = ScoreRange(low, high) else { return out.error("ERR min or max is not a float") }
        pick = { byScore($0, range, reverse: descending, offset: offset, limit: limit) }
    case .lex:
        guard let range = LexRange(low, high) else { return out.error("ERR min or max not valid string range item") }
        pick = { byLex($0, range, reverse: descending, offset: offset, limit: limit) }
    default:
        guard let first = parseInteger(low), let last = parseInteger(high) else { return out.error(notAnInteger) }
        pick = { sortedSet in
            guard let ranks = clampRange(start: first, end: last, count: sortedSet.count) else { return [] }
            return sortedSet.elements(ranks: ranks, reverse: descending)
        }
    }
    // ZRANGESTORE's source too is a read.
    guard let found = ks.lookupSortedSet(r.raw(start), use: .read, &out) else { return }
    let result = found.map(pick) ?? []
    if let store {
        storeSortedSet(ks, store, result.map { ($0.member, $0.score) }, "zrangestore")
        return out.integer(result.count)
    }
    replyScored(result, withScores: withScores, &out)
}

/// Stores `members` as the sorted set at `key` and notifies `event` (the
/// key goes when there are none: a `del` event if it was there).
func storeSortedSet(
    _ ks: Keyspace, _ key: UnsafeRawBufferPointer, _ members: [ScoredMember], _ event: StaticString
) {
    guard !members.isEmpty else {
        if ks.remove(key) { ks.notify(.generic, "del", key) }
        return
    }
    let sortedSet = SortedSetValue()
    let inOrder = zip(members, members.dropFirst()).allSatisfy {
        SkipList.precedes($0.score, $0.member, $1.score, $1.member)
    }
    if inOrder {
        sortedSet.load(sorted: members, ks.limits)
    } else {
        for (member, score) in members { sortedSet.set(member, score, ks.limits) }
    }
    ks.store(key, .sortedSet(sortedSet))
    ks.notify(.sortedSet, event, key)
}

/// An array of members, with their scores when asked: flat in RESP2,
/// [member, score] pairs in RESP3.
func replyScored(_ members: [ScoredMember], withScores: Bool, _ out: inout ReplyWriter) {
    out.arrayHeader(withScores && !out.resp3 ? members.count * 2 : members.count)
    for (member, score) in members {
        if withScores && out.resp3 { out.arrayHeader(2) }
        out.bulk(member)
        if withScores { out.double(score) }
    }
}

/// The same, from a sorted set's nodes (their bytes, not copies).
func replyScored(_ nodes: [SkipList.Node], withScores: Bool, _ out: inout ReplyWriter) {
    out.arrayHeader(withScores && !out.resp3 ? nodes.count * 2 : nodes.count)
    for node in nodes {
        if withScores && out.resp3 { out.arrayHeader(2) }
        out.bulk(node.memberBytes)
        if withScores { out.double(node.score) }
    }
}

private func removeRange(_ ks: Keyspace, _ r: Request, _ kind: RangeKind, _ out: inout ReplyWriter) {
    var pick: (SortedSetValue) -> [SkipList.Node]
    switch kind {
    case .score:
        guard let range = ScoreRange(r.raw(2), r.raw(3)) else { return out.error("ERR min or max is not a float") }
        pick = { byScore($0, range, reverse: false, offset: 0, limit: -1) }
    case .lex:
        guard let range = LexRange(r.raw(2), r.raw(3)) else {
            return out.error("ERR min or max not valid string range item")
        }
        pick = { byLex($0, range, reverse: false, offset: 0, limit: -1) }
    default:
        guard let first = parseInteger(r.raw(2)), let last = parseInteger(r.raw(3)) else {
            return out.error(notAnInteger)
        }
        pick = { sortedSet in
            guard let ranks = clampRange(start: first, end: last, count: sortedSet.count) else { return [] }
            return sortedSet.elements(ranks: ranks, reverse: false)
        }
    }
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    guard let sortedSet = found else { return out.integer(0) }
    let mark = ks.changeMark
    let doomed = pick(sortedSet)
    for node in doomed { sortedSet.remove(node) }
    if !doomed.isEmpty {
        let event: StaticString =
            switch kind {
            case .score: "zremrangebyscore"
            case .lex: "zremrangebylex"
            default: "zremrangebyrank"
            }
        ks.changedCollection(r.raw(1), count: sortedSet.count, .sortedSet, event)
    }
    ks.countChanges(doomed.count, since: mark)
    out.integer(doomed.count)
}

// MARK: - Pops

/// How a pop answers (Redis's genericZpopCommand's four shapes).
enum PopShape {
    /// [member, score, member, score] (ZPOPMIN/ZPOPMAX in RESP2, or without a count).
    case flat
    /// [[member, score], ...] (ZPOPMIN/ZPOPMAX with a count in RESP3).
    case pairs
    /// [key, member, score] (BZPOPMIN/BZPOPMAX).
    case keyAndFlat
    /// [key, [[member, score], ...]] (ZMPOP/BZMPOP).
    case keyAndPairs
}

/// Pops up to `count` of the lowest (or highest) members of the sorted set
/// at `key` (present) and answers them in `shape`; the key goes when it
/// empties.
func popScores(
    _ ks: Keyspace, _ key: UnsafeRawBufferPointer, max: Bool, count: Int, shape: PopShape, _ out: inout ReplyWriter
) {
    guard case .sortedSet(let sortedSet) = ks.lookup(key, now: ks.now)?.collection else { return out.nullArray() }
    let mark = ks.changeMark
    let taken = min(count, sortedSet.count)
    switch shape {
    case .flat: out.arrayHeader(taken * 2)
    case .pairs: out.arrayHeader(taken)
    case .keyAndFlat:
        out.arrayHeader(taken * 2 + 1)
        out.bulk(key)
    case .keyAndPairs:
        out.arrayHeader(2)
        out.bulk(key)
        out.arrayHeader(taken)
    }
    for _ in 0..<taken {
        guard let node = max ? sortedSet.order.tail : sortedSet.order.first else { break }
        let (member, score) = (node.member, node.score)
        sortedSet.remove(node)
        if shape == .pairs || shape == .keyAndPairs { out.arrayHeader(2) }
        out.bulk(member)
        out.double(score)
    }
    ks.changedCollection(key, count: sortedSet.count, .sortedSet, max ? "zpopmax" : "zpopmin")
    ks.countChanges(taken, since: mark)
}

private func zpop(_ ks: Keyspace, _ r: Request, max: Bool, _ out: inout ReplyWriter) {
    guard r.count <= 3 else { return out.error("ERR syntax error") }
    var count = 1
    if r.count == 3 {
        guard let parsed = parsePositive(r.raw(2), message: "value is out of range, must be positive", &out) else {
            return
        }
        count = parsed
    }
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    guard found != nil, count > 0 else { return out.arrayHeader(0) }
    popScores(ks, r.raw(1), max: max, count: count, shape: out.resp3 && r.count == 3 ? .pairs : .flat, &out)
}

// MARK: - ZRANDMEMBER, ZSCAN

private func zrandmember(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count >= 3 else {
        guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
        guard let sortedSet = found, sortedSet.count > 0 else { return out.null() }
        return out.bulk(
            sortedSet.order.node(atRank: Int.random(in: 1...sortedSet.count, using: &ks.random))!.memberBytes)
    }
    guard let (requested, withScores) = randomCount(r, "withscores", &out) else { return }
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    guard let sortedSet = found, requested != 0 else { return out.arrayHeader(0) }
    // The whole set (a count at least its size) comes highest first, as Redis answers it.
    let size = sortedSet.count
    let whole = requested >= size
    let count = requested > 0 ? min(requested, size) : Int(requested.magnitude)
    out.arrayHeader(withScores && !out.resp3 ? count * 2 : count)
    forEachRandomPosition(requested, of: size, using: &ks.random, &out) { position, out in
        let node = sortedSet.order.node(atRank: whole ? size - position : position + 1)!
        if withScores && out.resp3 { out.arrayHeader(2) }
        out.bulk(node.memberBytes)
        if withScores { out.double(node.score) }
    }
}

private func zscan(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard var scan = ScanArguments(cursorOf: r, &out) else { return }
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    guard let sortedSet = found else { return out.emptyScan() }
    guard scan.readOptions(r, &out) else { return }
    // A rank is a position here: a compact set is answered whole, in order.
    let (next, positions) = scan.step(total: sortedSet.count, whole: sortedSet.isCompact)
    let members = positions.compactMap { sortedSet.order.node(atRank: $0 + 1) }.filter { scan.matches($0.memberBytes) }
    out.arrayHeader(2)
    out.bulk(decimalBytes(next))
    out.arrayHeader(members.count * 2)
    for node in members {
        out.bulk(node.memberBytes)
        out.bulk(scoreText(node.score))
    }
}

// MARK: - ZUNION, ZINTER, ZDIFF

/// What ZUNION, ZINTER and ZDIFF compute.
private enum ScoreOperation {
    case union, intersection, difference
}

/// The ZUNION/ZINTER/ZDIFF family (Redis's zunionInterDiffGenericCommand):
/// numkeys, the keys (sorted sets, or sets with every score 1), WEIGHTS,
/// AGGREGATE, WITHSCORES (LIMIT for ZINTERCARD); answered as ZRANGE
/// answers, stored (the STORE forms), or counted (ZINTERCARD).
private func combine(
    _ ks: Keyspace, _ r: Request, _ operation: ScoreOperation, store: Bool, cardinality: Bool = false,
    _ out: inout ReplyWriter
) {
    let numkeysAt = store ? 2 : 1
    let name = String(decoding: lowercased(r[0]), as: UTF8.self)
    guard let keyCount = parseInteger(r.raw(numkeysAt)) else { return out.error(notAnInteger) }
    guard keyCount >= 1 else { return out.error("ERR at least 1 input key is needed for '\(name)' command") }
    guard keyCount <= r.count - numkeysAt - 1 else { return out.error("ERR syntax error") }
    var inputs: [[ScoredMember]?] = []
    for index in (numkeysAt + 1)...(numkeysAt + keyCount) {
        // A read, STORE or not (Redis's zunionInterDiffGenericCommand).
        guard let entry = ks.lookup(r.raw(index), now: ks.now, use: .read) else {
            inputs.append(nil)
            continue
        }
        switch entry.collection {
        case .sortedSet(let sortedSet):  // never empty: an emptied sorted set is deleted
            inputs.append(
                sortedSet.elements(ranks: 0...(sortedSet.count - 1), reverse: false).map { ($0.member, $0.score) })
        case .set(let set): inputs.append((0..<set.count).map { (set[$0], 1.0) })
        default: return out.error(wrongTypeError)
        }
    }
    var weights = [Double](repeating: 1, count: keyCount)
    var aggregate = "sum"
    var withScores = false
    var limit = 0
    var index = numkeysAt + 1 + keyCount
    while index < r.count {
        let remaining = r.count - index
        let option = r.raw(index)
        if operation != .difference && !cardinality && remaining >= keyCount + 1
            && equalsIgnoringCase(option, "weights")
        {
            for position in 0..<keyCount {
                guard let weight = parseDouble(r.raw(index + 1 + position)) else {
                    return out.error("ERR weight value is not a float")
                }
                weights[position] = weight
            }
            index += 1 + keyCount
        } else if operation != .difference && !cardinality && remaining >= 2 && equalsIgnoringCase(option, "aggregate")
        {
            let chosen = String(decoding: lowercased(r[index + 1]), as: UTF8.self)
            guard ["sum", "min", "max"].contains(chosen) else { return out.error("ERR syntax error") }
            aggregate = chosen
            index += 2
        } else if !store && !cardinality && equalsIgnoringCase(option, "withscores") {
            withScores = true
            index += 1
        } else if cardinality && remaining >= 2 && equalsIgnoringCase(option, "limit") {
            guard let parsed = parsePositive(r.raw(index + 1), message: "LIMIT can't be negative", &out) else {
                return
            }
            limit = parsed
            index += 2
        } else {
            return out.error("ERR syntax error")
        }
    }
    func weighted(_ score: Double, _ position: Int) -> Double {
        let value = score * weights[position]
        return value.isNaN ? 0 : value
    }
    func combined(_ a: Double, _ b: Double) -> Double {
        switch aggregate {
        case "min": return Swift.min(a, b)
        case "max": return Swift.max(a, b)
        default:
            let sum = a + b
            return sum.isNaN ? 0 : sum
        }
    }
    func finish(_ sorted: [ScoredMember]) {
        if store {
            let event: StaticString =
                switch operation {
                case .union: "zunionstore"
                case .intersection: "zinterstore"
                case .difference: "zdiffstore"
                }
            storeSortedSet(ks, r.raw(1), sorted, event)
            return out.integer(sorted.count)
        }
        replyScored(sorted, withScores: withScores, &out)
    }
    var result: [[UInt8]: Double] = [:]
    var order: [[UInt8]] = []
    switch operation {
    case .union:
        // Each member's place in `union`, found with one hash of its bytes
        // (Key hashes them at once; an array key hashes byte by byte).
        var places: [Key: Int] = [:]
        places.reserveCapacity(inputs.reduce(0) { $0 + ($1?.count ?? 0) })
        var union: [ScoredMember] = []
        for (position, input) in inputs.enumerated() {
            for (member, score) in input ?? [] {
                let value = weighted(score, position)
                let place = { (place: inout Int) -> Int in
                    if place < 0 { place = union.count }
                    return place
                }(&places[.stored(member), default: -1])
                if place == union.count {
                    union.append((member, value))
                } else {
                    union[place].score = combined(union[place].score, value)
                }
            }
        }
        return finish(union.sorted { SkipList.precedes($0.score, $0.member, $1.score, $1.member) })
    case .intersection:
        if !inputs.contains(where: { $0 == nil || $0!.isEmpty }) {
            let lookups = inputs.map { input in
                Dictionary(input!.map { ($0.member, $0.score) }, uniquingKeysWith: { a, _ in a })
            }
            let smallest = inputs.indices.min { inputs[$0]!.count < inputs[$1]!.count }!
            for (member, score) in inputs[smallest]! {
                var value = weighted(score, smallest)
                var everywhere = true
                for position in inputs.indices where position != smallest {
                    guard let other = lookups[position][member] else {
                        everywhere = false
                        break
                    }
                    value = combined(value, weighted(other, position))
                }
                guard everywhere else { continue }
                result[member] = value
                order.append(member)
                if cardinality && limit > 0 && order.count >= limit { break }
            }
        }
    case .difference:
        if let first = inputs[0] {
            let others = inputs.dropFirst().compactMap { $0 }.map { Set($0.map(\.member)) }
            for (member, score) in first where !others.contains(where: { $0.contains(member) }) {
                result[member] = score
                order.append(member)
            }
        }
    }
    if cardinality { return out.integer(order.count) }
    finish(
        order.map { ($0, result[$0]!) }.sorted {
            SkipList.precedes($0.1, $0.0, $1.1, $1.0)
        }.map { ScoredMember($0.0, $0.1) })
}
