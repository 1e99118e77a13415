// Dispatcher+Memory.swift: the maxmemory gate every request passes while a
// limit is set, in Redis 7.0's place (processCommand: after the MULTI
// checks, before MISCONF) and with its rules:
//
// - Eviction runs first (Storage/Eviction/Evictor.swift), except during
//   CLIENT PAUSE (the data set stays as it is) and for the commands run
//   inside EXEC or a script (their caller passed the gate).
// - Memory still over the limit with nothing left to evict refuses, with
//   OOM, the commands flagged `denyoom` in Redis's table (they may grow
//   memory), an EXEC whose queue holds one (EXECABORT), and any command a
//   client queues in MULTI but EXEC, DISCARD, QUIT and RESET.
// - A script with a shebang, or a function, counts as `denyoom` unless it
//   declared no-writes or allow-oom (so EXEC checks it among its queue).
//   Redis also refuses such a script as it starts when the state says so
//   (scriptPrepareForRun); in kvd only the gate could set that state for
//   it, and the gate has refused it already, so there is no second check.
// - A script's command is refused with OOM when memory was over the limit
//   as the script's command started, it is a `denyoom` command, the script
//   has not written yet (it cannot stop halfway), and it did not declare
//   allow-oom.

/// Redis 7.0's `denyoom` commands that kvd has (FUNCTION LOAD and RESTORE
/// are subcommands: `deniedWhenOutOfMemory` names them).
let denyOOMCommands: Set<String> = [
    "append", "bitfield", "bitop", "blmove", "brpoplpush", "copy", "decr", "decrby", "geoadd", "georadius",
    "georadiusbymember", "geosearchstore", "getset", "hincrby", "hincrbyfloat", "hmset", "hset", "hsetnx", "incr",
    "incrby", "incrbyfloat", "linsert", "lmove", "lpush", "lpushx", "lset", "mset", "msetnx", "pfadd", "pfdebug",
    "pfmerge", "psetex", "restore", "rpoplpush", "rpush", "rpushx", "sadd", "sdiffstore", "set", "setbit", "setex",
    "setnx", "setrange", "sinterstore", "sort", "sunionstore", "zadd", "zdiffstore", "zincrby", "zinterstore",
    "zrangestore", "zunionstore",
]

/// Redis's reply to a command refused for memory.
let outOfMemoryError = "OOM command not allowed when used memory > 'maxmemory'."

extension Dispatcher {
    /// By `Command.id`: the `denyoom` commands.
    static let deniesOnOutOfMemory = rows.map { denyOOMCommands.contains($0.name) }
    /// Whether `request` (of command `id`) may grow memory. A script with
    /// a shebang, or a function, may unless it declared no-writes or
    /// allow-oom (Redis's scriptFlagsToCmdFlags); an EVAL without one is
    /// judged by the commands it calls.
    private func deniedWhenOutOfMemory(_ id: Int, _ request: Request) -> Bool {
        if Dispatcher.deniesOnOutOfMemory[id] { return true }
        guard request.count > 1 else { return false }
        switch Dispatcher.rows[id].name {
        case "function":
            let sub = request.raw(1)
            return equalsIgnoringCase(sub, "load") || equalsIgnoringCase(sub, "restore")
        case "eval", "eval_ro":
            guard let flags = ScriptEngine.shebangFlags(Array(request.raw(1).prefix(4096))) else { return false }
            return !flags.contains("no-writes") && !flags.contains("allow-oom")
        case "evalsha", "evalsha_ro":
            guard request.raw(1).count == 40,
                let script = scripts.cache[String(decoding: lowercased(request[1]), as: UTF8.self)],
                script.hasShebang
            else { return false }
            return !script.noWrites && !script.allowsOutOfMemory
        case "fcall", "fcall_ro":
            guard let function = databases.functions.function(named: request[1]) else { return false }
            return !function.flags.contains(.noWrites) && !function.flags.contains(.allowOOM)
        default:
            return false
        }
    }

    /// The gate: evicts what the limit asks, then refuses `request` with
    /// OOM (written to `out`) when the rules above say so; true when refused.
    /// Called only while maxmemory is set.
    func refusedForMemory(
        _ id: Int, _ request: Request, _ session: ClientSession, _ out: inout ReplyWriter
    ) -> Bool {
        // A script's commands are checked as it calls them (`refusesScriptCall`).
        guard scripts.run == nil, !inExec else { return false }
        let outOfMemory = pause.active ? false : evict() == .failed
        scriptOutOfMemory = outOfMemory
        guard outOfMemory else { return false }
        let name = Dispatcher.rows[id].name
        let refused: Bool
        if name == "exec" {
            refused =
                session.transaction.map { transaction in
                    var denied = false
                    transaction.queued.forEach { queued in
                        if let row = Dispatcher.table.row(named: queued.raw(0)),
                            deniedWhenOutOfMemory(row, queued)
                        {
                            denied = true
                        }
                        return !denied
                    }
                    return denied
                } ?? false
        } else {
            refused =
                deniedWhenOutOfMemory(id, request)
                || (session.transaction != nil && !["discard", "quit", "reset"].contains(name))
        }
        guard refused else { return false }
        stats.recordRejection(id)
        if name == "exec" && session.transaction != nil {
            abortExec(request, outOfMemoryError, session, &out)
        } else {
            session.transaction?.refused = true
            out.error(outOfMemoryError)
        }
        return true
    }

    /// Whether a running script's call of `request` (command `id`) is
    /// refused with OOM: memory was over the limit as the script's command
    /// started, the call may grow memory, the script has not written yet
    /// (it cannot stop halfway), and it did not declare allow-oom (Redis's
    /// scriptVerifyOOM). Asked before the call counts as the script's write.
    func refusesScriptCall(_ id: Int, _ request: Request, allowsOutOfMemory: Bool) -> Bool {
        databases.memory.maxmemory > 0 && scriptOutOfMemory && !allowsOutOfMemory
            && !scripts.activity.hasWritten && deniedWhenOutOfMemory(id, request)
    }

    /// Evicts what the limit asks now; past the time limit, the rest goes
    /// on in turns of the loop of its own (one scheduled at a time), as
    /// Redis's eviction timer does, so that no one command's turn holds
    /// the core for long. Without a loop (a dispatcher no server runs), it
    /// goes on before the next command.
    ///
    /// While those turns are scheduled, a command evicts 16 keys at most,
    /// enough to make room for what it adds, not the 500 us a pipeline of
    /// 10,000 commands would otherwise take each.
    /// The DELs of the evicted keys go to the append-only file each on its
    /// own, as Redis propagates them, ahead of the command's effects (inside
    /// EXEC, as part of its block).
    @discardableResult
    func evict() -> Evictor.Outcome {
        let continuing = evictor.isContinuing
        let outcome = evictor.perform(databases, atMost: continuing ? 16 : .max)
        if databases.feed.isOn && effectDepth == 0 && !inExec { databases.feed.commit(separately: true) }
        if outcome == .running, !continuing, let owner {
            evictor.isContinuing = true
            try? owner.post { dispatcher in
                dispatcher.evictor.isContinuing = false
                if !dispatcher.pause.active { dispatcher.evict() }
                dispatcher.flushPushes()  // the evicted keys' notifications
            }
        }
        return outcome
    }
}
