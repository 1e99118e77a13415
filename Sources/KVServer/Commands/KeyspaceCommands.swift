// KeyspaceCommands.swift: the first commands that work on one database
// (PING, ECHO, GET, SET, the counters, MGET/MSET, EXPIRE and TTL in their
// forms, PERSIST, KEYS, DBSIZE); StringCommands.swift and KeyCommands.swift
// hold the rest of Redis 7.0's string and keyspace commands: their rows for
// the Dispatcher's table, their handlers and the argument rules they share
// (a row is data: see Command.swift).
import Glibc

/// The rows of the keyspace commands.
let keyspaceCommands: [Command] = [
    Command("ping", arity: -1, keys: .none) { _, session, r, out in ping(session, r, &out) },
    Command("echo", arity: 2, keys: .none) { _, r, out in out.bulk(r[1]) },
    Command("get", arity: 2, keys: .one, get),
    Command("set", arity: -3, keys: .one, set),
    Command("getset", arity: 3, keys: .one, getset),
    Command("del", arity: -2, keys: .all, del),
    Command("exists", arity: -2, keys: .all, exists),
    Command("incr", arity: 2, keys: .one) { ks, r, out in incrementBy(ks, r.raw(1), 1, &out) },
    Command("decr", arity: 2, keys: .one) { ks, r, out in incrementBy(ks, r.raw(1), -1, &out) },
    Command("incrby", arity: 3, keys: .one) { ks, r, out in incrementBy(ks, r.raw(1), r[2], negate: false, &out) },
    Command("decrby", arity: 3, keys: .one) { ks, r, out in incrementBy(ks, r.raw(1), r[2], negate: true, &out) },
    Command("append", arity: 3, keys: .one, append),
    Command("strlen", arity: 2, keys: .one, strlen),
    Command("mget", arity: -2, keys: .all, mget),
    Command("mset", arity: -3, keys: .pairs, mset),
    Command("expire", arity: -3, keys: .one) { ks, r, out in
        expire(ks, r, seconds: true, relative: true, "expire", &out)
    },
    Command("pexpire", arity: -3, keys: .one) { ks, r, out in
        expire(ks, r, seconds: false, relative: true, "pexpire", &out)
    },
    Command("expireat", arity: -3, keys: .one) { ks, r, out in
        expire(ks, r, seconds: true, relative: false, "expireat", &out)
    },
    Command("pexpireat", arity: -3, keys: .one) { ks, r, out in
        expire(ks, r, seconds: false, relative: false, "pexpireat", &out)
    },
    Command("ttl", arity: 2, keys: .one) { ks, r, out in ttl(ks, r[1], milliseconds: false, absolute: false, &out) },
    Command("pttl", arity: 2, keys: .one) { ks, r, out in ttl(ks, r[1], milliseconds: true, absolute: false, &out) },
    Command("expiretime", arity: 2, keys: .one) { ks, r, out in
        ttl(ks, r[1], milliseconds: false, absolute: true, &out)
    },
    Command("pexpiretime", arity: 2, keys: .one) { ks, r, out in
        ttl(ks, r[1], milliseconds: true, absolute: true, &out)
    },
    Command("persist", arity: 2, keys: .one, persist),
    Command("keys", arity: 2, keys: .none, keys),
    Command("dbsize", arity: 1, keys: .none) { ks, _, out in out.integer(ks.count) },
]

// MARK: - Argument parsing with Redis's rules and wording

let notAnInteger = "ERR value is not an integer or out of range"

/// Redis's error for a deadline that overflows, built only when it is sent.
func invalidExpireTime(_ command: String) -> String { "ERR invalid expire time in '\(command)' command" }

/// Redis's string2ll: optional '-', no leading zeros, no spaces or '+', fits in 64 bits.
func parseInteger(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBytes { parseInteger($0) }
}

/// Redis's string2ll over bytes read in place from a request.
func parseInteger(_ bytes: UnsafeRawBufferPointer) -> Int? {
    guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
    if bytes.count == 1 && bytes[0] == UInt8(ascii: "0") { return 0 }
    var index = 0
    let negative = bytes[0] == UInt8(ascii: "-")
    if negative { index = 1 }
    guard index < bytes.count, bytes[index] >= UInt8(ascii: "1"), bytes[index] <= UInt8(ascii: "9") else { return nil }
    var magnitude: UInt64 = 0
    if bytes.count - index <= 18 {
        // Up to 18 digits cannot overflow (nor pass Int.max): no check per
        // digit, the common case of every counter and length.
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            magnitude = magnitude &* 10 &+ UInt64(digit)
            index &+= 1
        }
        return negative ? -Int(magnitude) : Int(magnitude)
    }
    while index < bytes.count {
        let digit = bytes[index]
        guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { return nil }
        let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
        guard !o1 && !o2 else { return nil }
        magnitude = sum
        index += 1
    }
    if negative {
        guard magnitude <= UInt64(Int.max) + 1 else { return nil }
        return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
    }
    guard magnitude <= UInt64(Int.max) else { return nil }
    return Int(magnitude)
}

func decimalBytes(_ value: Int) -> [UInt8] { Array(String(value).utf8) }

// MARK: - Handlers

/// PING; a RESP2 client with subscriptions gets the pub/sub form, an
/// array of "pong" and the argument (empty without one), as in Redis.
private func ping(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count <= 2 else { return out.error("ERR wrong number of arguments for 'ping' command") }
    if !session.resp3 && session.isSubscribed {
        out.arrayHeader(2)
        out.bulk(Array("pong".utf8))
        out.bulk(r.count == 2 ? r[1] : [])
    } else if r.count == 1 {
        out.simple("PONG")
    } else {
        out.bulk(r[1])
    }
}

private func get(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let entry = ks.lookup(r.raw(1), now: ks.now) else { return out.null() }
    if entry.collection != nil { out.error(wrongTypeError) } else { out.bulk(entry.value) }
}

private func set(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let options = StringOptions(r, from: 3, forSet: true) else { return out.error("ERR syntax error") }
    setGeneric(ks, r.raw(1), r.raw(2), options, "set", owned: r.ownedArgument(2), &out)
}

/// Redis's setGenericCommand: SET, SETNX, SETEX and PSETEX. The expiry is
/// checked first, then GET's reply is given, then NX/XX decide. `owned`,
/// when given, is `value` as an array of its own, stored without a copy.
func setGeneric(
    _ ks: Keyspace, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ options: StringOptions,
    _ name: String,
    okReply: Int? = nil, abortReply: Int? = nil, owned: [UInt8]? = nil, _ out: inout ReplyWriter
) {
    let now = ks.now
    var deadline: Int64?
    if let expire = options.expire {
        guard let ms = expiryMilliseconds(expire, now: now, name, &out) else { return }
        deadline = ms
    }
    // A plain SET (the common case) needs nothing from the old entry.
    // GET's lookup is a read (Redis's getGenericCommand), NX's and XX's a write's.
    let old = options.needsOld ? ks.lookup(key, now: now, use: options.get ? .read : .asCommand) : nil
    if options.get && old?.collection != nil { return out.error(wrongTypeError) }
    if options.get {
        if let old { out.bulk(old.value) } else { out.null() }
    }
    if (options.nx && old != nil) || (options.xx && old == nil) {
        if !options.get {
            if let abortReply { out.integer(abortReply) } else { out.null() }
        }
        return
    }
    if options.keepTTL { deadline = old?.expiresAt }
    if let owned {
        ks.set(key, storing: owned, expiresAt: deadline)  // the parser's array for a large bulk: no copy
    } else {
        ks.set(key, value, expiresAt: deadline)
    }
    ks.notify(.string, "set", key)
    if options.expire != nil { ks.notify(.generic, "expire", key) }
    if !options.get {
        if let okReply { out.integer(okReply) } else { out.ok() }
    }
}

private func getset(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let old = ks.lookup(r[1], now: ks.now, use: .read)
    if old?.collection != nil { return out.error(wrongTypeError) }
    ks.set(r[1], r[2], expiresAt: nil)
    ks.notify(.string, "set", r.raw(1))
    if let old { out.bulk(old.value) } else { out.null() }
}

func del(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    var removed = 0
    for index in 1..<r.count where ks.lookup(r.raw(index), now: now) != nil {
        ks.remove(r.raw(index))
        ks.notify(.generic, "del", r.raw(index))
        removed += 1
    }
    out.integer(removed)
}

func exists(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    out.integer((1..<r.count).reduce(0) { $0 + (ks.lookup(r.raw($1), now: now, touching: false) == nil ? 0 : 1) })
}

private func incrementBy(
    _ ks: Keyspace, _ key: UnsafeRawBufferPointer, _ amount: [UInt8], negate: Bool, _ out: inout ReplyWriter
) {
    guard let parsed = parseInteger(amount) else { return out.error(notAnInteger) }
    if negate {
        guard parsed != Int.min else { return out.error("ERR decrement would overflow") }
        incrementBy(ks, key, -parsed, &out)
    } else {
        incrementBy(ks, key, parsed, &out)
    }
}

private func incrementBy(_ ks: Keyspace, _ key: UnsafeRawBufferPointer, _ amount: Int, _ out: inout ReplyWriter) {
    enum Outcome {
        case result(Int)
        case notAnInteger
        case overflow
        case wrongType
    }
    // One hash lookup for a present key: the digits are rewritten in place
    // (the key keeps its expiry); an absent key is stored fresh.
    let outcome =
        ks.update(key, now: ks.now, ifCollection: { .wrongType }, leaving: .encoded) {
            value -> (Outcome, changed: Bool) in
            guard let current = parseInteger(value) else { return (.notAnInteger, false) }
            let (result, overflow) = current.addingReportingOverflow(amount)
            guard !overflow else { return (.overflow, false) }
            withDecimal(result) { digits in
                value.removeAll(keepingCapacity: value.capacity <= 64)
                value.reserveCapacity(20)  // any Int's digits: a counter never regrows its buffer
                value.append(bytes: digits)
            }
            return (.result(result), true)
        }
        ?? {
            ks.set(key, decimal: amount, expiresAt: nil)
            return .result(amount)
        }()
    switch outcome {
    case .result(let result):
        ks.notify(.string, "incrby", key)
        out.integer(result)
    case .notAnInteger: out.error(notAnInteger)
    case .overflow: out.error("ERR increment or decrement would overflow")
    case .wrongType: out.error(wrongTypeError)
    }
}

private func append(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    if let entry = ks.lookup(r[1], now: now) {
        guard entry.collection == nil else { return out.error(wrongTypeError) }
        let length = entry.value.count
        guard length + r[2].count <= 512 * 1024 * 1024 else {
            return out.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        }
        out.integer(ks.append(r[2], to: r[1], now: now) ?? 0)
    } else {
        ks.set(r[1], r[2], expiresAt: nil)
        out.integer(r[2].count)
    }
    ks.notify(.string, "append", r.raw(1))
}

private func strlen(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let entry = ks.lookup(r[1], now: ks.now)
    if entry?.collection != nil { return out.error(wrongTypeError) }
    out.integer(entry?.value.count ?? 0)
}

private func mget(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    out.arrayHeader(r.count - 1)
    for index in 1..<r.count {
        if let entry = ks.lookup(r.raw(index), now: now), entry.collection == nil {
            out.bulk(entry.value)
        } else {
            out.null()
        }
    }
}

private func mset(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count % 2 == 1 else { return out.error("ERR wrong number of arguments for 'mset' command") }
    var index = 1
    while index < r.count {
        ks.set(r.raw(index), r.raw(index + 1), expiresAt: nil)
        ks.notify(.string, "set", r.raw(index))
        index += 2
    }
    out.ok()
}

/// EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT, as Redis's expireGenericCommand:
/// options first, then the number, then its overflow checks (a deadline is
/// a Unix time in milliseconds, so EXPIRE's base is now).
private func expire(
    _ ks: Keyspace, _ r: Request, seconds: Bool, relative: Bool, _ name: String, _ out: inout ReplyWriter
) {
    var nx = false, xx = false, gt = false, lt = false
    for option in r.dropFirst(3) {
        if equalsIgnoringCase(option, "nx") {
            nx = true
        } else if equalsIgnoringCase(option, "xx") {
            xx = true
        } else if equalsIgnoringCase(option, "gt") {
            gt = true
        } else if equalsIgnoringCase(option, "lt") {
            lt = true
        } else {
            return out.error(bytes: Array("ERR Unsupported option ".utf8) + ReplyWriter.quoted(option))
        }
    }
    if nx && (xx || gt || lt) {
        return out.error("ERR NX and XX, GT or LT options at the same time are not compatible")
    }
    if gt && lt { return out.error("ERR GT and LT options at the same time are not compatible") }
    guard var when = parseInteger(r.raw(2)).map(Int64.init) else { return out.error(notAnInteger) }
    if seconds {
        guard when <= Int64.max / 1000 && when >= Int64.min / 1000 else { return out.error(invalidExpireTime(name)) }
        when *= 1000
    }
    let now = ks.now
    let base = relative ? now : 0
    guard when <= Int64.max - base else { return out.error(invalidExpireTime(name)) }
    when += base
    var removed = false
    let changed = ks.changeExpiry(r.raw(1), now: now) { current in
        if nx && current != nil { return .keep }
        if xx && current == nil { return .keep }
        // No expiry counts as an infinite one for GT and LT.
        if gt, current == nil || when <= current! { return .keep }
        if lt, let current, when >= current { return .keep }
        removed = when <= now
        return removed ? .remove : .expire(at: when)
    }
    if changed == true { ks.notify(.generic, removed ? "del" : "expire", r.raw(1)) }
    out.integer(changed == true ? 1 : 0)
}

/// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 without the key, -1 without an
/// expiry; seconds are rounded to the nearest, as Redis does.
private func ttl(_ ks: Keyspace, _ key: [UInt8], milliseconds: Bool, absolute: Bool, _ out: inout ReplyWriter) {
    let now = ks.now
    guard let entry = ks.lookup(key, now: now, touching: false) else { return out.integer(-2) }
    guard let deadline = entry.expiresAt else { return out.integer(-1) }
    let value = Int(max(absolute ? deadline : deadline - now, 0))
    // (value + 500) / 1000 without overflowing near Int.max (PXAT's limit).
    out.integer(milliseconds ? value : value / 1000 + (value % 1000 + 500) / 1000)
}

private func persist(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let changed = ks.changeExpiry(r.raw(1), now: ks.now) { $0 == nil ? .keep : .persist }
    if changed == true { ks.notify(.generic, "persist", r.raw(1)) }
    out.integer(changed == true ? 1 : 0)
}

private func keys(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    let pattern = r[1]
    let everything = pattern == [UInt8(ascii: "*")]
    let matches = ks.keys(now: now) { everything || globMatch(pattern, $0) }
    out.arrayHeader(matches.count)
    for key in matches { out.bulk(key) }
}
