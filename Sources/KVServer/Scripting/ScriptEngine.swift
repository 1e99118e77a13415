// ScriptEngine.swift: the Lua interpreter behind EVAL, one per dispatcher,
// living on the core loop's thread like the databases it scripts (so a
// script is one job on the core: nothing else touches the keyspace while
// it runs, which is what makes it atomic, as in Redis). It keeps the script
// cache (SHA-1 to compiled function), builds the sandbox, and runs a script
// with KEYS and ARGV, turning its result or its error into the reply.
import CLua

/// A script in the cache (its compiled function is in the interpreter's
/// registry, under `f_<sha>`): what its shebang line declared.
struct CachedScript {
    /// True when the script has a `#!lua` line (it is not in Redis's
    /// compatibility mode), and whether it declared `flags=no-writes`.
    let hasShebang: Bool
    let noWrites: Bool
}

/// Lua scripts for one dispatcher: core loop thread only.
final class ScriptEngine {
    /// The interpreter, created on first use and again after SCRIPT FLUSH.
    private var state: OpaquePointer?
    /// Compiled scripts, by their lowercase SHA-1.
    private(set) var cache: [String: CachedScript] = [:]
    /// math.random's generator: it goes on from one script to the next.
    var random = ScriptRandom()
    /// The script running now (redis.call needs its caller), nil between scripts.
    var run: ScriptRun?
    /// Scripts run since the last incremental collection (Redis steps the
    /// collector every 50 scripts instead of letting a full cycle stall one).
    private var runsSinceCollection = 0

    /// What redis.call needs to know about the script that runs.
    struct ScriptRun {
        unowned let dispatcher: Dispatcher
        /// The client the script's commands run as: the caller's database,
        /// RESP2 unless the script calls redis.setresp(3).
        let session: ClientSession
        /// EVAL_RO, EVALSHA_RO or `flags=no-writes`: write commands are refused.
        let readOnly: Bool
    }

    deinit {
        if let state { lua_close(state) }
    }

    /// SCRIPT FLUSH: every cached script is forgotten, and the interpreter
    /// (with anything scripts left in it) is replaced.
    func flush() {
        if let state { lua_close(state) }
        state = nil
        cache = [:]
    }

    /// The interpreter, with the sandbox and the redis library installed.
    private func interpreter() -> OpaquePointer {
        if let state { return state }
        let L = luaL_newstate()!
        kvd_lua_openlibrary(L, luaopen_base, "")
        kvd_lua_openlibrary(L, luaopen_table, LUA_TABLIBNAME)
        kvd_lua_openlibrary(L, luaopen_string, LUA_STRLIBNAME)
        kvd_lua_openlibrary(L, luaopen_math, LUA_MATHLIBNAME)
        kvd_lua_openlibrary(L, luaopen_debug, LUA_DBLIBNAME)
        kvd_lua_openmodule(L, luaopen_cjson, "cjson")
        kvd_lua_openmodule(L, luaopen_bit, "bit")
        installRedisLibrary(L, context: Unmanaged.passUnretained(self).toOpaque())
        let source = Array(luaSandboxSource.utf8)
        let loaded = source.withUnsafeBytes {
            luaL_loadbuffer(L, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count, "=kvd")
        }
        precondition(
            loaded == 0 && lua_pcall(L, 0, 3, 0) == 0,
            "ScriptEngine: the sandbox failed to load: \(String(decoding: luaBytes(L, -1) ?? [], as: UTF8.self))")
        // Stack: handler, storage, proxy.
        lua_pushvalue(L, -1)
        lua_setfield(L, kvd_lua_registryindex(), "kvd.globals")
        lua_replace(L, kvd_lua_globalsindex())
        lua_setfield(L, kvd_lua_registryindex(), "kvd.storage")
        lua_setfield(L, kvd_lua_registryindex(), "kvd.handler")
        state = L
        return L
    }

    /// SCRIPT LOAD and EVAL's first run of a body: compiles and caches it,
    /// and returns its SHA-1, or the error reply's message.
    func load(_ body: [UInt8]) -> Result<String, ScriptError> {
        let sha = sha1Hex(body)
        if cache[sha] != nil { return .success(sha) }
        var hasShebang = false
        var noWrites = false
        var code = body[...]
        if body.starts(with: Array("#!".utf8)) {
            guard let end = body.firstIndex(of: 10) else { return .failure(ScriptError("ERR Invalid script shebang")) }
            let parts = body[..<end].split(separator: 32).map { String(decoding: $0, as: UTF8.self) }
            guard let engine = parts.first else { return .failure(ScriptError("ERR Invalid engine in script shebang")) }
            guard engine == "#!lua" else {
                return .failure(ScriptError("ERR Unexpected engine in script shebang: \(engine)"))
            }
            for option in parts.dropFirst() {
                guard option.hasPrefix("flags=") else {
                    return .failure(ScriptError("ERR Unknown lua shebang option: \(option)"))
                }
                for flag in option.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false) {
                    guard
                        ["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"].contains(flag)
                    else { return .failure(ScriptError("ERR Unexpected flag in script shebang: \(flag)")) }
                    if flag == "no-writes" { noWrites = true }
                }
            }
            hasShebang = true
            code = body[end...]  // the line feed stays: line numbers are the user's
        }
        let L = interpreter()
        resetGlobals(L)
        let failed = code.withUnsafeBytes {
            luaL_loadbuffer(L, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, "@user_script")
        }
        if failed != 0 {
            let message = luaBytes(L, -1) ?? []
            kvd_lua_pop(L, 1)
            return .failure(ScriptError(bytes: Array("ERR Error compiling script (new function): ".utf8) + message))
        }
        lua_setfield(L, kvd_lua_registryindex(), "f_" + sha)
        cache[sha] = CachedScript(hasShebang: hasShebang, noWrites: noWrites)
        return .success(sha)
    }

    /// Runs cached script `sha` with `keys` and `arguments`, writing its
    /// result (or its error) as the reply.
    func call(
        _ sha: String, keys: [[UInt8]], arguments: [[UInt8]], run: ScriptRun, _ out: inout ReplyWriter
    ) {
        let L = interpreter()
        lua_getfield(L, kvd_lua_registryindex(), "kvd.handler")
        lua_getfield(L, kvd_lua_registryindex(), "f_" + sha)
        lua_getfield(L, kvd_lua_registryindex(), "kvd.storage")
        for (name, values) in [("KEYS", keys), ("ARGV", arguments)] {
            luaPush(L, name)
            lua_createtable(L, Int32(clamping: values.count), 0)
            for (index, value) in values.enumerated() {
                luaPush(L, value)
                lua_rawseti(L, -2, Int32(index + 1))
            }
            lua_rawset(L, -3)
        }
        kvd_lua_pop(L, 1)
        self.run = run
        let failed = lua_pcall(L, 0, 1, -2)
        self.run = nil
        runsSinceCollection += 1
        if runsSinceCollection == 50 {
            lua_gc(L, LUA_GCSTEP, 50)
            runsSinceCollection = 0
        }
        if failed != 0 {
            if lua_type(L, -1) != LuaType.table {
                let message = (luaBytes(L, -1) ?? Array("execution failure".utf8)).prefix(100)
                out.error(bytes: Array("ERR Error running script \(sha), ".utf8) + message + [10])
            } else {
                let information = luaErrorInformation(L)
                var message = information.message
                if let line = information.line, let source = information.source {
                    message +=
                        Array(" script: \(sha), on ".utf8) + source + [UInt8(ascii: ":")] + line + [UInt8(ascii: ".")]
                }
                out.error(bytes: message)
            }
            kvd_lua_pop(L, 1)
        } else {
            luaWriteReply(L, scriptResp3: run.session.resp3, &out)
        }
        kvd_lua_pop(L, 1)  // the error handler
        resetGlobals(L)
    }

    /// Puts the sandbox's globals back before a script is compiled or after
    /// one ran: nothing a script does may change what the next one sees.
    private func resetGlobals(_ L: OpaquePointer) {
        lua_getfield(L, kvd_lua_registryindex(), "kvd.globals")
        lua_replace(L, kvd_lua_globalsindex())
    }
}

/// An error reply's message, `CODE text`.
struct ScriptError: Error {
    let message: [UInt8]
    init(_ message: String) { self.message = Array(message.utf8) }
    init(bytes: [UInt8]) { message = bytes }
}
