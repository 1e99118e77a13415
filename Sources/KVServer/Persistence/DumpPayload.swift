// DumpPayload.swift: the payload DUMP and FUNCTION DUMP answer and RESTORE
// and FUNCTION RESTORE take, in Redis's format: RDB data (a key's value
// after its type byte, or function libraries), then a footer of the RDB
// version (2 bytes, little-endian) and the CRC-64 of everything before it
// (8 bytes, little-endian). So a payload moves between kvd and
// redis-server both ways.

/// DUMP's payload: made, and checked.
enum DumpPayload {
    /// `entry`'s value as DUMP answers it: its RDB type and its value, as
    /// kvd writes them in a file (the plain encodings, which redis-server
    /// reads and converts), then the footer.
    static func dump(_ entry: Keyspace.Entry) -> [UInt8] {
        sealed { out in
            try out.byte(RDBWriter.objectType(entry))
            try RDBWriter.object(out, entry)
        }
    }

    /// What `write` writes, then the footer.
    static func sealed(_ write: (RDBOutput) throws -> Void) -> [UInt8] {
        let out = RDBOutput()
        do {
            try write(out)
            try out.bytes([UInt8(RDBFormat.version & 0xFF), UInt8(RDBFormat.version >> 8)])
            try out.finish()
        } catch {
            // An output in memory never writes to a descriptor, the one thing that throws.
            preconditionFailure("DumpPayload: writing to memory failed: \(error)")
        }
        return out.buffer
    }

    /// True when `payload`'s footer holds a version kvd reads and the
    /// right checksum (Redis's verifyDumpPayload).
    static func verifies(_ payload: [UInt8]) -> Bool {
        guard payload.count >= 10 else { return false }
        let footer = payload.count - 10
        let version = Int(payload[footer]) | Int(payload[footer + 1]) << 8
        var crc = CRC64()
        payload.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[..<(payload.count - 8)])) }
        return version <= RDBFormat.version && crc.value == payload.littleEndian(at: payload.count - 8, bytes: 8)
    }
}
