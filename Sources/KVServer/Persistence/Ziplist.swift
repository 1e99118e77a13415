// Ziplist.swift: reads a ziplist, the compact encoding of Redis before
// 7.0 (lists' quicklist nodes in RDB_TYPE_LIST_QUICKLIST, small hashes and
// sorted sets), which redis-server 7.0 still loads from old files
// (src/ziplist.c describes the format; this is written from it). Header:
// total bytes, offset of the tail (4 bytes each), count (2 bytes), all
// little-endian; then entries, then 0xFF. An entry is the previous
// entry's length (1 byte, or 0xFE and 4 bytes), an encoding (a string of
// 6-, 14- or 32-bit big-endian length, or an integer of 8, 16, 24, 32 or
// 64 bits, or 0..12 in the encoding byte itself) and the data.

/// Ziplist decoding.
enum Ziplist {
    /// The elements of `blob`, integers in decimal; nil when malformed.
    static func elements(_ blob: [UInt8]) -> [[UInt8]]? {
        guard blob.count >= 11, Int(blob.littleEndian(at: 0, bytes: 4)) == blob.count else { return nil }
        var elements: [[UInt8]] = []
        var index = 10
        while true {
            guard index < blob.count else { return nil }
            if blob[index] == 0xFF { break }
            index += blob[index] == 0xFE ? 5 : 1
            guard index < blob.count else { return nil }
            let encoding = blob[index]
            switch encoding >> 6 {
            case 0:
                guard let bytes = blob.slice(index + 1, Int(encoding & 0x3F)) else { return nil }
                elements.append(bytes)
                index += 1 + bytes.count
            case 1:
                guard index + 1 < blob.count else { return nil }
                let length = Int(encoding & 0x3F) << 8 | Int(blob[index + 1])
                guard let bytes = blob.slice(index + 2, length) else { return nil }
                elements.append(bytes)
                index += 2 + length
            case 2:
                guard index + 5 <= blob.count else { return nil }
                var length = 0
                for k in 1...4 { length = length << 8 | Int(blob[index + k]) }
                guard let bytes = blob.slice(index + 5, length) else { return nil }
                elements.append(bytes)
                index += 5 + length
            default:
                let width: Int
                switch encoding {
                case 0xC0: width = 2
                case 0xD0: width = 4
                case 0xE0: width = 8
                case 0xF0: width = 3
                case 0xFE: width = 1
                case 0xF1...0xFD:
                    elements.append(decimal(Int64(encoding & 0x0F) - 1))
                    index += 1
                    continue
                default: return nil
                }
                guard index + 1 + width <= blob.count else { return nil }
                elements.append(decimal(signExtend(blob.littleEndian(at: index + 1, bytes: width), bits: width * 8)))
                index += 1 + width
            }
        }
        guard index == blob.count - 1 else { return nil }
        return elements
    }
}
