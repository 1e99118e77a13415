// HyperLogLogCommands.swift: PFADD, PFCOUNT, PFMERGE, and the debugging
// commands PFDEBUG and PFSELFTEST, as Redis 7.0's hyperloglog.c answers
// them, over the strings Storage/Types/HyperLogLog.swift reads and writes.
// PFCOUNT of one key stores the count it computed in the value, a change
// the append-only file logs (as Redis propagates it), and WATCH sees.

let hyperLogLogCommands: [Command] = [
    Command("pfadd", arity: -2, keys: .one, pfadd),
    Command("pfcount", arity: -2, keys: .all, pfcount),
    Command("pfmerge", arity: -2, keys: .all, pfmerge),
    Command("pfdebug", arity: 3, keys: .none, pfdebug),
    Command("pfselftest", arity: 1, keys: .none, pfselftest),
]

/// A string that is not a HyperLogLog (Redis's wording).
private let notHyperLogLogError = "WRONGTYPE Key is not a valid HyperLogLog string value."
/// Sparse opcodes that do not cover every register.
private let corruptError = "INVALIDOBJ Corrupted HLL object detected"

/// What a command found at a key it changes in place.
private enum Found<Value> {
    case collection
    case notHyperLogLog
    case corrupt
    case done(Value)

    /// The error to answer, if any.
    var error: String? {
        switch self {
        case .collection: return wrongTypeError
        case .notHyperLogLog: return notHyperLogLogError
        case .corrupt: return corruptError
        case .done: return nil
        }
    }
}

/// Runs `body` on the HyperLogLog at `key` in place (nil when the key is
/// absent); `body` says whether it changed the value.
private func updateHyperLogLog<Value>(
    _ ks: Keyspace, _ key: UnsafeRawBufferPointer, _ body: (inout [UInt8]) -> (Found<Value>, changed: Bool)
) -> Found<Value>? {
    // A valid one is left raw, changed or not, as Redis's
    // dbUnshareStringValue leaves it after isHLLObjectOrReply.
    ks.update(
        key, now: ks.now, ifCollection: { .collection }, leaving: .raw,
        evenUnchanged: { if case .notHyperLogLog = $0 { false } else { true } }
    ) { value in
        guard HyperLogLog.isValid(value) else { return (.notHyperLogLog, false) }
        return body(&value)
    }
}

private func pfadd(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let limit = ks.limits.hllSparseBytes
    let found: Found<Int>? = updateHyperLogLog(ks, r.raw(1)) { value in
        var grown = 0
        for index in 2..<r.count {
            switch HyperLogLog.add(r.raw(index), to: &value, sparseLimit: limit) {
            case nil:
                // The registers grown before stay grown, their cached count
                // stale, as in Redis; nothing is logged (Redis's dirty is
                // not counted either).
                if grown > 0 { HyperLogLog.invalidateCache(&value) }
                return (.corrupt, false)
            case 1?: grown += 1
            default: break
            }
        }
        if grown > 0 { HyperLogLog.invalidateCache(&value) }
        return (.done(grown), grown > 0)
    }
    if let found {
        if let error = found.error { return out.error(error) }
        guard case .done(let grown) = found else { return }
        // Redis counts a change per register grown.
        if grown > 1 { ks.fence.changes += grown - 1 }
        if grown > 0 { ks.notify(.string, "pfadd", r.raw(1)) }
        return out.integer(grown > 0 ? 1 : 0)
    }
    var value = HyperLogLog.empty()
    var grown = 1
    for index in 2..<r.count {
        if HyperLogLog.add(r.raw(index), to: &value, sparseLimit: limit) == 1 { grown += 1 }
    }
    HyperLogLog.invalidateCache(&value)
    ks.set(r.raw(1), storing: value, expiresAt: nil, form: .raw)
    ks.fence.changes += grown - 1
    ks.notify(.string, "pfadd", r.raw(1))
    out.integer(1)
}

private func pfcount(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count == 2 else {
        // Several keys: the count of their union, computed apart (no cache).
        var registers = [UInt8](repeating: 0, count: HyperLogLog.registerCount)
        guard let error = mergeSources(ks, r, from: 1, into: &registers, dense: nil) else {
            return out.integer(Int(bitPattern: UInt(HyperLogLog.count(registers: registers))))
        }
        return out.error(error)
    }
    // A count read from the cache of a raw value is a read: no write
    // access to the key (which, during BGSAVE, would make its shard the
    // keyspace's own). Redis makes the value raw first.
    if let entry = ks.lookup(r.raw(1), now: ks.now), entry.collection == nil, entry.form == .raw,
        HyperLogLog.isValid(entry.value), let cached = HyperLogLog.cachedCount(entry.value)
    {
        return out.integer(Int(bitPattern: UInt(cached)))
    }
    let found: Found<UInt64>? = updateHyperLogLog(ks, r.raw(1)) { value in
        if let cached = HyperLogLog.cachedCount(value) { return (.done(cached), false) }
        guard let count = HyperLogLog.count(value) else { return (.corrupt, false) }
        HyperLogLog.storeCount(count, in: &value)
        return (.done(count), true)
    }
    guard let found else { return out.integer(0) }
    guard case .done(let count) = found else { return out.error(found.error!) }
    out.integer(Int(bitPattern: UInt(count)))
}

/// Raises `registers` to those of the HyperLogLogs at arguments `first`
/// onward (an absent key is an empty one); the error to answer, if any.
/// `dense` is set when one of them is dense.
private func mergeSources(
    _ ks: Keyspace, _ r: Request, from first: Int, into registers: inout [UInt8], dense: UnsafeMutablePointer<Bool>?
) -> String? {
    let now = ks.now
    for index in first..<r.count {
        guard let entry = ks.lookup(r.raw(index), now: now, use: .read) else { continue }
        guard entry.collection == nil else { return wrongTypeError }
        guard HyperLogLog.isValid(entry.value) else { return notHyperLogLogError }
        if entry.value[4] == HyperLogLog.dense { dense?.pointee = true }
        guard HyperLogLog.merge(entry.value, into: &registers) else { return corruptError }
    }
    return nil
}

/// PFMERGE destination source...: the destination (counted among the
/// sources) holds each register's highest value; dense when any of them
/// was, sparse otherwise (until it grows past the limit).
private func pfmerge(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    var registers = [UInt8](repeating: 0, count: HyperLogLog.registerCount)
    var anyDense = false
    if let error = mergeSources(ks, r, from: 1, into: &registers, dense: &anyDense) { return out.error(error) }
    let limit = ks.limits.hllSparseBytes
    func write(_ value: inout [UInt8]) -> Bool {
        if anyDense && !HyperLogLog.makeDense(&value) { return false }
        for (register, count) in registers.enumerated() where count > 0 {
            // As in Redis, a corrupt destination's failure here is not
            // reported: the merge above has read it whole.
            _ = HyperLogLog.raise(register, to: Int(count), in: &value, sparseLimit: limit)
        }
        HyperLogLog.invalidateCache(&value)
        return true
    }
    let found: Found<Void>? = updateHyperLogLog(ks, r.raw(1)) { value in
        write(&value) ? (.done(()), true) : (.corrupt, false)
    }
    if let found, let error = found.error { return out.error(error) }
    if found == nil {
        var value = HyperLogLog.empty()
        _ = write(&value)
        ks.set(r.raw(1), storing: value, expiresAt: nil, form: .raw)
    }
    ks.notify(.string, "pfadd", r.raw(1))
    out.ok()
}

/// PFDEBUG GETREG | DECODE | ENCODING | TODENSE key: the key is looked
/// up (and checked) before the subcommand, as in Redis. GETREG and TODENSE
/// turn a sparse value dense: a change the append-only file logs (Redis's
/// dirty++), which a WATCH does not see (Redis does not signal the key).
private func pfdebug(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let subcommand = String(decoding: lowercased(r[1]), as: UTF8.self)
    enum Answer {
        case registers([UInt8])
        case text([UInt8])
        case status(String)
        case integer(Int)
        case error([UInt8])
    }
    var converted = false
    let found: Found<Answer>? = updateHyperLogLog(ks, r.raw(2)) { value in
        let wasSparse = value[4] == HyperLogLog.sparse
        switch subcommand {
        case "getreg", "todense":
            guard HyperLogLog.makeDense(&value) else { return (.corrupt, false) }
            converted = wasSparse
            if subcommand == "todense" { return (.done(.integer(wasSparse ? 1 : 0)), false) }
            return (.done(.registers(HyperLogLog.registers(value) ?? [])), false)
        case "decode":
            guard wasSparse else { return (.done(.error(Array("ERR HLL encoding is not sparse".utf8))), false) }
            return (.done(.text(HyperLogLog.describeSparse(value))), false)
        case "encoding":
            return (.done(.status(wasSparse ? "sparse" : "dense")), false)
        default:
            // The name as sent, its bytes (newlines become spaces in the reply).
            return (
                .done(.error(Array("ERR Unknown PFDEBUG subcommand '".utf8) + ReplyWriter.quoted(r[1]) + [39])), false
            )
        }
    }
    if converted { ks.fence.changes += 1 }
    guard let found else { return out.error("ERR The specified key does not exist") }
    guard case .done(let answer) = found else { return out.error(found.error!) }
    switch answer {
    case .registers(let registers):
        out.arrayHeader(registers.count)
        for register in registers { out.integer(Int(register)) }
    case .text(let text): out.bulk(text)
    case .status(let text): out.status(text)
    case .integer(let value): out.integer(value)
    case .error(let message): out.error(bytes: message)
    }
}

/// PFSELFTEST: Redis's own check of the implementation. Dense registers
/// set to random values read back unchanged (and leave their neighbours
/// alone), 1,000 times over; then ten million distinct elements go into a
/// dense and a sparse HyperLogLog at once, which must agree, stay sparse
/// while small, and count within six standard errors at each power of ten.
/// Seconds of work on the core, as in Redis: a debugging command.
private func pfselftest(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    var random = CommandRandom()
    var dense = [UInt8](repeating: 0, count: HyperLogLog.denseSize)
    dense[4] = HyperLogLog.dense
    var expected = [UInt8](repeating: 0, count: HyperLogLog.registerCount)
    let failure: String? = dense.withUnsafeMutableBufferPointer { bytes in
        let registers = UnsafeMutableBufferPointer(rebasing: bytes[HyperLogLog.headerSize...])
        for _ in 0..<1000 {
            for index in 0..<HyperLogLog.registerCount {
                let value = UInt8(truncatingIfNeeded: random.next() & 63)
                expected[index] = value
                HyperLogLog.setRegister(index, to: value, in: registers)
            }
            for index in 0..<HyperLogLog.registerCount {
                let value = HyperLogLog.register(index, in: UnsafeBufferPointer(registers))
                if value != expected[index] {
                    return "TESTFAILED Register \(index) should be \(expected[index]) but is \(value)"
                }
            }
        }
        return nil
    }
    if let failure { return out.error(failure) }
    dense.replaceSubrange(HyperLogLog.headerSize..., with: repeatElement(0, count: HyperLogLog.denseSize - 16))
    dense.replaceSubrange(0..<4, with: "HYLL".utf8)
    var sparse = HyperLogLog.empty()
    let limit = ks.limits.hllSparseBytes
    let relativeError = 1.04 / Double(HyperLogLog.registerCount).squareRoot()
    let seed = random.next()
    var checkpoint: UInt64 = 1
    for element in 1...UInt64(10_000_000) {
        var bytes = (element ^ seed).littleEndian
        withUnsafeBytes(of: &bytes) { element in
            _ = HyperLogLog.add(element, to: &dense, sparseLimit: limit)
            _ = HyperLogLog.add(element, to: &sparse, sparseLimit: limit)
        }
        guard element == checkpoint else { continue }
        if element < limit / 2 && sparse[4] != HyperLogLog.sparse {
            return out.error("TESTFAILED sparse encoding not used")
        }
        let count = HyperLogLog.count(dense) ?? 0
        guard HyperLogLog.count(sparse) == count else { return out.error("TESTFAILED dense/sparse disagree") }
        let error = count > checkpoint ? count - checkpoint : checkpoint - count
        // At 10 a collision is likely enough now and then to allow 1.
        let allowed = element == 10 ? 1 : UInt64((relativeError * 6 * Double(checkpoint)).rounded(.up))
        if error > allowed { return out.error("TESTFAILED Too big error. card:\(checkpoint) abserr:\(error)") }
        checkpoint *= 10
    }
    out.ok()
}
