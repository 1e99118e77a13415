// MessagePack.swift: the `cmsgpack` library Redis gives scripts
// (lua-cmsgpack 0.4), which Debian does not package: pack, unpack,
// unpack_one and unpack_limit, written here from MessagePack's
// specification and the library's documented behaviour. Numbers that are
// whole and fit 64 bits pack as the smallest integer form, others as a
// float32 when that is exact, else a float64; a table whose keys are 1..n
// packs as an array, any other as a map; tables nested 16 deep pack as nil
// (so a table that holds itself packs); functions and other values as nil.
// Every table is read raw (no metamethod runs, so no Lua error unwinds a
// Swift frame), and a packed value is built in Swift and pushed once.
import CLua

/// How deep tables nest before they pack as nil (LUACMSGPACK_MAX_NESTING).
private let packDepth = 16
/// How deep a payload's arrays and maps may nest when unpacked (kvd's
/// bound: the decoder recurses on the core's stack; Redis's stops where
/// Lua's stack does, near 8,000, with the same "stack overflow" error).
private let unpackDepth = 1000

/// Installs the global `cmsgpack` table on `L`.
func installMessagePack(_ L: OpaquePointer) {
    lua_createtable(L, 0, 8)
    func function(_ name: String, _ body: kvd_lua_function) {
        luaSetField(L, name) { kvd_lua_pushfunction(L, body, nil) }
    }
    function("pack") { L, _ in pack(L!) }
    function("unpack") { L, _ in unpack(L!, limit: 0, offset: 0, all: true) }
    function("unpack_one") { L, _ in
        let L = L!
        let offset = lua_gettop(L) >= 2 ? luaInteger(lua_tonumber(L, 2)) : 0
        lua_settop(L, 1)
        return unpack(L, limit: 1, offset: offset, all: false)
    }
    function("unpack_limit") { L, _ in
        let L = L!
        guard lua_isnumber(L, 2) != 0 else {
            luaPushLibraryError(L, "bad argument #2 to 'unpack_limit' (number expected, got \(luaTypeName(L, 2)))")
            return -1
        }
        let limit = luaInteger(lua_tonumber(L, 2))
        let offset = lua_gettop(L) >= 3 ? luaInteger(lua_tonumber(L, 3)) : 0
        lua_settop(L, 1)
        return unpack(L, limit: limit, offset: offset, all: false)
    }
    for (name, value) in [
        ("_NAME", "cmsgpack"), ("_VERSION", "lua-cmsgpack 0.4.0"),
        ("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"),
        ("_DESCRIPTION", "MessagePack C implementation for Lua"),
    ] {
        luaSetField(L, name) { luaPush(L, value) }
    }
    lua_setfield(L, kvd_lua_globalsindex(), "cmsgpack")
}

private func luaTypeName(_ L: OpaquePointer, _ index: Int32) -> String {
    String(cString: lua_typename(L, lua_type(L, index)))
}

// MARK: - Packing

/// cmsgpack.pack(v1, v2, ...): the values' encodings, one after the other.
private func pack(_ L: OpaquePointer) -> Int32 {
    let count = lua_gettop(L)
    guard count > 0 else {
        luaPushLibraryError(L, "bad argument #0 to 'pack' (MessagePack pack needs input.)")
        return -1
    }
    var out: [UInt8] = []
    for index in 1...count {
        lua_pushvalue(L, index)
        encode(L, &out, level: 0)
    }
    luaPush(L, out)
    return 1
}

/// Encodes the value on top of the stack, and pops it.
private func encode(_ L: OpaquePointer, _ out: inout [UInt8], level: Int) {
    defer { kvd_lua_pop(L, 1) }
    guard lua_checkstack(L, 3) != 0 else { return out.append(0xC0) }
    switch lua_type(L, -1) {
    case LuaType.string:
        var length = 0
        let pointer = lua_tolstring(L, -1, &length)!
        header(&out, length, small: (0xA0, 32), forms: [0xD9, 0xDA, 0xDB])
        out += UnsafeRawBufferPointer(start: pointer, count: length)
    case LuaType.boolean:
        out.append(lua_toboolean(L, -1) != 0 ? 0xC3 : 0xC2)
    case LuaType.number:
        encodeNumber(lua_tonumber(L, -1), &out)
    case LuaType.table where level < packDepth:
        if let count = arrayLength(L) {
            header(&out, count, small: (0x90, 16), forms: [nil, 0xDC, 0xDD])
            for index in 0..<count {
                lua_rawgeti(L, -1, Int32(index + 1))
                encode(L, &out, level: level + 1)
            }
        } else {
            var count = 0
            lua_pushnil(L)
            while lua_next(L, -2) != 0 {
                kvd_lua_pop(L, 1)
                count += 1
            }
            header(&out, count, small: (0x80, 16), forms: [nil, 0xDE, 0xDF])
            lua_pushnil(L)
            while lua_next(L, -2) != 0 {
                lua_pushvalue(L, -2)
                encode(L, &out, level: level + 1)  // the key's copy
                encode(L, &out, level: level + 1)  // the value
            }
        }
    default:
        out.append(0xC0)
    }
}

/// The table on top of the stack as an array's length: its keys are the
/// whole numbers 1 to n (an empty table is an array); nil otherwise.
private func arrayLength(_ L: OpaquePointer) -> Int? {
    var count = 0
    var largest = 0.0
    lua_pushnil(L)
    while lua_next(L, -2) != 0 {
        kvd_lua_pop(L, 1)
        let key = lua_type(L, -1) == LuaType.number ? lua_tonumber(L, -1) : 0
        guard key > 0, key <= Double(Int32.max), key == key.rounded(.towardZero) else {
            kvd_lua_pop(L, 1)
            return nil
        }
        largest = max(largest, key)
        count += 1
    }
    return Double(count) == largest ? count : nil
}

/// A string's, array's or map's header: the fixed form below `small.limit`,
/// else the 8-, 16- or 32-bit length form (`forms`; nil: none).
private func header(_ out: inout [UInt8], _ count: Int, small: (tag: UInt8, limit: Int), forms: [UInt8?]) {
    if count < small.limit {
        out.append(small.tag | UInt8(count))
    } else if count <= 0xFF, let form = forms[0] {
        out += [form, UInt8(count)]
    } else if count <= 0xFFFF, let form = forms[1] {
        out.append(form)
        bigEndian(&out, UInt64(count), bytes: 2)
    } else if let form = forms[2] {
        out.append(form)
        bigEndian(&out, UInt64(count), bytes: 4)
    }
}

private func bigEndian(_ out: inout [UInt8], _ value: UInt64, bytes: Int) {
    for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) {
        out.append(UInt8(truncatingIfNeeded: value >> shift))
    }
}

private func encodeNumber(_ number: Double, _ out: inout [UInt8]) {
    guard number >= -9_223_372_036_854_775_808, number < 9_223_372_036_854_775_808,
        number == number.rounded(.towardZero)
    else {
        if Double(Float(number)) == number {
            out.append(0xCA)
            bigEndian(&out, UInt64(Float(number).bitPattern), bytes: 4)
        } else {
            out.append(0xCB)
            bigEndian(&out, number.bitPattern, bytes: 8)
        }
        return
    }
    let value = Int64(number)
    switch value {
    case 0...127: out.append(UInt8(value))
    case 128...0xFF: out += [0xCC, UInt8(value)]
    case 0x100...0xFFFF:
        out.append(0xCD)
        bigEndian(&out, UInt64(value), bytes: 2)
    case 0x1_0000...0xFFFF_FFFF:
        out.append(0xCE)
        bigEndian(&out, UInt64(value), bytes: 4)
    case 0x1_0000_0000...:
        out.append(0xCF)
        bigEndian(&out, UInt64(value), bytes: 8)
    case -32..<0: out.append(UInt8(bitPattern: Int8(value)))
    case -128 ..< -32: out += [0xD0, UInt8(bitPattern: Int8(value))]
    case -32768 ..< -128:
        out.append(0xD1)
        bigEndian(&out, UInt64(bitPattern: value), bytes: 2)
    case -2_147_483_648 ..< -32768:
        out.append(0xD2)
        bigEndian(&out, UInt64(bitPattern: value), bytes: 4)
    default:
        out.append(0xD3)
        bigEndian(&out, UInt64(bitPattern: value), bytes: 8)
    }
}

// MARK: - Unpacking

/// Why a payload could not be unpacked (the library's two messages).
private enum UnpackError: Error {
    case missingBytes, badFormat
    /// Nested past `unpackDepth`, in an array (or a map).
    case tooDeep(map: Bool)

    var message: String {
        switch self {
        case .missingBytes: "Missing bytes in input."
        case .badFormat: "Bad data format in input."
        case .tooDeep(let map): "stack overflow (in function mp_decode_to_lua_\(map ? "hash" : "array"))"
        }
    }
}

/// unpack (`all`), unpack_one and unpack_limit: pushes up to `limit`
/// values from the string at 1 starting at byte `offset`; all but unpack
/// push the next offset first (-1 once the string is consumed).
private func unpack(_ L: OpaquePointer, limit: Int, offset: Int, all: Bool) -> Int32 {
    guard lua_type(L, 1) == LuaType.string || lua_type(L, 1) == LuaType.number else {
        let name = all ? "unpack" : limit == 1 ? "unpack_one" : "unpack_limit"
        luaPushLibraryError(L, "bad argument #1 to '\(name)' (string expected, got \(luaTypeName(L, 1)))")
        return -1
    }
    let input = luaBytes(L, 1) ?? []
    guard offset >= 0, limit >= 0 else {
        luaPushLibraryError(L, "Invalid request to unpack with offset of \(offset) and limit of \(input.count).")
        return -1
    }
    guard offset <= input.count else {
        luaPushLibraryError(L, "Start offset \(offset) greater than input length \(input.count).")
        return -1
    }
    let decodeAll = all || (limit == 0 && offset == 0)
    let bound = decodeAll ? Int.max : limit
    var position = offset
    var count: Int32 = 0
    lua_settop(L, 1)
    while position < input.count && Int(count) < bound {
        guard lua_checkstack(L, 4) != 0 else {
            luaPushLibraryError(L, "too many results to unpack")
            return -1
        }
        do {
            try decode(L, input, &position, depth: 0)
        } catch {
            lua_settop(L, 0)
            luaPushLibraryError(L, error.message)
            return -1
        }
        count += 1
    }
    if !decodeAll {
        lua_pushinteger(L, position == input.count ? -1 : position)
        lua_insert(L, 2)
        count += 1
    }
    return count
}

/// Pushes the value encoded at `position`, which ends past it.
private func decode(
    _ L: OpaquePointer, _ input: [UInt8], _ position: inout Int, depth: Int, inMap: Bool = false
) throws(UnpackError) {
    guard depth < unpackDepth, lua_checkstack(L, 4) != 0 else { throw .tooDeep(map: inMap) }
    func take(_ count: Int) throws(UnpackError) -> ArraySlice<UInt8> {
        guard input.count - position >= count else { throw .missingBytes }
        defer { position += count }
        return input[position..<(position + count)]
    }
    func unsigned(_ bytes: Int) throws(UnpackError) -> UInt64 {
        try take(bytes).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
    func signed(_ bytes: Int) throws(UnpackError) -> Int64 {
        let raw = try unsigned(bytes)
        let shift = UInt64(64 - bytes * 8)
        return Int64(bitPattern: raw << shift) >> Int64(shift)
    }
    func string(_ length: Int) throws(UnpackError) {
        let bytes = try take(length)
        bytes.withUnsafeBytes { lua_pushlstring(L, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    }
    func array(_ count: Int) throws(UnpackError) {
        lua_createtable(L, Int32(clamping: min(count, input.count - position)), 0)
        for index in 0..<count {
            try decode(L, input, &position, depth: depth + 1)
            lua_rawseti(L, -2, Int32(truncatingIfNeeded: index + 1))
        }
    }
    func map(_ count: Int) throws(UnpackError) {
        lua_createtable(L, 0, Int32(clamping: min(count, (input.count - position) / 2)))
        for _ in 0..<count {
            try decode(L, input, &position, depth: depth + 1, inMap: true)
            try decode(L, input, &position, depth: depth + 1, inMap: true)
            // A nil key cannot be stored (Lua would raise): the pair is dropped.
            if lua_type(L, -2) == LuaType.nil || (lua_type(L, -2) == LuaType.number && lua_tonumber(L, -2).isNaN) {
                kvd_lua_pop(L, 2)
            } else {
                lua_rawset(L, -3)
            }
        }
    }
    let tag = try take(1).first!
    switch tag {
    case 0x00...0x7F: lua_pushnumber(L, Double(tag))
    case 0x80...0x8F: try map(Int(tag & 0x0F))
    case 0x90...0x9F: try array(Int(tag & 0x0F))
    case 0xA0...0xBF: try string(Int(tag & 0x1F))
    case 0xC0: lua_pushnil(L)
    case 0xC2: lua_pushboolean(L, 0)
    case 0xC3: lua_pushboolean(L, 1)
    case 0xC4, 0xD9: try string(Int(try unsigned(1)))
    case 0xC5, 0xDA: try string(Int(try unsigned(2)))
    case 0xC6, 0xDB: try string(Int(try unsigned(4)))
    case 0xCA: lua_pushnumber(L, Double(Float(bitPattern: UInt32(try unsigned(4)))))
    case 0xCB: lua_pushnumber(L, Double(bitPattern: try unsigned(8)))
    case 0xCC: lua_pushnumber(L, Double(try unsigned(1)))
    case 0xCD: lua_pushnumber(L, Double(try unsigned(2)))
    case 0xCE: lua_pushnumber(L, Double(try unsigned(4)))
    case 0xCF: lua_pushnumber(L, Double(try unsigned(8)))
    case 0xD0: lua_pushnumber(L, Double(try signed(1)))
    case 0xD1: lua_pushnumber(L, Double(try signed(2)))
    case 0xD2: lua_pushnumber(L, Double(try signed(4)))
    case 0xD3: lua_pushnumber(L, Double(try signed(8)))
    case 0xDC: try array(Int(try unsigned(2)))
    case 0xDD: try array(Int(try unsigned(4)))
    case 0xDE: try map(Int(try unsigned(2)))
    case 0xDF: try map(Int(try unsigned(4)))
    case 0xE0...0xFF: lua_pushnumber(L, Double(Int8(bitPattern: tag)))
    default: throw .badFormat
    }
}
