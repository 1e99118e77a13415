// FunctionRegistration.swift: the library API a library's code sees while
// FUNCTION LOAD runs it (function_lua.c): `redis.register_function`, with
// positional (name, callback) or named arguments (function_name, callback,
// description, flags), and redis.log and the version fields. Each
// registered callback is kept in the functions' interpreter's registry
// (luaL_ref) until its library is deleted or replaced.
import CLua

/// The flags a function (or a `#!lua` script) may declare, in Redis's order.
struct ScriptFlags: OptionSet {
    let rawValue: Int
    static let noWrites = ScriptFlags(rawValue: 1)
    static let allowOOM = ScriptFlags(rawValue: 2)
    static let allowStale = ScriptFlags(rawValue: 4)
    static let noCluster = ScriptFlags(rawValue: 8)
    static let allowCrossSlotKeys = ScriptFlags(rawValue: 16)

    /// Each flag and its name, in the order FUNCTION LIST shows them.
    static let names: [(flag: ScriptFlags, name: String)] = [
        (.noWrites, "no-writes"), (.allowOOM, "allow-oom"), (.allowStale, "allow-stale"),
        (.noCluster, "no-cluster"), (.allowCrossSlotKeys, "allow-cross-slot-keys"),
    ]

    /// The flag named `name` (ignoring case), nil when there is none.
    static func named(_ name: [UInt8]) -> ScriptFlags? {
        names.first { lowercased(name) == Array($0.name.utf8) }?.flag
    }
}

/// One function a library registered.
struct RegisteredFunction {
    let name: [UInt8]
    let description: [UInt8]?
    let flags: ScriptFlags
    /// Its callback, in the functions' interpreter's registry.
    let reference: Int32
}

/// Library and function names: letters, digits and underscores, at least one.
func isValidFunctionName(_ name: [UInt8]) -> Bool {
    !name.isEmpty
        && name.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 95 }
}

let invalidFunctionNameMessage =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

/// Installs `kvd_library_redis`, the library API's `redis` table, which
/// the sandbox turns into the globals while a library loads.
func installLibraryAPI(_ L: OpaquePointer, context: UnsafeMutableRawPointer) {
    lua_createtable(L, 0, 8)
    luaSetField(L, "register_function") {
        kvd_lua_pushfunction(
            L,
            { L, context in registerFunction(L!, Unmanaged<ScriptEngine>.fromOpaque(context!).takeUnretainedValue()) },
            context)
    }
    // redis.log and the version fields, shared with the scripts' table.
    lua_getfield(L, kvd_lua_globalsindex(), "redis")
    for name in ["log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"] {
        lua_getfield(L, -1, name)
        lua_setfield(L, -3, name)
    }
    kvd_lua_pop(L, 1)
    lua_setfield(L, kvd_lua_globalsindex(), "kvd_library_redis")
}

/// redis.register_function: adds one function to the library being loaded.
private func registerFunction(_ L: OpaquePointer, _ engine: ScriptEngine) -> Int32 {
    guard var registered = engine.registering else {
        luaPushError(L, Array("redis.register_function can only be called on FUNCTION LOAD command".utf8))
        return -1
    }
    let parsed: Result<RegisteredFunction, ScriptError>
    switch lua_gettop(L) {
    case 1: parsed = namedArguments(L)
    case 2: parsed = positionalArguments(L)
    default: parsed = .failure(ScriptError("wrong number of arguments to redis.register_function"))
    }
    switch parsed {
    case .failure(let error):
        luaPushError(L, error.message)
        return -1
    case .success(let function):
        var problem: String?
        if !isValidFunctionName(function.name) {
            problem = invalidFunctionNameMessage
        } else if registered.contains(where: { $0.name == function.name }) {
            problem = "Function already exists in the library"
        }
        if let problem {
            luaL_unref(L, kvd_lua_registryindex(), function.reference)
            luaPushError(L, Array(problem.utf8))
            return -1
        }
        registered.append(function)
        engine.registering = registered
        return 0
    }
}

/// The string at `index` (a number converts, as lua_isstring allows), or nil.
private func stringArgument(_ L: OpaquePointer, _ index: Int32) -> [UInt8]? {
    guard lua_isstring(L, index) != 0 else { return nil }
    lua_pushvalue(L, index)  // converting a copy leaves a table's key as it was
    defer { kvd_lua_pop(L, 1) }
    return luaBytes(L, -1)
}

private func positionalArguments(_ L: OpaquePointer) -> Result<RegisteredFunction, ScriptError> {
    guard let name = stringArgument(L, 1) else {
        return .failure(ScriptError("first argument to redis.register_function must be a string"))
    }
    guard lua_type(L, 2) == Int32(LUA_TFUNCTION) else {
        return .failure(ScriptError("second argument to redis.register_function must be a function"))
    }
    lua_pushvalue(L, 2)
    let reference = luaL_ref(L, kvd_lua_registryindex())
    return .success(RegisteredFunction(name: name, description: nil, flags: [], reference: reference))
}

private func namedArguments(_ L: OpaquePointer) -> Result<RegisteredFunction, ScriptError> {
    guard lua_type(L, 1) == LuaType.table else {
        return .failure(
            ScriptError(
                "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
            ))
    }
    var name: [UInt8]?
    var description: [UInt8]?
    var flags: ScriptFlags = []
    var reference: Int32?
    func fail(_ message: String) -> Result<RegisteredFunction, ScriptError> {
        if let reference { luaL_unref(L, kvd_lua_registryindex(), reference) }
        lua_settop(L, 1)
        return .failure(ScriptError(message))
    }
    lua_pushnil(L)
    while lua_next(L, 1) != 0 {
        guard let key = stringArgument(L, -2) else {
            return fail("named argument key given to redis.register_function is not a string")
        }
        if equalsIgnoringCase(key, "function_name") {
            guard let value = stringArgument(L, -1) else {
                return fail("function_name argument given to redis.register_function must be a string")
            }
            name = value
        } else if equalsIgnoringCase(key, "description") {
            guard let value = stringArgument(L, -1) else {
                return fail("description argument given to redis.register_function must be a string")
            }
            description = value
        } else if equalsIgnoringCase(key, "callback") {
            guard lua_type(L, -1) == Int32(LUA_TFUNCTION) else {
                return fail("callback argument given to redis.register_function must be a function")
            }
            if let reference { luaL_unref(L, kvd_lua_registryindex(), reference) }
            reference = luaL_ref(L, kvd_lua_registryindex())  // pops the value
            continue
        } else if equalsIgnoringCase(key, "flags") {
            guard lua_type(L, -1) == LuaType.table else {
                return fail("flags argument to redis.register_function must be a table representing function flags")
            }
            guard let read = readFlags(L) else { return fail("unknown flag given") }
            flags = read
        } else {
            return fail("unknown argument given to redis.register_function")
        }
        kvd_lua_pop(L, 1)
    }
    guard let name else { return fail("redis.register_function must get a function name argument") }
    guard let reference else { return fail("redis.register_function must get a callback argument") }
    return .success(RegisteredFunction(name: name, description: description, flags: flags, reference: reference))
}

/// The flags in the table on top of the stack (1, 2, ... up to the first
/// nil); nil when one is not a string or not a flag's name.
private func readFlags(_ L: OpaquePointer) -> ScriptFlags? {
    var flags: ScriptFlags = []
    var index: Int32 = 1
    while true {
        lua_rawgeti(L, -1, index)
        defer { kvd_lua_pop(L, 1) }
        if lua_type(L, -1) == LuaType.nil { return flags }
        guard let name = stringArgument(L, -1), let flag = ScriptFlags.named(name) else { return nil }
        flags.insert(flag)
        index += 1
    }
}
