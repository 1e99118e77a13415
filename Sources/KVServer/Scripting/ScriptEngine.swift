// ScriptEngine.swift: the Lua interpreters behind EVAL and FCALL, one of
// each per dispatcher, living on the core loop's thread like the databases
// they script (so a script is one job on the core: nothing else touches the
// keyspace while it runs, which is what makes it atomic, as in Redis). It
// keeps the script cache (SHA-1 to compiled function), builds the sandbox,
// runs a library's code for FUNCTION LOAD, and runs a script (with KEYS and
// ARGV) or a function (with its keys and arguments), turning its result or
// its error into the reply.
import CLua
import Glibc

/// A script in the cache (its compiled function is in the interpreter's
/// registry, under `f_<sha>`): what its shebang line declared.
struct CachedScript {
    /// True when the script has a `#!lua` line (it is not in Redis's
    /// compatibility mode), and whether it declared `flags=no-writes`.
    let hasShebang: Bool
    let noWrites: Bool
    /// `flags=allow-oom`.
    var allowsOutOfMemory = false
}

/// What a script that is killed gets (after Redis's wording).
let scriptKilledMessage = "Script killed by user with SCRIPT KILL..."

/// What `ScriptEngine.call` runs: an EVAL script, by its SHA-1, or a
/// library's function (FCALL), by its name and its callback's reference in
/// the functions' interpreter's registry.
enum ScriptTarget {
    case script(sha: String)
    case function(name: [UInt8], reference: Int32)

    /// The name error replies and the busy-script log lines give.
    var name: String {
        switch self {
        case .script(let sha): sha
        case .function(let name, _): String(decoding: name, as: UTF8.self)
        }
    }
}

/// Lua scripts for one dispatcher: core loop thread only.
final class ScriptEngine {
    /// The interpreter, created on first use and again after SCRIPT FLUSH.
    private var state: OpaquePointer?
    /// The functions' interpreter (FUNCTION LOAD, FCALL), apart from
    /// EVAL's as in Redis: SCRIPT FLUSH does not touch it.
    private var functionState: OpaquePointer?
    /// While FUNCTION LOAD runs a library's code: the functions it
    /// registered so far (redis.register_function adds to it); nil otherwise.
    var registering: [RegisteredFunction]?
    /// When the running library load must stop (monotonic ms): Redis's
    /// 500 ms for FUNCTION LOAD, none (nil) for a snapshot's libraries.
    private var loadDeadline: Int64?
    /// The interpreter's heap, counted by its allocator (see the shim).
    private let memory: UnsafeMutablePointer<kvd_lua_memory> = {
        let memory = UnsafeMutablePointer<kvd_lua_memory>.allocate(capacity: 1)
        memory.initialize(to: kvd_lua_memory(used: 0, limit: 0))
        return memory
    }()
    /// How much the Lua heap may grow during one script, garbage included
    /// (Lua 5.1 does not collect before it fails an allocation). Redis has
    /// no such limit (only `maxmemory`, which does not count Lua's heap);
    /// kvd refuses the allocation past it, and the script fails with
    /// `scriptMemoryMessage`.
    static let scriptMemoryLimit = 256 * 1024 * 1024
    /// The running script, as the I/O threads see it (BUSY, SCRIPT KILL).
    let activity = ScriptActivity()
    /// With `--io-threads 0`: serves the core's other connections while a
    /// script is busy (set by the worker that lives on the core loop).
    var serveClientsWhileBusy: (() -> Void)?
    /// The last script that passed the busy threshold, and when it ended
    /// (monotonic ms), for the slow-job report of the job that ran it
    /// (`takeSlowScript`).
    private var slowScript: (sha: String, endedAt: Int64)?
    /// The script that runs: its SHA (or its function's name), when it
    /// started, its threshold, and whether it is busy yet.
    private var current: (sha: String, startedAt: Int64, threshold: Int64, busy: Bool)?
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
        /// `flags=allow-oom`: commands that may grow memory run even over maxmemory.
        var allowsOutOfMemory = false
    }

    deinit {
        if let state { lua_close(state) }
        if let functionState { lua_close(functionState) }
        memory.deallocate()
    }

    /// INFO memory's lines about scripts, by Redis's names: the cached
    /// scripts, the functions, and both interpreters' heap together.
    func infoLines(_ libraries: FunctionLibraries) -> [String] {
        [
            "used_memory_vm_total:\(memory.pointee.used)", "number_of_cached_scripts:\(cache.count)",
            "number_of_functions:\(libraries.functions.count)", "number_of_libraries:\(libraries.libraries.count)",
        ]
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
        let L = makeInterpreter(functions: false)
        state = L
        return L
    }

    /// The functions' interpreter: the same sandbox, plus the library API
    /// (`redis.register_function`) that a library's code sees while it loads.
    private func functionInterpreter() -> OpaquePointer {
        if let functionState { return functionState }
        let L = makeInterpreter(functions: true)
        functionState = L
        return L
    }

    private func makeInterpreter(functions: Bool) -> OpaquePointer {
        let L = kvd_lua_newstate(memory)!
        kvd_lua_openlibrary(L, luaopen_base, "")
        kvd_lua_openlibrary(L, luaopen_table, LUA_TABLIBNAME)
        kvd_lua_openlibrary(L, luaopen_string, LUA_STRLIBNAME)
        kvd_lua_openlibrary(L, luaopen_math, LUA_MATHLIBNAME)
        kvd_lua_openlibrary(L, luaopen_debug, LUA_DBLIBNAME)
        kvd_lua_openmodule(L, luaopen_cjson, "cjson")
        kvd_lua_openmodule(L, luaopen_bit, "bit")
        installMessagePack(L)
        installRedisLibrary(L, context: Unmanaged.passUnretained(self).toOpaque())
        if functions { installLibraryAPI(L, context: Unmanaged.passUnretained(self).toOpaque()) }
        let source = Array(luaSandboxSource.utf8)
        let loaded = source.withUnsafeBytes {
            luaL_loadbuffer(L, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count, "=kvd")
        }
        precondition(
            loaded == 0 && lua_pcall(L, 0, 4, 0) == 0,
            "ScriptEngine: the sandbox failed to load: \(String(decoding: luaBytes(L, -1) ?? [], as: UTF8.self))")
        // Stack: handler, storage, proxy, the load-mode switch.
        lua_setfield(L, kvd_lua_registryindex(), "kvd.loading")
        lua_pushvalue(L, -1)
        lua_setfield(L, kvd_lua_registryindex(), "kvd.globals")
        lua_replace(L, kvd_lua_globalsindex())
        lua_setfield(L, kvd_lua_registryindex(), "kvd.storage")
        lua_setfield(L, kvd_lua_registryindex(), "kvd.handler")
        return L
    }

    /// SCRIPT LOAD and EVAL's first run of a body: compiles and caches it,
    /// and returns its SHA-1, or the error reply's message.
    func load(_ body: [UInt8]) -> Result<String, ScriptError> {
        let sha = sha1Hex(body)
        if cache[sha] != nil { return .success(sha) }
        var hasShebang = false
        var noWrites = false
        var allowsOutOfMemory = false
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
                // `flags=` alone declares none (Redis's split of an empty
                // string has no parts); an empty part elsewhere is refused.
                for flag in ScriptEngine.flagParts(option.dropFirst(6)) {
                    guard ScriptEngine.shebangFlagNames.contains(String(flag)) else {
                        return .failure(ScriptError("ERR Unexpected flag in script shebang: \(flag)"))
                    }
                    if flag == "no-writes" { noWrites = true }
                    if flag == "allow-oom" { allowsOutOfMemory = true }
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
        cache[sha] = CachedScript(hasShebang: hasShebang, noWrites: noWrites, allowsOutOfMemory: allowsOutOfMemory)
        return .success(sha)
    }

    /// The flags a script's `#!lua flags=...` line declares (empty for
    /// none), or nil when `body` has no shebang or one `load` refuses
    /// (then the script is judged as one without: Redis's
    /// evalGetCommandFlags keeps EVAL's own flags, and the run fails with
    /// the shebang's error).
    static func shebangFlags(_ body: [UInt8]) -> [String]? {
        guard body.starts(with: Array("#!".utf8)), body.contains(10) else { return nil }
        let parts = body.prefix { $0 != 10 }.split(separator: 32).map { String(decoding: $0, as: UTF8.self) }
        guard parts.first == "#!lua" else { return nil }
        var flags: [String] = []
        for option in parts.dropFirst() {
            guard option.hasPrefix("flags=") else { return nil }
            for flag in ScriptEngine.flagParts(option.dropFirst(6)) {
                guard ScriptEngine.shebangFlagNames.contains(String(flag)) else { return nil }
                flags.append(String(flag))
            }
        }
        return flags
    }

    /// The comma-separated parts of a shebang's `flags=` value: none for
    /// an empty value, as Redis splits it.
    static func flagParts(_ text: Substring) -> [Substring] {
        text.isEmpty ? [] : text.split(separator: ",", omittingEmptySubsequences: false)
    }

    /// The flags a shebang may declare.
    static let shebangFlagNames: Set<String> = [
        "no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys",
    ]

    /// FUNCTION LOAD's run of a library's code (after its `#!lua` line):
    /// compiles it in the functions' interpreter and runs it, with the
    /// library API as its globals, so that it registers its functions.
    /// Returns them, or the error reply's message. `timeout`: Redis's
    /// 500 ms for a client's load, nil for a snapshot's.
    func loadLibrary(_ code: ArraySlice<UInt8>, timeout: Int64?) -> Result<[RegisteredFunction], ScriptError> {
        let L = functionInterpreter()
        setLoadMode(L, true)
        defer { setLoadMode(L, false) }
        let failed = code.withUnsafeBytes {
            luaL_loadbuffer(L, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, "@user_function")
        }
        if failed != 0 {
            let message = luaBytes(L, -1) ?? []
            kvd_lua_pop(L, 1)
            return .failure(ScriptError(bytes: Array("ERR Error compiling function: ".utf8) + message))
        }
        registering = []
        loadDeadline = timeout.map { monotonicMilliseconds() + $0 }
        memory.pointee.limit = memory.pointee.used + ScriptEngine.scriptMemoryLimit
        kvd_lua_sethook(L, scriptHook, Unmanaged.passUnretained(self).toOpaque(), LUA_MASKCOUNT, 100_000)
        let status = lua_pcall(L, 0, 0, 0)
        kvd_lua_sethook(L, nil, nil, 0, 0)
        memory.pointee.limit = 0
        loadDeadline = nil
        let registered = registering ?? []
        registering = nil
        guard status != 0 else { return .success(registered) }
        release(registered)
        var message: [UInt8]
        if status == LUA_ERRMEM {
            message = Array(scriptMemoryMessage.utf8)
        } else if lua_type(L, -1) == LuaType.table {
            message = luaErrorInformation(L).message
        } else {
            message = Array("ERR ".utf8) + (luaBytes(L, -1) ?? [])
        }
        kvd_lua_pop(L, 1)
        lua_gc(L, LUA_GCCOLLECT, 0)
        return .failure(ScriptError(bytes: Array("ERR Error registering functions: ".utf8) + message))
    }

    /// Forgets the callbacks of functions no library holds any more.
    func release(_ functions: [RegisteredFunction]) {
        guard let L = functionState else { return }
        for function in functions { luaL_unref(L, kvd_lua_registryindex(), function.reference) }
    }

    /// Switches the functions' globals between the library API (while a
    /// library loads) and the scripts' globals (while a function runs).
    private func setLoadMode(_ L: OpaquePointer, _ loading: Bool) {
        lua_getfield(L, kvd_lua_registryindex(), "kvd.loading")
        lua_pushboolean(L, loading ? 1 : 0)
        lua_call(L, 1, 0)
    }

    /// Runs `target` (a cached script, or a function) with `keys` and
    /// `arguments`, writing its result (or its error) as the reply. A
    /// script gets them as the globals KEYS and ARGV; a function, as its
    /// two arguments, as in Redis. `command` is the caller's request
    /// (FUNCTION STATS shows it).
    func call(
        _ target: ScriptTarget, keys: [[UInt8]], arguments: [[UInt8]], command: [[UInt8]] = [], run: ScriptRun,
        _ out: inout ReplyWriter
    ) {
        let L: OpaquePointer
        let argumentCount: Int32
        switch target {
        case .script(let sha):
            L = interpreter()
            lua_getfield(L, kvd_lua_registryindex(), "kvd.handler")
            lua_getfield(L, kvd_lua_registryindex(), "f_" + sha)
            lua_getfield(L, kvd_lua_registryindex(), "kvd.storage")
            for (name, values) in [("KEYS", keys), ("ARGV", arguments)] {
                luaPush(L, name)
                luaPushArray(L, values)
                lua_rawset(L, -3)
            }
            kvd_lua_pop(L, 1)
            argumentCount = 0
        case .function(_, let reference):
            L = functionInterpreter()
            lua_getfield(L, kvd_lua_registryindex(), "kvd.handler")
            lua_rawgeti(L, kvd_lua_registryindex(), reference)
            luaPushArray(L, keys)
            luaPushArray(L, arguments)
            argumentCount = 2
        }
        var running: RunningFunction?
        if case .function(let name, _) = target {
            let libraries = run.dispatcher.databases.functions
            running = RunningFunction(
                name: name, command: command, libraries: libraries.libraries.count,
                functions: libraries.functions.count)
        }
        let sha = target.name
        self.run = run
        let threshold = Int64(run.dispatcher.databases.limits.busyReplyThreshold)
        activity.begin(function: running, threshold: threshold)
        current = (sha, monotonicMilliseconds(), threshold, false)
        memory.pointee.limit = memory.pointee.used + ScriptEngine.scriptMemoryLimit
        kvd_lua_sethook(L, scriptHook, Unmanaged.passUnretained(self).toOpaque(), LUA_MASKCOUNT, 100_000)
        let failed = lua_pcall(L, argumentCount, 1, -2 - argumentCount)
        kvd_lua_sethook(L, nil, nil, 0, 0)
        memory.pointee.limit = 0
        if let current, current.busy {
            let now = monotonicMilliseconds()
            slowScript = (sha, now)
            log("kvd: the slow script \(sha) ended after \(now - current.startedAt) ms")
        }
        current = nil
        activity.end()
        run.dispatcher.databases.feed.scriptLeavesOut = false  // redis.set_repl lasts one script
        self.run = nil
        runsSinceCollection += 1
        if runsSinceCollection == 50 {
            lua_gc(L, LUA_GCSTEP, 50)
            runsSinceCollection = 0
        }
        if failed == LUA_ERRMEM {
            lua_gc(L, LUA_GCCOLLECT, 0)  // what the script left is garbage now
            out.error(bytes: Array("ERR Error running script \(sha), \(scriptMemoryMessage)".utf8))
            kvd_lua_pop(L, 1)
        } else if failed != 0 {
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
                out.error(bytes: message, countedInErrorStats: !information.countedAlready)
            }
            kvd_lua_pop(L, 1)
        } else {
            luaWriteReply(L, scriptResp3: run.session.resp3, &out)
        }
        kvd_lua_pop(L, 1)  // the error handler
        resetGlobals(L)
    }

    /// The Lua count hook, every 100,000 instructions of a script (as in
    /// Redis): past the busy threshold the script is busy (the I/O threads
    /// answer BUSY from then on, and with `--io-threads 0` the core's own
    /// connections are served from here); a script whose kill was accepted
    /// raises Redis's error, on every line from then on, so that a pcall
    /// cannot catch it for good. Returns 1 to raise the error it pushed.
    fileprivate func interrupt(_ L: OpaquePointer) -> Int32 {
        if let loadDeadline, monotonicMilliseconds() > loadDeadline {
            kvd_lua_sethook(L, scriptHook, Unmanaged.passUnretained(self).toOpaque(), LUA_MASKLINE, 0)
            luaPushError(L, Array("FUNCTION LOAD timeout".utf8))
            return 1
        }
        guard var running = current else { return 0 }
        if !running.busy {
            let elapsed = monotonicMilliseconds() - running.startedAt
            guard elapsed >= running.threshold else { return 0 }
            running.busy = true
            current = running
            // Busy first: once the line is out, every client is answered BUSY.
            activity.becomeBusy()
            log(
                "kvd: slow script detected: still in execution after \(elapsed) milliseconds. You can try killing the script using the \(activity.runsFunction ? "FUNCTION" : "SCRIPT") KILL command. Script name is: \(running.sha)."
            )
        }
        serveClientsWhileBusy?()
        guard activity.killRequested else { return 0 }
        kvd_lua_sethook(L, scriptHook, Unmanaged.passUnretained(self).toOpaque(), LUA_MASKLINE, 0)
        luaPushError(L, Array(scriptKilledMessage.utf8))
        return 1
    }

    /// The SHA of the busy script that ended within the last `window`
    /// (the run time of the job just reported slow: so it ran in that job),
    /// once; nil when none did. (With `--io-threads 0` scripts run in
    /// watch callbacks, which make no slow-job report.)
    func takeSlowScript(within window: Duration) -> String? {
        defer { slowScript = nil }
        guard let slowScript else { return nil }
        let (seconds, attoseconds) = window.components
        let windowMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
        return monotonicMilliseconds() - slowScript.endedAt <= windowMilliseconds ? slowScript.sha : nil
    }

    private func log(_ line: String) {
        let line = line + "\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    }

    /// Puts the sandbox's globals back before a script is compiled or after
    /// one ran: nothing a script does may change what the next one sees.
    private func resetGlobals(_ L: OpaquePointer) {
        lua_getfield(L, kvd_lua_registryindex(), "kvd.globals")
        lua_replace(L, kvd_lua_globalsindex())
    }
}

/// Pushes `values` as a Lua array (KEYS, ARGV, a function's arguments).
private func luaPushArray(_ L: OpaquePointer, _ values: [[UInt8]]) {
    lua_createtable(L, Int32(clamping: values.count), 0)
    for (index, value) in values.enumerated() {
        luaPush(L, value)
        lua_rawseti(L, -2, Int32(index + 1))
    }
}

/// The count hook's entry from C (see `ScriptEngine.interrupt`).
private let scriptHook: kvd_lua_hook_function = { L, context in
    Unmanaged<ScriptEngine>.fromOpaque(context!).takeUnretainedValue().interrupt(L!)
}

/// Why a script that passed `ScriptEngine.scriptMemoryLimit` failed.
let scriptMemoryMessage =
    "not enough memory (kvd allows a script \(ScriptEngine.scriptMemoryLimit >> 20) MB of Lua heap)"

/// An error reply's message, `CODE text`.
struct ScriptError: Error {
    let message: [UInt8]
    init(_ message: String) { self.message = Array(message.utf8) }
    init(bytes: [UInt8]) { message = bytes }
}
