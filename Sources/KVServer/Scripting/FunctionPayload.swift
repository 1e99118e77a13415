// FunctionPayload.swift: FUNCTION DUMP's payload, in Redis's format (the
// one DUMP uses for keys, Persistence/DumpPayload.swift): each library as
// the RDB function opcode (RDB_OPCODE_FUNCTION2, 245) and its code as an
// RDB string, then DUMP's footer. FUNCTION RESTORE reads it back, with Redis's
// checks and errors; so a payload moves between kvd and redis-server.

/// FUNCTION DUMP and RESTORE's payload.
enum FunctionPayload {
    /// The payload holding `codes` (each a library's whole code).
    static func dump(_ codes: [[UInt8]]) -> [UInt8] {
        DumpPayload.sealed { out in
            for code in codes {
                try out.byte(RDBFormat.function2)
                try RDBWriter.string(out, code)
            }
        }
    }

    /// The libraries' codes in `payload`, or FUNCTION RESTORE's error.
    static func libraries(in payload: [UInt8]) -> Result<[[UInt8]], ScriptError> {
        guard DumpPayload.verifies(payload) else {
            return .failure(ScriptError("ERR DUMP payload version or checksum are wrong"))
        }
        let contents = Array(payload.dropLast(10))
        let input = RDBInput(bytes: contents)
        var codes: [[UInt8]] = []
        var consumed = 0
        while consumed < contents.count {
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
