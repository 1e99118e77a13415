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

    /// `tables[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
    private static let tables: [[UInt64]] = {
        var first = [UInt64](repeating: 0, count: 256)
        for byte in 0..<256 {
            var crc = UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ reflected : crc >> 1 }
            first[byte] = crc
        }
        var tables = [first]
        for k in 1..<8 {
            tables.append(
                (0..<256).map { byte in
                    let previous = tables[k - 1][byte]
                    return first[Int(previous & 0xFF)] ^ (previous >> 8)
                })
        }
        return tables
    }()

    /// Feeds `bytes`.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var crc = value
        var index = 0
        let count = bytes.count
        CRC64.tables.withUnsafeBufferPointer { tables in
            let t0 = tables[0], t1 = tables[1], t2 = tables[2], t3 = tables[3]
            let t4 = tables[4], t5 = tables[5], t6 = tables[6], t7 = tables[7]
            while count - index >= 8 {
                let word = crc ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian
                crc =
                    t7[Int(word & 0xFF)] ^ t6[Int((word >> 8) & 0xFF)] ^ t5[Int((word >> 16) & 0xFF)]
                    ^ t4[Int((word >> 24) & 0xFF)] ^ t3[Int((word >> 32) & 0xFF)] ^ t2[Int((word >> 40) & 0xFF)]
                    ^ t1[Int((word >> 48) & 0xFF)] ^ t0[Int(word >> 56)]
                index += 8
            }
            while index < count {
                crc = t0[Int((crc ^ UInt64(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        value = crc
    }

    /// Feeds `bytes`.
    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }
}
