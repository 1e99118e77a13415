// FunctionPayload.swift: FUNCTION DUMP's payload, in Redis's format (the
// one DUMP uses for keys): each library as the RDB function opcode
// (RDB_OPCODE_FUNCTION2, 245) and its code as an RDB string, then the RDB
// version (2 bytes, little-endian) and the CRC-64 of everything before it
// (8 bytes, little-endian). FUNCTION RESTORE reads it back, with Redis's
// checks and errors; so a payload moves between kvd and redis-server.

/// FUNCTION DUMP and RESTORE's payload.
enum FunctionPayload {
    /// The payload holding `codes` (each a library's whole code).
    static func dump(_ codes: [[UInt8]]) -> [UInt8] {
        var payload: [UInt8] = []
        for code in codes {
            payload.append(RDBFormat.function2)
            appendLength(&payload, code.count)
            payload += code
        }
        payload.append(UInt8(RDBFormat.version & 0xFF))
        payload.append(UInt8(RDBFormat.version >> 8))
        var crc = CRC64()
        crc.update(payload)
        withUnsafeBytes(of: crc.value.littleEndian) { payload += $0 }
        return payload
    }

    /// RDB's length encoding (RDBWriter.length, into memory).
    private static func appendLength(_ payload: inout [UInt8], _ value: Int) {
        switch value {
        case ..<64: payload.append(UInt8(value))
        case ..<16_384: payload += [0x40 | UInt8(value >> 8), UInt8(value & 0xFF)]
        case ...Int(UInt32.max):
            payload.append(0x80)
            withUnsafeBytes(of: UInt32(value).bigEndian) { payload += $0 }
        default:
            payload.append(0x81)
            withUnsafeBytes(of: UInt64(value).bigEndian) { payload += $0 }
        }
    }

    /// The libraries' codes in `payload`, or FUNCTION RESTORE's error.
    static func libraries(in payload: [UInt8]) -> Result<[[UInt8]], ScriptError> {
        // Redis's verifyDumpPayload: a footer, a version it reads, the checksum.
        guard payload.count >= 10 else {
            return .failure(ScriptError("ERR DUMP payload version or checksum are wrong"))
        }
        let footer = payload.count - 10
        let version = Int(payload[footer]) | Int(payload[footer + 1]) << 8
        var crc = CRC64()
        crc.update(Array(payload[..<(payload.count - 8)]))
        let stored = payload[(payload.count - 8)...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard version <= RDBFormat.version, crc.value == stored else {
            return .failure(ScriptError("ERR DUMP payload version or checksum are wrong"))
        }
        let input = RDBInput(bytes: Array(payload[..<footer]))
        var codes: [[UInt8]] = []
        var consumed = 0
        while consumed < footer {
            let type: UInt8
            do { type = try input.byte() } catch { return .failure(ScriptError("ERR can not read data type")) }
            guard type == RDBFormat.function || type == RDBFormat.function2 else {
                return .failure(ScriptError("ERR given type is not a function"))
            }
            do {
                codes.append(try RDBLoader.functionCode(type, input))
            } catch {
                return .failure(ScriptError("ERR Failed loading library payload"))
            }
            consumed = input.offset
        }
        return .success(codes)
    }
}
