// CRC64.swift: the checksum at the end of an RDB file, as Redis computes
// it (src/crc64.c): CRC-64/Jones, polynomial 0xad93d23594c935a9, reflected
// input and output, initial value 0, no final xor. Its check value, the
// CRC of "123456789", is 0xe9c6d914c4b8d9ca (a test pins it). Written
// here from that definition, slice-by-8: eight table lookups per 8 bytes,
// so a snapshot of a few hundred megabytes costs the writer thread well
// under a second of checksum.

/// A running CRC-64/Jones.
struct CRC64 {
    private(set) var value: UInt64 = 0

    /// The polynomial, bit-reversed (the reflected algorithm's form).
    private static let reflected: UInt64 = 0x95AC_9329_AC4B_C9B5

    /// `tables[256 * k + b]`: the CRC of byte `b` followed by `k` zero
    /// bytes. One block, read through a pointer: eight arrays, each
    /// lookup bounds-checked, made a snapshot load's checksum cost about 9
    /// instructions a byte (callgrind). Built once, never written after.
    nonisolated(unsafe) private static let tables: UnsafePointer<UInt64> = {
        let tables = UnsafeMutablePointer<UInt64>.allocate(capacity: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ reflected : crc >> 1 }
            tables[byte] = crc
        }
        for k in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[256 * (k - 1) + byte]
                tables[256 * k + byte] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return UnsafePointer(tables)
    }()

    /// Feeds `bytes`.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var crc = value
        var index = 0
        let count = bytes.count
        let t = CRC64.tables
        while count - index >= 8 {
            let word = crc ^ (base + index).loadUnaligned(as: UInt64.self).littleEndian
            crc =
                t[7 * 256 + Int(word & 0xFF)] ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                ^ t[256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
            index += 8
        }
        while index < count {
            crc = t[Int((crc ^ UInt64(base.load(fromByteOffset: index, as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
            index += 1
        }
        value = crc
    }

    /// Feeds `bytes`.
    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }
}
