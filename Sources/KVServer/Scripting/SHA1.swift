// SHA1.swift: SHA-1 in hex, the name of a script in Redis (EVALSHA, SCRIPT
// LOAD) and what redis.sha1hex returns. Not for security: Redis uses it to
// name script bodies, and kvd must name them the same way.

/// The SHA-1 digest of `message` as 40 lowercase hex digits.
func sha1Hex(_ message: UnsafeRawBufferPointer) -> String {
    var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    var padded = Array(message)
    let bitLength = UInt64(message.count) * 8
    padded.append(0x80)
    while padded.count % 64 != 56 { padded.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
        padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    var w = [UInt32](repeating: 0, count: 80)
    for chunk in stride(from: 0, to: padded.count, by: 64) {
        for i in 0..<16 {
            let b = chunk + 4 * i
            w[i] =
                UInt32(padded[b]) << 24 | UInt32(padded[b + 1]) << 16 | UInt32(padded[b + 2]) << 8
                | UInt32(padded[b + 3])
        }
        for i in 16..<80 {
            let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
            w[i] = x << 1 | x >> 31
        }
        var (a, b, c, d, e) = h
        for i in 0..<80 {
            let (f, k): (UInt32, UInt32) =
                switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
            let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
            (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
        }
        h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
    }
    let hex = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for word in [h.0, h.1, h.2, h.3, h.4] {
        for shift in stride(from: 28, through: 0, by: -4) { out.append(hex[Int(word >> UInt32(shift) & 15)]) }
    }
    return String(decoding: out, as: UTF8.self)
}

/// The SHA-1 digest of `message` as 40 lowercase hex digits.
func sha1Hex(_ message: [UInt8]) -> String {
    message.withUnsafeBytes { sha1Hex($0) }
}
