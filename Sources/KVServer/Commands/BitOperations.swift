// BitOperations.swift: BITOP, bitwise AND, OR, XOR and NOT over strings,
// as Redis does it: shorter strings (and missing keys) read as zero bytes
// up to the longest; an empty result deletes the destination.

let bitOperationCommands: [Command] = [
    Command("bitop", arity: -4, keys: .none, bitop)
]

private func bitop(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let operation = String(decoding: lowercased(r[1]), as: UTF8.self)
    guard ["and", "or", "xor", "not"].contains(operation) else { return out.error("ERR syntax error") }
    guard operation != "not" || r.count == 4 else {
        return out.error("ERR BITOP NOT must be called with a single source key.")
    }
    let now = ks.now
    var sources: [[UInt8]] = []
    for index in 3..<r.count {
        guard let entry = ks.lookup(r.raw(index), now: now, use: .read) else {
            sources.append([])
            continue
        }
        guard entry.collection == nil else { return out.error(wrongTypeError) }
        sources.append(entry.value)
    }
    let length = sources.map(\.count).max() ?? 0
    guard length > 0 else {
        if ks.remove(r.raw(2)) { ks.notify(.generic, "del", r.raw(2)) }
        return out.integer(0)
    }
    var result = [UInt8](repeating: 0, count: length)
    // The operation chosen once, not per byte.
    let negate = operation == "not"
    let combine: (UInt8, UInt8) -> UInt8
    switch operation {
    case "and": combine = { $0 & $1 }
    case "or": combine = { $0 | $1 }
    default: combine = { $0 ^ $1 }
    }
    result.withUnsafeMutableBufferPointer { target in
        for (position, source) in sources.enumerated() {
            source.withUnsafeBufferPointer { bytes in
                for index in 0..<length {
                    let byte = index < bytes.count ? bytes[index] : 0
                    if negate {
                        target[index] = ~byte
                    } else {
                        target[index] = position == 0 ? byte : combine(target[index], byte)
                    }
                }
            }
        }
    }
    ks.set(r[2], result, expiresAt: nil, form: .raw)
    ks.notify(.string, "set", r.raw(2))
    out.integer(length)
}
