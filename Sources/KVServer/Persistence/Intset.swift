// Intset.swift: reads an intset, Redis's encoding of a small set of
// integers (RDB_TYPE_SET_INTSET; src/intset.c describes it): the width of
// each member (2, 4 or 8 bytes), the count, and the members sorted,
// every number little-endian.

/// Intset decoding.
enum Intset {
    /// The members of `blob` in decimal; nil when malformed.
    static func members(_ blob: [UInt8]) -> [[UInt8]]? {
        guard blob.count >= 8 else { return nil }
        let width = Int(blob.littleEndian(at: 0, bytes: 4))
        let count = Int(blob.littleEndian(at: 4, bytes: 4))
        guard [2, 4, 8].contains(width), blob.count == 8 + width * count else { return nil }
        return (0..<count).map {
            decimal(signExtend(blob.littleEndian(at: 8 + $0 * width, bytes: width), bits: width * 8))
        }
    }
}
