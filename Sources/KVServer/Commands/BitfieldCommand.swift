// BitfieldCommand.swift: BITFIELD and BITFIELD_RO, Redis's integers of any
// width from 1 to 64 bits (unsigned: 63) at any bit offset of a string,
// most significant bit first: GET, SET (answers the old value), INCRBY
// (the new one), and OVERFLOW WRAP (the default), SAT or FAIL (a null
// reply, nothing written), each applying to the operations after it. Every
// operation is read and checked before any runs, as in Redis.

let bitfieldCommands: [Command] = [
    Command("bitfield", arity: -2, keys: .one) { ks, r, out in bitfield(ks, r, readOnly: false, &out) },
    Command("bitfield_ro", arity: -2, keys: .one) { ks, r, out in bitfield(ks, r, readOnly: true, &out) },
]

private enum Overflow { case wrap, saturate, fail }

private struct BitfieldOperation {
    enum Kind { case get, set, incrby }
    let kind: Kind
    let signed: Bool
    let bits: Int
    let offset: Int
    let value: Int64
    let overflow: Overflow
}

private func bitfield(_ ks: Keyspace, _ r: Request, readOnly: Bool, _ out: inout ReplyWriter) {
    var operations: [BitfieldOperation] = []
    var overflow = Overflow.wrap
    var highestWrite = -1
    var index = 2
    while index < r.count {
        let remaining = r.count - index - 1
        let word = r.raw(index)
        let kind: BitfieldOperation.Kind
        if equalsIgnoringCase(word, "get") && remaining >= 2 {
            kind = .get
        } else if equalsIgnoringCase(word, "set") && remaining >= 3 {
            kind = .set
        } else if equalsIgnoringCase(word, "incrby") && remaining >= 3 {
            kind = .incrby
        } else if equalsIgnoringCase(word, "overflow") && remaining >= 1 {
            let mode = r.raw(index + 1)
            if equalsIgnoringCase(mode, "wrap") {
                overflow = .wrap
            } else if equalsIgnoringCase(mode, "sat") {
                overflow = .saturate
            } else if equalsIgnoringCase(mode, "fail") {
                overflow = .fail
            } else {
                return out.error("ERR Invalid OVERFLOW type specified")
            }
            index += 2
            continue
        } else {
            return out.error("ERR syntax error")
        }
        let type = r[index + 1]
        let width = type.count > 1 ? parseInteger(Array(type.dropFirst())) : nil
        guard let first = type.first, first == UInt8(ascii: "i") || first == UInt8(ascii: "u"), let width,
            width >= 1, width <= (first == UInt8(ascii: "i") ? 64 : 63)
        else {
            return out.error(
                "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
        }
        // An offset, or #N: the Nth field of this width.
        let offsetText = r[index + 2]
        let byField = offsetText.first == UInt8(ascii: "#")
        guard let parsed = parseInteger(byField ? Array(offsetText.dropFirst()) : offsetText) else {
            return out.error("ERR bit offset is not an integer or out of range")
        }
        let (offset, overflowed) = byField ? parsed.multipliedReportingOverflow(by: width) : (parsed, false)
        guard !overflowed, offset >= 0, offset >> 3 < maxStringLength else {
            return out.error("ERR bit offset is not an integer or out of range")
        }
        var value: Int64 = 0
        if kind != .get {
            highestWrite = max(highestWrite, offset + width - 1)
            guard let parsed = parseInteger(r[index + 3]) else { return out.error(notAnInteger) }
            value = Int64(parsed)
        }
        operations.append(
            BitfieldOperation(
                kind: kind, signed: first == UInt8(ascii: "i"), bits: width, offset: offset, value: value,
                overflow: overflow))
        index += kind == .get ? 3 : 4
    }
    if highestWrite >= 0 && readOnly { return out.error("ERR BITFIELD_RO only supports the GET subcommand") }
    let now = ks.now
    // Only GETs: a read, as Redis looks the key up for them.
    let existing = ks.lookup(r.raw(1), now: now, use: highestWrite < 0 ? .read : .asCommand)
    if existing?.collection != nil { return out.error(wrongTypeError) }
    guard highestWrite >= 0 else {
        let bytes = existing?.value ?? []
        out.arrayHeader(operations.count)
        for operation in operations { out.integer(Int(read(bytes, operation))) }
        return
    }
    // Redis 7.0 counts a change for each SET or INCRBY that changed its
    // field, or all of them when the string was made or grew (room up to
    // the farthest bit written, as Redis makes it), and none for a field
    // left alone (an overflow with FAIL): rdb_changes_since_last_save,
    // WATCH and the append-only file see what it sees.
    let needed = highestWrite >> 3 + 1
    var replies: [Int64?] = []
    var changes = 0
    func run(_ stored: inout [UInt8]) {
        let grew = existing == nil || stored.count < needed
        stored.padWithZeros(to: needed)
        for operation in operations {
            let old = read(stored, operation)
            guard operation.kind != .get else {
                replies.append(old)
                continue
            }
            guard let new = apply(operation, to: old) else {
                replies.append(nil)
                continue
            }
            write(&stored, operation, new)
            replies.append(operation.kind == .set ? old : new)
            if grew || old != new { changes += 1 }
        }
    }
    if existing == nil {
        var stored: [UInt8] = []
        run(&stored)
        ks.set(r[1], stored, expiresAt: nil, form: .raw)  // one change, the key's making
    } else {
        _ = ks.update(r.raw(1), now: now, ifCollection: { 0 }, leaving: .raw, evenUnchanged: { _ in true }) { stored in
            run(&stored)
            return (0, changed: changes > 0)
        }
    }
    if changes > 1 { ks.fence.changes += changes - 1 }
    if changes > 0 { ks.notify(.string, "setbit", r.raw(1)) }
    out.arrayHeader(replies.count)
    for reply in replies {
        if let reply { out.integer(Int(reply)) } else { out.null() }
    }
}

/// The field's value: unsigned, or sign-extended from its width.
private func read(_ bytes: [UInt8], _ operation: BitfieldOperation) -> Int64 {
    var value: UInt64 = 0
    for bit in operation.offset..<(operation.offset + operation.bits) {
        let byte = bit >> 3
        let set = byte < bytes.count && bytes[byte] & (0x80 >> UInt8(bit & 7)) != 0
        value = value << 1 | (set ? 1 : 0)
    }
    if operation.signed && operation.bits < 64 && value & (1 << UInt64(operation.bits - 1)) != 0 {
        value |= UInt64.max << UInt64(operation.bits)
    }
    return Int64(bitPattern: value)
}

private func write(_ bytes: inout [UInt8], _ operation: BitfieldOperation, _ value: Int64) {
    let pattern = UInt64(bitPattern: value)
    for position in 0..<operation.bits {
        let bit = operation.offset + position
        let mask = UInt8(0x80) >> UInt8(bit & 7)
        if pattern >> UInt64(operation.bits - 1 - position) & 1 == 1 {
            bytes[bit >> 3] |= mask
        } else {
            bytes[bit >> 3] &= ~mask
        }
    }
}

/// The value to store after SET or INCRBY on `old`, by Redis's overflow
/// rules; nil when it overflows under FAIL.
private func apply(_ operation: BitfieldOperation, to old: Int64) -> Int64? {
    let bits = UInt64(operation.bits)
    let (value, increment) = operation.kind == .set ? (operation.value, Int64(0)) : (old, operation.value)
    let overflows: Bool
    var limited: Int64 = 0
    if operation.signed {
        let maximum: Int64 = bits == 64 ? Int64.max : (1 << Int64(bits - 1)) - 1
        let minimum = -maximum - 1
        let maxIncrement = Int64(bitPattern: UInt64(bitPattern: maximum) &- UInt64(bitPattern: value))
        let minIncrement = minimum &- value
        if value > maximum || (bits != 64 && increment > maxIncrement)
            || (value >= 0 && increment > 0 && increment > maxIncrement)
        {
            overflows = true
            limited = maximum
        } else if value < minimum || (bits != 64 && increment < minIncrement)
            || (value < 0 && increment < 0 && increment < minIncrement)
        {
            overflows = true
            limited = minimum
        } else {
            overflows = false
        }
        if overflows && operation.overflow == .wrap {
            var sum = UInt64(bitPattern: value) &+ UInt64(bitPattern: increment)
            if bits < 64 {
                let mask = UInt64.max << bits
                sum = sum & (1 << (bits - 1)) != 0 ? sum | mask : sum & ~mask
            }
            limited = Int64(bitPattern: sum)
        }
    } else {
        let unsignedValue = UInt64(bitPattern: value)
        let maximum: UInt64 = (1 << bits) - 1
        let maxIncrement = Int64(bitPattern: maximum &- unsignedValue)
        let minIncrement = Int64(bitPattern: 0 &- unsignedValue)
        if unsignedValue > maximum || (increment > 0 && increment > maxIncrement) {
            overflows = true
            limited = Int64(bitPattern: maximum)
        } else if increment < 0 && increment < minIncrement {
            overflows = true
            limited = 0
        } else {
            overflows = false
        }
        if overflows && operation.overflow == .wrap {
            limited = Int64(bitPattern: (unsignedValue &+ UInt64(bitPattern: increment)) & ~(UInt64.max << bits))
        }
    }
    if overflows && operation.overflow == .fail { return nil }
    return overflows ? limited : value &+ increment
}
