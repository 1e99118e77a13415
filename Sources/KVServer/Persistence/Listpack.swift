// Listpack.swift: reads a listpack, the compact encoding Redis 7.0 stores
// small hashes and sorted sets in, and the nodes of its quicklists
// (src/listpack.c describes the format; this is written from it). A
// listpack is a 4-byte total length and a 2-byte count (little-endian),
// the entries, and 0xFF. Each entry is an encoding byte that says what
// follows (a small integer in the byte itself, an integer of 13, 16, 24,
// 32 or 64 bits, or a string of 6-, 12- or 32-bit length), the data, and
// its own length backwards (1 to 5 bytes), which a forward reader skips.

/// Listpack decoding.
enum Listpack {
    /// The elements of `blob`, integers in decimal as Redis would answer
    /// them; nil when the blob is malformed (a length past its end, an
    /// unknown encoding, a missing terminator).
    static func elements(_ blob: [UInt8]) -> [[UInt8]]? {
        guard blob.count >= 7 else { return nil }
        let total = Int(blob.littleEndian(at: 0, bytes: 4))
        guard total == blob.count else { return nil }
        var elements: [[UInt8]] = []
        var index = 6
        while true {
            guard index < blob.count else { return nil }
            let first = blob[index]
            if first == 0xFF { break }
            let start = index
            if first & 0x80 == 0 {
                elements.append(decimal(Int64(first)))
                index += 1
            } else if first & 0xC0 == 0x80 {
                let length = Int(first & 0x3F)
                guard let bytes = blob.slice(index + 1, length) else { return nil }
                elements.append(bytes)
                index += 1 + length
            } else if first & 0xE0 == 0xC0 {
                guard index + 1 < blob.count else { return nil }
                elements.append(decimal(signExtend(UInt64(first & 0x1F) << 8 | UInt64(blob[index + 1]), bits: 13)))
                index += 2
            } else if first & 0xF0 == 0xE0 {
                guard index + 1 < blob.count else { return nil }
                let length = Int(first & 0x0F) << 8 | Int(blob[index + 1])
                guard let bytes = blob.slice(index + 2, length) else { return nil }
                elements.append(bytes)
                index += 2 + length
            } else {
                let width: Int
                switch first {
                case 0xF0:
                    guard index + 5 <= blob.count else { return nil }
                    let length = Int(blob.littleEndian(at: index + 1, bytes: 4))
                    guard let bytes = blob.slice(index + 5, length) else { return nil }
                    elements.append(bytes)
                    index += 5 + length
                    index += backLengthSize(index - start)
                    continue
                case 0xF1: width = 2
                case 0xF2: width = 3
                case 0xF3: width = 4
                case 0xF4: width = 8
                default: return nil
                }
                guard index + 1 + width <= blob.count else { return nil }
                elements.append(decimal(signExtend(blob.littleEndian(at: index + 1, bytes: width), bits: width * 8)))
                index += 1 + width
            }
            index += backLengthSize(index - start)
        }
        guard index == blob.count - 1 else { return nil }
        return elements
    }

    /// How many bytes the backward length of an entry of `length` bytes takes.
    private static func backLengthSize(_ length: Int) -> Int {
        switch length {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        case ..<268_435_456: 4
        default: 5
        }
    }
}

/// `value`'s low `bits` bits as a two's-complement number.
func signExtend(_ value: UInt64, bits: Int) -> Int64 {
    guard bits < 64 else { return Int64(bitPattern: value) }
    let shift = UInt64(64 - bits)
    return Int64(bitPattern: value << shift) >> Int64(shift)
}

/// `value` in decimal, as Redis answers an integer-encoded element.
func decimal(_ value: Int64) -> [UInt8] {
    Array(String(value).utf8)
}

extension Array where Element == UInt8 {
    /// The `bytes`-byte little-endian number at `offset` (the caller checked the bounds).
    func littleEndian(at offset: Int, bytes: Int) -> UInt64 {
        var value: UInt64 = 0
        for k in 0..<bytes { value |= UInt64(self[offset + k]) << (8 * UInt64(k)) }
        return value
    }

    /// The `length` bytes at `offset`, or nil when they pass the end.
    func slice(_ offset: Int, _ length: Int) -> [UInt8]? {
        guard length >= 0, offset <= count, length <= count - offset else { return nil }
        return Array(self[offset..<offset + length])
    }
}
