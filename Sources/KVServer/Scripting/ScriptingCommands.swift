// ScriptingCommands.swift: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT,
// with Redis 7.0's semantics and wording (eval.c, script.c). A script runs
// on the core loop as one command, its redis.call's going through the same
// table as the client's own (see RedisLibrary.swift); inside MULTI, EVAL is
// queued like any command and runs within EXEC.
//
// Functions (FUNCTION, FCALL) are in FunctionCommands.swift. SCRIPT DEBUG (the Lua
// debugger) is absent. A script holds the core until it returns, so a
// SCRIPT KILL that reaches the core finds none running; while a script is
// busy, SCRIPT KILL is answered before it would reach the core
// (ScriptActivity.swift).

let scriptingCommands: [Command] =
    [
        Command("eval", arity: -3, keys: .none) { dispatcher, session, r, out in
            dispatcher.eval(session, r, sha: false, readOnly: false, &out)
        },
        Command("evalsha", arity: -3, keys: .none) { dispatcher, session, r, out in
            dispatcher.eval(session, r, sha: true, readOnly: false, &out)
        },
        Command("eval_ro", arity: -3, keys: .none) { dispatcher, session, r, out in
            dispatcher.eval(session, r, sha: false, readOnly: true, &out)
        },
        Command("evalsha_ro", arity: -3, keys: .none) { dispatcher, session, r, out in
            dispatcher.eval(session, r, sha: true, readOnly: true, &out)
        },
        Command("script", arity: -2, keys: .none) { dispatcher, _, r, out in dispatcher.script(r, &out) },
    ] + functionCommands

private let noScript: StaticString = "NOSCRIPT No matching script. Please use EVAL."

extension Dispatcher {
    fileprivate func eval(_ session: ClientSession, _ r: Request, sha: Bool, readOnly: Bool, _ out: inout ReplyWriter) {
        if sha && r.raw(1).count != 40 { return out.error("\(noScript)") }
        guard let keyCount = parseInteger(r.raw(2)) else { return out.error(notAnInteger) }
        guard keyCount <= r.count - 3 else {
            return out.error("ERR Number of keys can't be greater than number of args")
        }
        guard keyCount >= 0 else { return out.error("ERR Number of keys can't be negative") }
        let name: String
        if sha {
            name = String(decoding: lowercased(r[1]), as: UTF8.self)
            guard scripts.cache[name] != nil else { return out.error("\(noScript)") }
        } else {
            switch scripts.load(r[1]) {
            case .success(let loaded): name = loaded
            case .failure(let error): return out.error(bytes: error.message)
            }
        }
        let script = scripts.cache[name]!
        if readOnly && script.hasShebang && !script.noWrites {
            return out.error("ERR Can not execute a script with write flag using *_ro command.")
        }
        let client = ClientSession(info: scriptClientInfo, authenticated: true)
        client.database = session.database
        var run = ScriptEngine.ScriptRun(
            dispatcher: self, session: client, readOnly: readOnly || (script.hasShebang && script.noWrites))
        run.allowsOutOfMemory = script.hasShebang && script.allowsOutOfMemory
        let arguments = (3..<r.count).map { r[$0] }
        // A script never blocks, as in Redis: a blocking pop it may call
        // (BLMPOP, BZMPOP; the others are refused to scripts) answers an
        // empty wait at once, as inside EXEC.
        let wasInExec = inExec
        inExec = true
        defer { inExec = wasInExec }
        scripts.call(
            .script(sha: name), keys: Array(arguments.prefix(keyCount)),
            arguments: Array(arguments.dropFirst(keyCount)), run: run,
            &out)
    }

    fileprivate func script(_ r: Request, _ out: inout ReplyWriter) {
        // SCRIPT is a container in Redis 7.0: the dispatcher has checked
        // each subcommand's arity (as `script|load`) from Redis's table.
        let subcommands: [StaticString] = ["exists", "flush", "help", "kill", "load"]
        guard let name = subcommands.first(where: { equalsIgnoringCase(r.raw(1), $0) }) else {
            return out.unknownSubcommand(r, of: "SCRIPT")
        }
        switch "\(name)" {
        case "help":
            let help = [
                "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "EXISTS <sha1> [<sha1> ...]",
                "    Return information about the existence of the scripts in the script cache.",
                "FLUSH [ASYNC|SYNC]",
                "    Flush the Lua scripts cache. Very dangerous on replicas.",
                "    When called without the optional mode argument, the behavior is determined by the",
                "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                "    * ASYNC: Asynchronously flush the scripts cache.",
                "    * SYNC: Synchronously flush the scripts cache.",
                "KILL",
                "    Kill the currently executing Lua script.",
                "LOAD <script>",
                "    Load a script into the scripts cache without executing it.",
                "HELP",
                "    Print this help.",
            ]
            out.arrayHeader(help.count)
            for line in help { out.status(line) }
        case "flush":
            guard
                r.count == 2
                    || (r.count == 3 && (equalsIgnoringCase(r[2], "sync") || equalsIgnoringCase(r[2], "async")))
            else { return out.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option") }
            scripts.flush()
            out.ok()
        case "exists":  // Redis's script dictionary compares SHAs ignoring case
            out.arrayHeader(r.count - 2)
            for index in 2..<r.count {
                out.integer(scripts.cache[String(decoding: lowercased(r[index]), as: UTF8.self)] == nil ? 0 : 1)
            }
        case "load":
            switch scripts.load(r[2]) {
            case .success(let sha): out.bulk(sha)
            case .failure(let error): out.error(bytes: error.message)
            }
        default:  // kill
            out.error("NOTBUSY No scripts in execution right now.")
        }
    }
}

/// The client a script's commands run as: not a connection, never listed.
let scriptClientInfo = ClientInfo(id: 0, address: "", localAddress: "", fd: -1, kill: {})
