// RedisLibrary.swift: the `redis` table a script calls, as Redis 7.0 builds
// it (script_lua.c): redis.call and redis.pcall, which run kvd's own command
// handlers (the table MULTI uses) as a client of the script's, and
// error_reply, status_reply, sha1hex, log, setresp, set_repl and
// replicate_commands, with Redis's argument checks and wording; also the
// math.random that Redis swaps in. Every function is a Swift function behind
// the shim's trampoline: it returns -1 to raise the error it pushed, so a
// Lua error never unwinds a Swift frame.
import CLua
import Glibc

/// What scripts may not call (Redis 7.0's `noscript` flag, for kvd's commands).
let commandsRefusedToScripts: Set<String> = [
    "hello", "auth", "client", "reset", "quit", "function", "fcall", "fcall_ro", "multi", "exec", "discard", "watch",
    "unwatch",
    "eval", "evalsha", "eval_ro", "evalsha_ro", "script", "config", "latency",
    "blpop", "brpop", "blmove", "brpoplpush", "bzpopmin", "bzpopmax", "save", "bgsave", "shutdown",
    "subscribe", "ssubscribe", "psubscribe", "unsubscribe", "sunsubscribe", "punsubscribe", "monitor",
]

/// Redis 7.0's MAY_REPLICATE commands, a flag COMMAND INFO does not show:
/// a read-only script may not call them, and CLIENT PAUSE WRITE holds them.
let mayReplicateCommands: Set<String> = ["eval", "evalsha", "fcall", "pfcount", "publish", "spublish"]

/// What a read-only script may not call (Redis 7.0's `write` flag, for kvd's commands).
let writeCommands: Set<String> = [
    "rename", "renamenx", "unlink", "set", "getset", "del", "incr", "decr", "incrby", "decrby", "append", "mset",
    "expire", "pexpire", "expireat", "pexpireat", "persist", "swapdb", "move", "copy", "flushdb", "flushall",
    "setnx", "setex", "psetex", "msetnx", "getex", "getdel", "setrange", "setbit", "incrbyfloat",
    "hset", "hmset", "hsetnx", "hdel", "hincrby", "hincrbyfloat",
    "lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "lset", "linsert", "lrem", "ltrim", "lmove", "rpoplpush",
    "lmpop", "blpop", "brpop", "blmove", "brpoplpush", "blmpop",
    "sadd", "srem", "spop", "smove", "sinterstore", "sunionstore", "sdiffstore",
    "zadd", "zrem", "zincrby", "zpopmin", "zpopmax", "zmpop", "bzpopmin", "bzpopmax", "bzmpop", "zrangestore",
    "zremrangebyrank", "zremrangebyscore", "zremrangebylex", "zunionstore", "zinterstore", "zdiffstore",
    "bitop", "bitfield", "geoadd", "georadius", "georadiusbymember", "geosearchstore", "sort", "restore", "pfadd",
    "pfmerge", "pfdebug",
]

/// The engine a library function was registered with.
private func engine(_ context: UnsafeMutableRawPointer?) -> ScriptEngine {
    Unmanaged<ScriptEngine>.fromOpaque(context!).takeUnretainedValue()
}

/// Installs the global `redis` table and Redis's math.random on `L`.
func installRedisLibrary(_ L: OpaquePointer, context: UnsafeMutableRawPointer) {
    lua_createtable(L, 0, 24)
    func function(_ name: String, _ body: kvd_lua_function) {
        luaSetField(L, name) { kvd_lua_pushfunction(L, body, context) }
    }
    func number(_ name: String, _ value: Double) {
        luaSetField(L, name) { lua_pushnumber(L, value) }
    }
    function("call") { L, context in redisCall(L!, engine(context), raise: true) }
    function("pcall") { L, context in redisCall(L!, engine(context), raise: false) }
    function("sha1hex") { L, _ in
        let L = L!
        guard lua_gettop(L) == 1 else {
            luaPushError(L, Array("wrong number of arguments".utf8))
            return -1
        }
        luaPush(L, sha1Hex(luaBytes(L, 1) ?? []))
        return 1
    }
    function("error_reply") { L, _ in
        let L = L!
        guard takesOneString(L) else { return 1 }
        var message = luaBytes(L, -1) ?? []
        if let nul = message.firstIndex(of: 0) { message.removeSubrange(nul...) }
        luaPushError(L, message.first == UInt8(ascii: "-") ? message : [UInt8(ascii: "-")] + message)
        return 1
    }
    function("status_reply") { L, _ in
        let L = L!
        guard takesOneString(L) else { return 1 }
        lua_createtable(L, 0, 1)
        luaPush(L, "ok")
        lua_pushvalue(L, -3)
        lua_settable(L, -3)
        return 1
    }
    function("log") { L, _ in redisLog(L!) }
    for (name, level) in [("LOG_DEBUG", 0.0), ("LOG_VERBOSE", 1), ("LOG_NOTICE", 2), ("LOG_WARNING", 3)] {
        number(name, level)
    }
    number("REDIS_VERSION_NUM", Double(0x07_00_0F))
    luaSetField(L, "REDIS_VERSION") { luaPush(L, "7.0.15") }
    function("setresp") { L, context in
        let L = L!
        guard let run = engine(context).run else {
            luaPushError(L, Array("redis.setresp can only be called inside a script invocation".utf8))
            return -1
        }
        guard lua_gettop(L) == 1 else {
            luaPushError(L, Array("redis.setresp() requires one argument.".utf8))
            return -1
        }
        let version = Int32(truncatingIfNeeded: luaInteger(lua_tonumber(L, -1)))
        guard version == 2 || version == 3 else {
            luaPushError(L, Array("RESP version must be 2 or 3.".utf8))
            return -1
        }
        run.session.resp3 = version == 3
        return 0
    }
    // kvd has no replicas: of set_repl's flags, REPL_AOF is the one that
    // changes something (without it, the script's writes from then on are
    // left out of the append-only file, as Redis leaves them out).
    function("set_repl") { L, context in
        let L = L!
        guard let run = engine(context).run else {
            luaPushError(L, Array("redis.set_repl can only be called inside a script invocation".utf8))
            return -1
        }
        guard lua_gettop(L) == 1 else {
            luaPushError(L, Array("redis.set_repl() requires two arguments.".utf8))
            return -1
        }
        guard luaInteger(lua_tonumber(L, -1)) & ~3 == 0 else {
            luaPushError(L, Array("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.".utf8))
            return -1
        }
        run.dispatcher.databases.feed.scriptLeavesOut = luaInteger(lua_tonumber(L, -1)) & 1 == 0
        return 0
    }
    for (name, flags) in [("REPL_NONE", 0.0), ("REPL_AOF", 1), ("REPL_SLAVE", 2), ("REPL_REPLICA", 2), ("REPL_ALL", 3)]
    {
        number(name, flags)
    }
    // Deprecated in Redis 7.0, where it does nothing and answers true.
    function("replicate_commands") { L, _ in
        lua_pushboolean(L!, 1)
        return 1
    }
    lua_setfield(L, kvd_lua_globalsindex(), "redis")

    lua_getfield(L, kvd_lua_globalsindex(), "math")
    luaSetField(L, "random") { kvd_lua_pushfunction(L, { L, context in mathRandom(L!, engine(context)) }, context) }
    luaSetField(L, "randomseed") {
        kvd_lua_pushfunction(
            L,
            { L, context in
                let L = L!
                guard engine(context).run != nil else {
                    luaPush(L, "math.randomseed can only be called inside a script invocation")
                    return -1
                }
                engine(context).random.seed(Int32(truncatingIfNeeded: luaInteger(lua_tonumber(L, 1))))
                return 0
            }, context)
    }
    kvd_lua_pop(L, 1)
}

/// True when a function got one string argument; otherwise pushes the
/// error table that error_reply and status_reply return (not raise) then.
private func takesOneString(_ L: OpaquePointer) -> Bool {
    guard lua_gettop(L) == 1, lua_type(L, -1) == LuaType.string else {
        luaPushError(L, Array("wrong number or type of arguments".utf8))
        return false
    }
    return true
}

/// redis.call (`raise`) and redis.pcall: one command, run as the script's
/// client through the dispatcher; its reply converted to Lua.
private func redisCall(_ L: OpaquePointer, _ engine: ScriptEngine, raise: Bool) -> Int32 {
    guard let run = engine.run else {
        luaPushError(L, Array("redis.call/pcall can only be called inside a script invocation".utf8))
        return -1
    }
    let count = lua_gettop(L)
    guard count > 0 else {
        luaPushError(L, Array("Please specify at least one argument for this redis lib call".utf8))
        return raise ? -1 : 1
    }
    var batch = RequestBatch()
    for index in 1...count {
        if lua_type(L, index) == LuaType.number {
            // Not lua_tolstring: Lua prints numbers with 14 digits.
            batch.appendArgument(formatG17(lua_tonumber(L, index)))
        } else if let bytes = luaBytes(L, index) {
            batch.appendArgument(bytes)
        } else {
            lua_settop(L, 0)
            luaPushError(L, Array("Lua redis lib command arguments must be strings or integers".utf8))
            return raise ? -1 : 1
        }
    }
    lua_settop(L, 0)
    batch.endRequest()
    var refusal: String?
    var refused: Int?
    var killed = false
    var reply: [UInt8] = []
    batch.forEach { request in
        guard let command = Dispatcher.command(named: request.raw(0)) else {
            refusal = refusalOfAbsentCommand(request)
            return false
        }
        let subcommandRefusal =
            Dispatcher.containerRows[command.id] && request.count > 1 ? CommandDocs.subcommandRefusal(request) : nil
        guard subcommandRefusal != .unknown else {
            refusal = "Unknown Redis command called from script"
            return false
        }
        guard command.accepts(request.count) && subcommandRefusal == nil else {
            refusal = "Wrong number of args calling Redis command from script"
            refused = command.id
            return false
        }
        if commandsRefusedToScripts.contains(command.name) {
            refusal = "This Redis command is not allowed from script"
            refused = command.id
        } else if run.readOnly
            && (writeCommands.contains(command.name) || mayReplicateCommands.contains(command.name))
        {
            refusal = "Write commands are not allowed from read-only scripts."
            refused = command.id
        } else if run.dispatcher.refusesScriptCall(command.id, request, allowsOutOfMemory: run.allowsOutOfMemory) {
            refusal = "-" + outOfMemoryError
            refused = command.id
        } else if writeCommands.contains(command.name) && !engine.activity.beginWrite() {
            killed = true  // SCRIPT KILL was accepted first: the script stops unwritten
        } else {
            var out = ReplyWriter()
            out.resp3 = run.session.resp3
            // A reply that grows with a count (SRANDMEMBER key -huge) stops
            // at the clients' limit here too, instead of filling memory.
            out.limit = run.dispatcher.replyLimit
            // Counted in INFO commandstats and SLOWLOG on its own clock, as
            // Redis counts a script's calls.
            run.dispatcher.executeTimed(request, for: run.session, into: &out)
            // Its error counts now, once (the error table Lua gets is
            // marked, so the script's reply does not count it again).
            run.dispatcher.stats.takeErrors(&out)
            if out.stoppedAtLimit {
                refusal =
                    "kvd: the reply of '\(command.name)' passed the client output buffer limit (\(out.limit) bytes)"
            } else {
                reply = out.finish().chunks.flatMap { $0 }
            }
        }
        return false
    }
    if killed {
        luaPushError(L, Array(scriptKilledMessage.utf8))
        return -1
    }
    if let refusal {
        // Counted as Redis's scriptCall counts it: an ERR (an OOM for
        // memory), and a rejected call of the command when there is one.
        run.dispatcher.stats.countError(code: refusal.hasPrefix("-OOM ") ? "OOM" : "ERR")
        if let refused { run.dispatcher.stats.recordRejection(refused) }
        luaPushCallError(L, refusal)
        return raise ? -1 : 1
    }
    var index = 0
    luaPushReply(L, reply, &index)
    return raise && reply.first == UInt8(ascii: "-") ? -1 : 1
}

/// What a script gets for a command kvd does not implement: Redis's
/// refusal when Redis's own table says Redis would refuse it to scripts
/// too (its arity, its `noscript` flag: CLUSTER RESET, say), else
/// "unknown command", as kvd has none.
private func refusalOfAbsentCommand(_ request: Request) -> String {
    let unknown = "Unknown Redis command called from script"
    guard var entry = CommandDocs.entry(request[0]) else { return unknown }
    if !entry.subcommands.isEmpty && request.count >= 2 {
        let name = entry.name + "|" + String(decoding: lowercased(request[1]), as: UTF8.self)
        guard let subcommand = entry.subcommands.first(where: { $0.name == name }) else { return unknown }
        entry = subcommand
    }
    guard entry.arity > 0 ? request.count == entry.arity : request.count >= -entry.arity else {
        return "Wrong number of args calling Redis command from script"
    }
    return entry.flags.contains("noscript") ? "This Redis command is not allowed from script" : unknown
}

/// redis.log(level, message, ...): kvd logs to standard error, as it does
/// for its own notices; levels below NOTICE are not shown (Redis's default
/// verbosity).
private func redisLog(_ L: OpaquePointer) -> Int32 {
    let count = lua_gettop(L)
    guard count >= 2 else {
        luaPushError(L, Array("redis.log() requires two arguments or more.".utf8))
        return -1
    }
    guard lua_isnumber(L, -count) != 0 else {
        luaPushError(L, Array("First argument must be a number (log level).".utf8))
        return -1
    }
    let level = luaInteger(lua_tonumber(L, -count))
    guard (0...3).contains(level) else {
        luaPushError(L, Array("Invalid debug level.".utf8))
        return -1
    }
    guard level >= 2 else { return 0 }
    var line: [UInt8] = []
    for index in 1..<count {
        guard let bytes = luaBytes(L, -count + index) else { continue }
        if index != 1 { line.append(32) }
        line += bytes
    }
    line.append(10)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    return 0
}

/// Lua 5.1's `luaL_checkint`: the number as a 64-bit integer (out of
/// range is the minimum, as x86 converts), then its low 32 bits.
private func luaCInt(_ number: Double) -> Int32 {
    Int32(truncatingIfNeeded: luaInteger(number))
}

/// Lua's math.random over Redis's rand48, so a seeded script draws Redis's numbers.
private func mathRandom(_ L: OpaquePointer, _ engine: ScriptEngine) -> Int32 {
    guard engine.run != nil else {
        luaPush(L, "math.random can only be called inside a script invocation")
        return -1
    }
    let r = Double(engine.random.next() % ScriptRandom.max) / Double(ScriptRandom.max)
    switch lua_gettop(L) {
    case 0:
        lua_pushnumber(L, r)
    case 1:
        let upper = luaCInt(lua_tonumber(L, 1))
        guard upper >= 1 else {
            luaPushLibraryError(L, "bad argument #1 to 'random' (interval is empty)")
            return -1
        }
        lua_pushnumber(L, (r * Double(upper)).rounded(.down) + 1)
    case 2:
        let lower = luaCInt(lua_tonumber(L, 1))
        let upper = luaCInt(lua_tonumber(L, 2))
        guard lower <= upper else {
            luaPushLibraryError(L, "bad argument #2 to 'random' (interval is empty)")
            return -1
        }
        // C's int arithmetic, wrapping as Redis's Lua does on this machine
        // (the whole int range is a span of 0, which draws the lower bound).
        lua_pushnumber(L, (r * Double(upper &- lower &+ 1)).rounded(.down) + Double(lower))
    default:
        luaPushLibraryError(L, "wrong number of arguments")
        return -1
    }
    return 1
}
