// StringCommands.swift: the rest of Redis 7.0's string commands: SETNX,
// SETEX, PSETEX, MSETNX, GETEX, GETDEL, SETRANGE, GETRANGE/SUBSTR, SETBIT,
// GETBIT, BITCOUNT, BITPOS, LCS and INCRBYFLOAT, and the option parsing
// that SET and GETEX share. Argument rules, wording and edge cases follow
// Redis's t_string.c and bitops.c.
import Glibc

let stringCommands: [Command] = [
    Command("setnx", arity: 3, keys: .one) { ks, r, out in
        setGeneric(ks, r.raw(1), r.raw(2), StringOptions(nx: true), "setnx", okReply: 1, abortReply: 0, &out)
    },
    Command("setex", arity: 4, keys: .one) { ks, r, out in
        setGeneric(
            ks, r.raw(1), r.raw(3), StringOptions(expire: (r.raw(2), seconds: true, absolute: false)), "setex", &out)
    },
    Command("psetex", arity: 4, keys: .one) { ks, r, out in
        setGeneric(
            ks, r.raw(1), r.raw(3), StringOptions(expire: (r.raw(2), seconds: false, absolute: false)), "psetex", &out)
    },
    Command("msetnx", arity: -3, keys: .pairs, msetnx),
    Command("getex", arity: -2, keys: .one, getex),
    Command("getdel", arity: 2, keys: .one) { ks, r, out in
        guard let entry = ks.lookup(r[1], now: ks.now, use: .read) else { return out.null() }
        guard entry.collection == nil else { return out.error(wrongTypeError) }
        out.bulk(entry.value)
        ks.remove(r[1])
        ks.notify(.generic, "del", r.raw(1))
    },
    Command("setrange", arity: 4, keys: .one, setrange),
    Command("getrange", arity: 4, keys: .one, getrange),
    Command("substr", arity: 4, keys: .one, getrange),
    Command("setbit", arity: 4, keys: .one, setbit),
    Command("getbit", arity: 3, keys: .one, getbit),
    Command("bitcount", arity: -2, keys: .one, bitcount),
    Command("bitpos", arity: -3, keys: .one, bitpos),
    Command("lcs", arity: -3, keys: .pairs, lcs),
    Command("incrbyfloat", arity: 3, keys: .one, incrbyfloat),
]

/// Redis's proto-max-bulk-len: no string grows past it.
let maxStringLength = 512 * 1024 * 1024

// MARK: - SET's and GETEX's options

/// The options of SET (NX, XX, GET, KEEPTTL, EX/PX/EXAT/PXAT) and GETEX
/// (PERSIST, EX/PX/EXAT/PXAT), with Redis's rules for which go together.
struct StringOptions {
    var nx = false
    var xx = false
    var get = false
    var keepTTL = false
    var persist = false
    /// The expiry argument (read in place: options live for one command),
    /// its unit, and whether it is a Unix time.
    var expire: (amount: UnsafeRawBufferPointer, seconds: Bool, absolute: Bool)?

    init(nx: Bool = false, expire: (amount: UnsafeRawBufferPointer, seconds: Bool, absolute: Bool)? = nil) {
        self.nx = nx
        self.expire = expire
    }

    /// Parses `r[start...]`; nil on a syntax error.
    init?(_ r: Request, from start: Int, forSet: Bool) {
        var index = start
        var kind = ""  // which of EX, PX, EXAT, PXAT was given (a repeat of the same one is allowed)
        while index < r.count {
            let option = r.raw(index)
            let hasNext = index + 1 < r.count
            func expiry(_ name: String, seconds: Bool, absolute: Bool) -> Bool {
                guard !keepTTL, !persist, kind.isEmpty || kind == name, hasNext else { return false }
                kind = name
                expire = (r.raw(index + 1), seconds, absolute)
                index += 1
                return true
            }
            if forSet && equalsIgnoringCase(option, "nx") && !xx {
                nx = true
            } else if forSet && equalsIgnoringCase(option, "xx") && !nx {
                xx = true
            } else if forSet && equalsIgnoringCase(option, "get") {
                get = true
            } else if forSet && equalsIgnoringCase(option, "keepttl") && !persist && kind.isEmpty {
                keepTTL = true
            } else if !forSet && equalsIgnoringCase(option, "persist") && kind.isEmpty && !keepTTL {
                persist = true
            } else if equalsIgnoringCase(option, "ex") {
                guard expiry("ex", seconds: true, absolute: false) else { return nil }
            } else if equalsIgnoringCase(option, "px") {
                guard expiry("px", seconds: false, absolute: false) else { return nil }
            } else if equalsIgnoringCase(option, "exat") {
                guard expiry("exat", seconds: true, absolute: true) else { return nil }
            } else if equalsIgnoringCase(option, "pxat") {
                guard expiry("pxat", seconds: false, absolute: true) else { return nil }
            } else {
                return nil
            }
            index += 1
        }
    }

    /// Whether the old entry matters: for NX/XX, GET and KEEPTTL.
    var needsOld: Bool { nx || xx || get || keepTTL }
}

/// Redis's getExpireMillisecondsOrReply: the deadline, in Unix
/// milliseconds, that an EX/PX/EXAT/PXAT argument names; nil after
/// answering an error (not a number, not positive, or overflowing).
func expiryMilliseconds(
    _ expire: (amount: UnsafeRawBufferPointer, seconds: Bool, absolute: Bool), now: Int64, _ name: String,
    _ out: inout ReplyWriter
) -> Int64? {
    guard var ms = parseInteger(expire.amount).map(Int64.init) else {
        out.error(notAnInteger)
        return nil
    }
    guard ms > 0, !expire.seconds || ms <= Int64.max / 1000 else {
        out.error(invalidExpireTime(name))
        return nil
    }
    if expire.seconds { ms *= 1000 }
    if !expire.absolute {
        let (sum, overflow) = ms.addingReportingOverflow(now)
        guard !overflow else {
            out.error(invalidExpireTime(name))
            return nil
        }
        ms = sum
    }
    return ms
}

// MARK: - Handlers

private func msetnx(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count % 2 == 1 else { return out.error("ERR wrong number of arguments for 'msetnx' command") }
    let now = ks.now
    for index in stride(from: 1, to: r.count, by: 2) where ks.lookup(r[index], now: now) != nil {
        return out.integer(0)
    }
    for index in stride(from: 1, to: r.count, by: 2) {
        ks.set(r[index], r[index + 1], expiresAt: nil)
        ks.notify(.string, "set", r.raw(index))
    }
    out.integer(1)
}

private func getex(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let options = StringOptions(r, from: 2, forSet: false) else { return out.error("ERR syntax error") }
    let now = ks.now
    guard let entry = ks.lookup(r[1], now: now, use: .read) else { return out.null() }
    guard entry.collection == nil else { return out.error(wrongTypeError) }
    var deadline: Int64?
    if let expire = options.expire {
        guard let ms = expiryMilliseconds(expire, now: now, "getex", &out) else { return }
        deadline = ms
    }
    out.bulk(entry.value)
    if let deadline {
        if deadline <= now {
            ks.remove(r[1])
            ks.notify(.generic, "del", r.raw(1))
        } else {
            ks.setExpiry(r[1], deadline)
            ks.notify(.generic, "expire", r.raw(1))
        }
    } else if options.persist && entry.expiresAt != nil {
        ks.setExpiry(r[1], nil)
        ks.notify(.generic, "persist", r.raw(1))
    }
}

private func setrange(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let offset = parseInteger(r[2]) else { return out.error(notAnInteger) }
    guard offset >= 0 else { return out.error("ERR offset is out of range") }
    let value = r[3]
    let now = ks.now
    let existing = ks.lookup(r[1], now: now)
    if existing?.collection != nil { return out.error(wrongTypeError) }
    if value.isEmpty { return out.integer(existing?.value.count ?? 0) }
    guard offset <= maxStringLength - value.count else {
        return out.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    }
    let mark = ks.changeMark
    if existing == nil { ks.set(r[1], [], expiresAt: nil) }
    defer { ks.countChanges(1, since: mark) }
    let length = ks.modify(r[1], now: now) { stored -> Int in
        stored.padWithZeros(to: offset + value.count)
        stored.replaceSubrange(offset..<offset + value.count, with: value)
        return stored.count
    }
    ks.notify(.string, "setrange", r.raw(1))
    out.integer(length ?? 0)
}

private func getrange(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard var start = parseInteger(r[2]), var end = parseInteger(r[3]) else { return out.error(notAnInteger) }
    guard let entry = ks.lookup(r[1], now: ks.now) else { return out.bulk([]) }
    guard entry.collection == nil else { return out.error(wrongTypeError) }
    let value = entry.value
    let length = value.count
    if start < 0 && end < 0 && start > end { return out.bulk([]) }
    if start < 0 { start += length }
    if end < 0 { end += length }
    start = max(start, 0)
    end = max(end, 0)
    if end >= length { end = length - 1 }
    guard start <= end, length > 0 else { return out.bulk([]) }
    out.bulk(Array(value[start...end]))
}

/// A bit offset: a non-negative integer below proto-max-bulk-len × 8.
private func parseBitOffset(_ bytes: [UInt8], _ out: inout ReplyWriter) -> Int? {
    guard let offset = parseInteger(bytes), offset >= 0, offset >> 3 < maxStringLength else {
        out.error("ERR bit offset is not an integer or out of range")
        return nil
    }
    return offset
}

private func setbit(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let offset = parseBitOffset(r[2], &out) else { return }
    guard let bit = parseInteger(r[3]), bit == 0 || bit == 1 else {
        return out.error("ERR bit is not an integer or out of range")
    }
    let now = ks.now
    let existing = ks.lookup(r[1], now: now)
    if existing?.collection != nil { return out.error(wrongTypeError) }
    let byte = offset >> 3
    let mask = UInt8(0x80) >> UInt8(offset & 7)
    guard existing != nil else {
        var value = [UInt8](repeating: 0, count: byte + 1)
        if bit == 1 { value[byte] |= mask }
        ks.set(r[1], value, expiresAt: nil, form: .raw)
        ks.notify(.string, "setbit", r.raw(1))
        return out.integer(0)
    }
    // A change only when the string grew or the bit flipped, as Redis 7.0
    // counts it (rdb_changes_since_last_save, WATCH, the append-only file).
    let old = ks.update(
        r.raw(1), now: now, ifCollection: { (0, changed: false) }, leaving: .raw, evenUnchanged: { _ in true }
    ) { value in
        let grew = value.count <= byte
        if grew { value.padWithZeros(to: byte + 1) }
        let was = value[byte] & mask != 0 ? 1 : 0
        if bit == 1 { value[byte] |= mask } else { value[byte] &= ~mask }
        return ((was, changed: grew || was != bit), changed: grew || was != bit)
    }
    if old?.changed == true { ks.notify(.string, "setbit", r.raw(1)) }
    out.integer(old?.0 ?? 0)
}

private func getbit(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let offset = parseBitOffset(r[2], &out) else { return }
    let entry = ks.lookup(r[1], now: ks.now)
    if entry?.collection != nil { return out.error(wrongTypeError) }
    guard let value = entry?.value, offset >> 3 < value.count else {
        return out.integer(0)
    }
    out.integer(value[offset >> 3] & (UInt8(0x80) >> UInt8(offset & 7)) != 0 ? 1 : 0)
}

/// A BITCOUNT/BITPOS range: `start` and `end` in bytes or bits, Redis's
/// clamping, as a bit range. nil when it is empty.
private func bitRange(start: Int, end: Int, length: Int, bits: Bool) -> (first: Int, last: Int)? {
    let total = bits ? length * 8 : length
    var (start, end) = (start, end)
    if start < 0 { start += total }
    if end < 0 { end += total }
    start = max(start, 0)
    end = max(end, 0)
    if end >= total { end = total - 1 }
    guard start <= end else { return nil }
    return bits ? (start, end) : (start * 8, end * 8 + 7)
}

/// BYTE or BIT (the unit of BITCOUNT's and BITPOS's range); nil: neither.
private func parseRangeUnit(_ bytes: [UInt8]) -> Bool? {
    if equalsIgnoringCase(bytes, "bit") { return true }
    if equalsIgnoringCase(bytes, "byte") { return false }
    return nil
}

private func bitcount(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let entry = ks.lookup(r[1], now: ks.now) else { return out.integer(0) }
    guard entry.collection == nil else { return out.error(wrongTypeError) }
    let value = entry.value
    var range = (first: 0, last: value.count * 8 - 1)
    if r.count == 4 || r.count == 5 {
        guard let start = parseInteger(r[2]), let end = parseInteger(r[3]) else { return out.error(notAnInteger) }
        if start < 0 && end < 0 && start > end { return out.integer(0) }
        var bits = false
        if r.count == 5 {
            guard let unit = parseRangeUnit(r[4]) else { return out.error("ERR syntax error") }
            bits = unit
        }
        guard let chosen = bitRange(start: start, end: end, length: value.count, bits: bits) else {
            return out.integer(0)
        }
        range = chosen
    } else if r.count != 2 {
        return out.error("ERR syntax error")
    }
    guard range.first <= range.last else { return out.integer(0) }
    var count = 0
    var bit = range.first
    while bit <= range.last {
        if bit & 7 == 0 && bit + 7 <= range.last {
            count += value[bit >> 3].nonzeroBitCount
            bit += 8
        } else {
            if value[bit >> 3] & (UInt8(0x80) >> UInt8(bit & 7)) != 0 { count += 1 }
            bit += 1
        }
    }
    out.integer(count)
}

private func bitpos(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let bit = parseInteger(r[2]) else { return out.error(notAnInteger) }
    guard bit == 0 || bit == 1 else { return out.error("ERR The bit argument must be 1 or 0.") }
    guard let entry = ks.lookup(r[1], now: ks.now) else { return out.integer(bit == 1 ? -1 : 0) }
    guard entry.collection == nil else { return out.error(wrongTypeError) }
    let value = entry.value
    guard r.count <= 6 else { return out.error("ERR syntax error") }
    var bits = false
    if r.count == 6 {
        guard let unit = parseRangeUnit(r[5]) else { return out.error("ERR syntax error") }
        bits = unit
    }
    var start = 0
    var endGiven = false
    var end = value.count - 1
    if r.count >= 4 {
        guard let parsed = parseInteger(r[3]) else { return out.error(notAnInteger) }
        start = parsed
        if r.count >= 5 {
            guard let parsed = parseInteger(r[4]) else { return out.error(notAnInteger) }
            end = parsed
            endGiven = true
        } else {
            end = bits ? value.count * 8 + 7 : value.count - 1
        }
    }
    guard let range = bitRange(start: start, end: end, length: value.count, bits: bits) else {
        return out.integer(-1)
    }
    let skip: UInt8 = bit == 1 ? 0x00 : 0xFF  // bytes that cannot hold the bit sought
    var position = range.first
    while position <= range.last {
        let byte = value[position >> 3]
        if position & 7 == 0 && position + 7 <= range.last && byte == skip {
            position += 8
            continue
        }
        if (byte & (UInt8(0x80) >> UInt8(position & 7)) != 0) == (bit == 1) { return out.integer(position) }
        position += 1
    }
    // A clear bit sought past an unbounded range is the first bit after it.
    out.integer(bit == 0 && !endGiven ? range.last + 1 : -1)
}

/// The most cells LCS's table may have: the table costs the core time and
/// memory in the product of the two lengths, so it is bounded far below
/// Redis's 512 MB (which would hold the core for seconds).
let lcsMaxCells = 16 * 1024 * 1024

private func lcs(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let now = ks.now
    let (first, second) = (ks.lookup(r[1], now: now), ks.lookup(r[2], now: now))
    if first?.collection != nil || second?.collection != nil {
        return out.error("ERR The specified keys must contain string values")
    }
    let a = first?.value ?? []
    let b = second?.value ?? []
    var wantIndexes = false, wantLength = false, withMatchLength = false
    var minimum = 0
    var index = 3
    while index < r.count {
        if equalsIgnoringCase(r[index], "idx") {
            wantIndexes = true
        } else if equalsIgnoringCase(r[index], "len") {
            wantLength = true
        } else if equalsIgnoringCase(r[index], "withmatchlen") {
            withMatchLength = true
        } else if equalsIgnoringCase(r[index], "minmatchlen") && index + 1 < r.count {
            guard let parsed = parseInteger(r[index + 1]) else { return out.error(notAnInteger) }
            minimum = max(parsed, 0)
            index += 1
        } else {
            return out.error("ERR syntax error")
        }
        index += 1
    }
    if wantIndexes && wantLength {
        return out.error("ERR If you want both the length and indexes, please just use IDX.")
    }
    let (rows, columns) = (a.count + 1, b.count + 1)
    guard rows.multipliedReportingOverflow(by: columns).partialValue <= lcsMaxCells,
        !rows.multipliedReportingOverflow(by: columns).overflow
    else {
        return out.error(
            "ERR LCS of strings this long is refused: (len(a)+1)*(len(b)+1) must not exceed \(lcsMaxCells)")
    }
    var table = [UInt32](repeating: 0, count: rows * columns)
    for i in 1..<rows {
        for j in 1..<columns {
            table[i * columns + j] =
                a[i - 1] == b[j - 1]
                ? table[(i - 1) * columns + j - 1] + 1
                : max(table[(i - 1) * columns + j], table[i * columns + j - 1])
        }
    }
    let length = Int(table[rows * columns - 1])
    if wantLength { return out.integer(length) }
    // Walk back from the end, collecting the sequence and, for IDX, the
    // matching ranges (latest first, as Redis lists them).
    var sequence = [UInt8](repeating: 0, count: length)
    var ranges: [(a: (Int, Int), b: (Int, Int), length: Int)] = []
    var (i, j, k) = (a.count, b.count, length)
    var current: (aStart: Int, aEnd: Int, bStart: Int, bEnd: Int)?
    while i > 0 && j > 0 {
        var emit = false
        if a[i - 1] == b[j - 1] {
            sequence[k - 1] = a[i - 1]
            if let open = current, open.aStart == i && open.bStart == j {
                current = (i - 1, open.aEnd, j - 1, open.bEnd)
            } else if current != nil {
                emit = true
            } else {
                current = (i - 1, i - 1, j - 1, j - 1)
            }
            if let open = current, open.aStart == 0 || open.bStart == 0 { emit = true }
            i -= 1
            j -= 1
            k -= 1
        } else {
            if table[(i - 1) * columns + j] > table[i * columns + j - 1] { i -= 1 } else { j -= 1 }
            if current != nil { emit = true }
        }
        if emit, let open = current {
            let matchLength = open.aEnd - open.aStart + 1
            if minimum == 0 || matchLength >= minimum {
                ranges.append(((open.aStart, open.aEnd), (open.bStart, open.bEnd), matchLength))
            }
            current = nil
        }
    }
    guard wantIndexes else { return out.bulk(sequence) }
    out.mapHeader(2)
    out.bulk("matches")
    out.arrayHeader(ranges.count)
    for range in ranges {
        out.arrayHeader(withMatchLength ? 3 : 2)
        out.arrayHeader(2)
        out.integer(range.a.0)
        out.integer(range.a.1)
        out.arrayHeader(2)
        out.integer(range.b.0)
        out.integer(range.b.1)
        if withMatchLength { out.integer(range.length) }
    }
    out.bulk("len")
    out.integer(length)
}

// MARK: - INCRBYFLOAT

/// Redis's string2ld: a long double written in full (no spaces, nothing
/// after it, not NaN, not out of range); nil otherwise.
func parseLongDouble(_ bytes: [UInt8]) -> Float80? {
    guard !bytes.isEmpty, bytes.count < 5 * 1024, !bytes.contains(0) else { return nil }
    guard bytes[0] != 32, !(9...13).contains(bytes[0]) else { return nil }
    return (bytes + [0]).withUnsafeBufferPointer { text -> Float80? in
        text.withMemoryRebound(to: CChar.self) { chars in
            var end: UnsafeMutablePointer<CChar>?
            errno = 0
            let value = strtold(chars.baseAddress!, &end)
            guard let end, end == UnsafeMutablePointer(mutating: chars.baseAddress! + bytes.count) else {
                return nil
            }
            if value.isNaN { return nil }
            if errno == ERANGE && (value.isInfinite || value == 0) { return nil }
            return value
        }
    }
}

/// Redis's ld2string in its human mode: `%.17Lf` without trailing zeros.
func humanReadable(_ value: Float80) -> [UInt8] {
    if value.isInfinite { return Array((value > 0 ? "inf" : "-inf").utf8) }
    var buffer = [CChar](repeating: 0, count: 5 * 1024 + 32)
    let length = withVaList([value]) { arguments in
        buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, "%.17Lf", arguments) }
    }
    var text = buffer.prefix(Int(max(length, 0))).map { UInt8(bitPattern: $0) }
    if text.contains(UInt8(ascii: ".")) {
        while text.last == UInt8(ascii: "0") { text.removeLast() }
        if text.last == UInt8(ascii: ".") { text.removeLast() }
    }
    if text == Array("-0".utf8) { text = [UInt8(ascii: "0")] }
    return text
}

private func incrbyfloat(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let entry = ks.lookup(r[1], now: ks.now)
    let notAFloat = "ERR value is not a valid float"
    var current: Float80 = 0
    if let entry {
        guard entry.collection == nil else { return out.error(wrongTypeError) }
        guard let parsed = parseLongDouble(entry.value) else { return out.error(notAFloat) }
        current = parsed
    }
    guard let increment = parseLongDouble(r[2]) else { return out.error(notAFloat) }
    let result = current + increment
    guard !result.isNaN, !result.isInfinite else {
        return out.error("ERR increment would produce NaN or Infinity")
    }
    let text = humanReadable(result)
    ks.set(r[1], text, expiresAt: entry?.expiresAt, form: .text)
    ks.notify(.string, "incrbyfloat", r.raw(1))
    out.bulk(text)
}
