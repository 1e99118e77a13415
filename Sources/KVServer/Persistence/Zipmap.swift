// Zipmap.swift: reads a zipmap, the small-hash encoding of Redis 2.x
// (RDB_TYPE_HASH_ZIPMAP), which redis-server 7.0 still loads
// (src/zipmap.c describes it): a count byte, then per pair the field's
// length (1 byte, or 254 and 4 bytes little-endian), the field, the
// value's length, a byte of free space, the value and that free space;
// 0xFF ends it.

/// Zipmap decoding.
enum Zipmap {
    /// Fields and values, alternating; nil when malformed.
    static func elements(_ blob: [UInt8]) -> [[UInt8]]? {
        var elements: [[UInt8]] = []
        var index = 1
        func length() -> Int? {
            guard index < blob.count else { return nil }
            let first = blob[index]
            if first < 254 {
                index += 1
                return Int(first)
            }
            guard first == 254, index + 5 <= blob.count else { return nil }
            defer { index += 5 }
            return Int(blob.littleEndian(at: index + 1, bytes: 4))
        }
        while index < blob.count && blob[index] != 0xFF {
            guard let fieldLength = length(), let field = blob.slice(index, fieldLength) else { return nil }
            index += fieldLength
            guard let valueLength = length(), index < blob.count else { return nil }
            let free = Int(blob[index])
            guard let value = blob.slice(index + 1, valueLength) else { return nil }
            index += 1 + valueLength + free
            elements.append(field)
            elements.append(value)
        }
        guard index == blob.count - 1 else { return nil }
        return elements
    }
}
