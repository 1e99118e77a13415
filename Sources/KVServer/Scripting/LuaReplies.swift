// LuaReplies.swift: the two conversions between RESP and Lua that Redis 7.0
// makes (script_lua.c): a command's reply, as redis.call returns it to the
// script (integers as numbers, nulls as false, status and error replies as
// {ok=...} and {err=...} tables, RESP3's types as tables of their own), and
// the script's result, as the client receives it (numbers truncated to
// integers, arrays cut at the first nil, the same tables back).
import CLua
import Glibc

/// Lua's type tags, as `lua_type` returns them.
enum LuaType {
    static let none = Int32(LUA_TNONE)
    static let `nil` = Int32(LUA_TNIL)
    static let boolean = Int32(LUA_TBOOLEAN)
    static let number = Int32(LUA_TNUMBER)
    static let string = Int32(LUA_TSTRING)
    static let table = Int32(LUA_TTABLE)
}

/// The bytes of the string (or number) at `index`, nil for other types.
func luaBytes(_ L: OpaquePointer, _ index: Int32) -> [UInt8]? {
    var length = 0
    guard let pointer = lua_tolstring(L, index, &length) else { return nil }
    return Array(UnsafeRawBufferPointer(start: pointer, count: length))
}

func luaPush(_ L: OpaquePointer, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { lua_pushlstring(L, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
}

func luaPush(_ L: OpaquePointer, _ text: String) {
    luaPush(L, Array(text.utf8))
}

/// Pushes `message` as luaL_error raises it: after the calling script's
/// position (`user_script:1: `).
func luaPushLibraryError(_ L: OpaquePointer, _ message: String) {
    luaL_where(L, 1)
    luaPush(L, message)
    lua_concat(L, 2)
}

/// Sets `table[key] = value` on the table on top of the stack (raw).
func luaSetField(_ L: OpaquePointer, _ key: String, _ pushValue: () -> Void) {
    luaPush(L, key)
    pushValue()
    lua_rawset(L, -3)
}

/// Pushes Redis's error table, `{err = "CODE message"}` (luaPushErrorBuff):
/// `error` is `-CODE message` or a bare message, which gets the code ERR;
/// line ends are trimmed. Like `lua_pushstring`, it stops at a NUL byte.
func luaPushError(_ L: OpaquePointer, _ error: [UInt8]) {
    var code = Array("ERR".utf8)
    var message = error
    if error.first == UInt8(ascii: "-") {
        if let space = error.firstIndex(of: 32) {
            code = Array(error[1..<space])
            message = Array(error[(space + 1)...])
        } else {
            message = Array(error.dropFirst())
        }
    }
    let trim: Set<UInt8> = [13, 10]
    while let last = message.last, trim.contains(last) { message.removeLast() }
    while let first = message.first, trim.contains(first) { message.removeFirst() }
    var text = code + [32] + message
    if let nul = text.firstIndex(of: 0) { text.removeSubrange(nul...) }
    lua_createtable(L, 0, 1)
    luaSetField(L, "err") { luaPush(L, text) }
}

/// Pushes the error table for a failure the script itself caused, marked
/// as Redis marks it (`ignore_error_stats_update`).
func luaPushCallError(_ L: OpaquePointer, _ error: String) {
    luaPushError(L, Array(error.utf8))
    luaSetField(L, "ignore_error_stats_update") { lua_pushboolean(L, 1) }
}

// MARK: - A command's reply, to Lua

/// Reads one RESP reply from `bytes` at `index` and pushes its Lua value;
/// `index` ends past it. The reply is kvd's own, so it is well formed.
func luaPushReply(_ L: OpaquePointer, _ bytes: [UInt8], _ index: inout Int) {
    lua_checkstack(L, 5)
    let type = bytes[index]
    let lineStart = index + 1
    var lineEnd = lineStart
    while bytes[lineEnd] != 13 { lineEnd += 1 }
    let line = Array(bytes[lineStart..<lineEnd])
    index = lineEnd + 2
    let number = parseInteger(line) ?? 0
    switch type {
    case UInt8(ascii: ":"):
        lua_pushnumber(L, lua_Number(number))
    case UInt8(ascii: "$"), UInt8(ascii: "="):
        guard number >= 0 else { return lua_pushboolean(L, 0) }
        let body = Array(bytes[index..<(index + number)])
        index += number + 2
        if type == UInt8(ascii: "$") { return luaPush(L, body) }
        lua_createtable(L, 0, 1)
        luaSetField(L, "verbatim_string") {
            lua_createtable(L, 0, 2)
            luaSetField(L, "string") { luaPush(L, Array(body.dropFirst(4))) }
            luaSetField(L, "format") { luaPush(L, Array(body.prefix(3))) }
        }
    case UInt8(ascii: "+"):
        lua_createtable(L, 0, 1)
        luaSetField(L, "ok") { luaPush(L, line) }
    case UInt8(ascii: "-"):
        luaPushError(L, [UInt8(ascii: "-")] + line)
        luaSetField(L, "ignore_error_stats_update") { lua_pushboolean(L, 1) }
    case UInt8(ascii: "*"), UInt8(ascii: ">"):
        guard number >= 0 else { return lua_pushboolean(L, 0) }
        lua_createtable(L, Int32(clamping: number), 0)
        for position in 0..<number {
            luaPushReply(L, bytes, &index)
            lua_rawseti(L, -2, Int32(position + 1))
        }
    case UInt8(ascii: "%"), UInt8(ascii: "~"):
        lua_createtable(L, 0, 1)
        luaPush(L, type == UInt8(ascii: "%") ? "map" : "set")
        lua_createtable(L, 0, Int32(clamping: number))
        for _ in 0..<number {
            luaPushReply(L, bytes, &index)
            if type == UInt8(ascii: "%") { luaPushReply(L, bytes, &index) } else { lua_pushboolean(L, 1) }
            lua_rawset(L, -3)
        }
        lua_rawset(L, -3)
    case UInt8(ascii: "_"):
        lua_pushnil(L)
    case UInt8(ascii: "#"):
        lua_pushboolean(L, line == [UInt8(ascii: "t")] ? 1 : 0)
    case UInt8(ascii: ","):
        lua_createtable(L, 0, 1)
        luaSetField(L, "double") { lua_pushnumber(L, strtod(String(decoding: line, as: UTF8.self), nil)) }
    case UInt8(ascii: "("):
        lua_createtable(L, 0, 1)
        luaSetField(L, "big_number") { luaPush(L, line) }
    default:
        lua_pushnil(L)
    }
}

// MARK: - A script's result, to the client

/// Writes the Lua value on top of the stack as the client's reply, and pops
/// it (luaReplyToRedisReply). `scriptResp3` is what the script chose with
/// redis.setresp: it decides how a boolean is sent.
///
/// Iterative, not recursive: a script can return a table nested thousands
/// deep (or one that contains itself), and Redis answers it down to where
/// its Lua stack runs out ("reached lua stack limit"). Each open array waits
/// here as a count and a position, its table on the Lua stack (a map or a
/// set as a flat table of its keys and values), so the Swift stack stays flat.
func luaWriteReply(_ L: OpaquePointer, scriptResp3: Bool, _ out: inout ReplyWriter) {
    var open: [(count: Int, next: Int)] = []
    writeValue(L, scriptResp3: scriptResp3, &out, &open)
    while let innermost = open.last {
        guard innermost.next <= innermost.count else {
            kvd_lua_pop(L, 1)
            open.removeLast()
            continue
        }
        open[open.count - 1].next += 1
        lua_rawgeti(L, -1, Int32(innermost.next))
        writeValue(L, scriptResp3: scriptResp3, &out, &open)
    }
}

/// Writes the value on top of the stack and pops it; an array, a map or a
/// set gets its header, and stays on the stack as a sequence to go through
/// (a new entry in `open`).
private func writeValue(
    _ L: OpaquePointer, scriptResp3: Bool, _ out: inout ReplyWriter, _ open: inout [(count: Int, next: Int)]
) {
    guard lua_checkstack(L, 4) != 0 else {
        out.error("ERR reached lua stack limit")
        return kvd_lua_pop(L, 1)
    }
    switch lua_type(L, -1) {
    case LuaType.string:
        out.bulk(luaBytes(L, -1) ?? [])
    case LuaType.boolean:
        let value = lua_toboolean(L, -1) != 0
        if !scriptResp3 {
            if value { out.integer(1) } else { out.null() }
        } else if out.resp3 {
            out.raw(Array((value ? "#t\r\n" : "#f\r\n").utf8))
        } else {
            out.integer(value ? 1 : 0)
        }
    case LuaType.number:
        out.integer(luaInteger(lua_tonumber(L, -1)))
    case LuaType.table:
        if let count = writeTable(L, &out) {
            open.append((count, 1))
            return  // the table (or its flat form) stays, to be gone through
        }
    default:
        out.null()
    }
    kvd_lua_pop(L, 1)
}

/// C's `(long long)` cast of a Lua number, as Redis makes it: what x86-64
/// gives for a value out of range (the "integer indefinite").
func luaInteger(_ number: Double) -> Int {
    guard number.isFinite, number >= -9.223_372_036_854_775_808e18, number < 9.223_372_036_854_775_808e18 else {
        return Int.min
    }
    return Int(number)
}

/// The field `name` of the table on top of the stack, pushed (raw), and its type.
private func rawField(_ L: OpaquePointer, _ name: String) -> Int32 {
    luaPush(L, name)
    lua_rawget(L, -2)
    return lua_type(L, -1)
}

/// Writes the table on top of the stack when it is a reply of its own
/// (error, status, double, big number, verbatim string) and returns nil;
/// for an array, a map or a set, writes the header, leaves on the stack in
/// the table's place the sequence of elements to write, and returns their number.
private func writeTable(_ L: OpaquePointer, _ out: inout ReplyWriter) -> Int? {
    if rawField(L, "err") == LuaType.string {
        kvd_lua_pop(L, 1)
        let information = luaErrorInformation(L)
        out.error(bytes: information.message, countedInErrorStats: !information.countedAlready)
        return nil
    }
    kvd_lua_pop(L, 1)
    if rawField(L, "ok") == LuaType.string {
        var status = luaBytes(L, -1) ?? []
        if let nul = status.firstIndex(of: 0) { status.removeSubrange(nul...) }
        kvd_lua_pop(L, 1)
        out.raw([UInt8(ascii: "+")] + status.map { $0 == 13 || $0 == 10 ? 32 : $0 } + [13, 10])
        return nil
    }
    kvd_lua_pop(L, 1)
    if rawField(L, "double") == LuaType.number {
        let value = lua_tonumber(L, -1)
        kvd_lua_pop(L, 1)
        writeDouble(value, &out)
        return nil
    }
    kvd_lua_pop(L, 1)
    if rawField(L, "big_number") == LuaType.string {
        let digits = (luaBytes(L, -1) ?? []).map { $0 == 13 || $0 == 10 ? 32 : $0 }
        kvd_lua_pop(L, 1)
        if out.resp3 { out.raw([UInt8(ascii: "(")] + digits + [13, 10]) } else { out.bulk(digits) }
        return nil
    }
    kvd_lua_pop(L, 1)
    if rawField(L, "verbatim_string") == LuaType.table {
        let format = rawField(L, "format") == LuaType.string ? luaBytes(L, -1) : nil
        kvd_lua_pop(L, 1)
        let text = rawField(L, "string") == LuaType.string ? luaBytes(L, -1) : nil
        kvd_lua_pop(L, 1)
        if let format, let text {
            kvd_lua_pop(L, 1)
            guard out.resp3 else {
                out.bulk(text)
                return nil
            }
            var encoded = [UInt8(ascii: "=")]
            appendDecimal(text.count + 4, to: &encoded)
            encoded += [13, 10] + (format + [32, 32, 32]).prefix(3) + [UInt8(ascii: ":")] + text + [13, 10]
            out.raw(encoded)
            return nil
        }
    }
    kvd_lua_pop(L, 1)
    for kind in ["map", "set"] {
        if rawField(L, kind) == LuaType.table {
            // Stack: table, inner. Flatten inner, in lua_next's order (Redis's).
            lua_createtable(L, 0, 0)
            var count = 0
            lua_pushnil(L)
            while lua_next(L, -3) != 0 {
                // Stack: table, inner, flat, key, value.
                if kind == "map" {
                    lua_pushvalue(L, -2)
                    lua_rawseti(L, -4, Int32(count + 1))
                    lua_rawseti(L, -3, Int32(count + 2))
                    count += 2
                } else {
                    kvd_lua_pop(L, 1)
                    lua_pushvalue(L, -1)
                    lua_rawseti(L, -3, Int32(count + 1))
                    count += 1
                }
            }
            lua_replace(L, -3)
            kvd_lua_pop(L, 1)
            if kind == "map" { out.mapHeader(count / 2) } else { out.setHeader(count) }
            return count
        }
        kvd_lua_pop(L, 1)
    }
    // An array: its elements up to the first nil.
    var count = 0
    while true {
        lua_rawgeti(L, -1, Int32(count + 1))
        defer { kvd_lua_pop(L, 1) }
        if lua_type(L, -1) == LuaType.nil { break }
        count += 1
    }
    out.arrayHeader(count)
    return count
}

/// Redis's addReplyDouble: `%.17g`, a bulk string in RESP2.
private func writeDouble(_ value: Double, _ out: inout ReplyWriter) {
    let text: [UInt8] = value.isInfinite ? Array((value > 0 ? "inf" : "-inf").utf8) : formatG17(value)
    if out.resp3 { out.raw([UInt8(ascii: ",")] + text + [13, 10]) } else { out.bulk(text) }
}

/// `value` printed with C's `%.17g` (what Redis sends for a Lua number it
/// passes as a command argument, and for a double).
func formatG17(_ value: Double) -> [UInt8] {
    var buffer = [CChar](repeating: 0, count: 64)
    let length = withVaList([value]) { arguments in
        buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, "%.17g", arguments) }
    }
    return buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }
}

/// The fields of an error table (luaExtractErrorInformation): its message,
/// and where it was raised when the error handler recorded it.
func luaErrorInformation(_ L: OpaquePointer) -> (
    message: [UInt8], source: [UInt8]?, line: [UInt8]?, countedAlready: Bool
) {
    var message: [UInt8] = []
    if lua_type(L, -1) == LuaType.string || lua_type(L, -1) == LuaType.number {
        message = Array("ERR ".utf8) + (luaBytes(L, -1) ?? [])
        return (message, nil, nil, false)
    }
    // Raw reads, unlike Redis's lua_getfield: this runs outside any pcall,
    // where an __index metamethod that raises would abort the process
    // (redis-server 7.0.15 dies on such a table; kvd answers it).
    func field(_ name: String) -> [UInt8]? {
        defer { kvd_lua_pop(L, 1) }
        let type = rawField(L, name)
        guard type == LuaType.string || type == LuaType.number else { return nil }
        var bytes = luaBytes(L, -1) ?? []
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        return bytes
    }
    let counted = rawField(L, "ignore_error_stats_update") == LuaType.boolean && lua_toboolean(L, -1) != 0
    kvd_lua_pop(L, 1)
    return (field("err") ?? [], field("source"), field("line"), counted)
}
