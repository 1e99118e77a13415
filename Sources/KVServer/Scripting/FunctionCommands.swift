// FunctionCommands.swift: FUNCTION (LOAD, LIST, DELETE, FLUSH, DUMP,
// RESTORE, KILL, STATS, HELP) and FCALL / FCALL_RO, with Redis 7.0's
// semantics and wording (functions.c). The libraries live with the
// databases (FunctionLibraries), their callbacks in the scripting engine's
// functions' interpreter; a function runs like EVAL's scripts (one job on
// the core, busy past the threshold, FUNCTION KILL answered off the core:
// ScriptActivity.swift).

let functionCommands: [Command] = [
    Command("fcall", arity: -3, keys: .none) { dispatcher, session, r, out in
        dispatcher.fcall(session, r, readOnly: false, &out)
    },
    Command("fcall_ro", arity: -3, keys: .none) { dispatcher, session, r, out in
        dispatcher.fcall(session, r, readOnly: true, &out)
    },
    Command("function", arity: -2, keys: .none) { dispatcher, _, r, out in dispatcher.function(r, &out) },
]

/// How long FUNCTION LOAD lets a library's code run (Redis's LOAD_TIMEOUT_MS).
private let loadTimeout: Int64 = 500

extension Dispatcher {
    fileprivate func fcall(_ session: ClientSession, _ r: Request, readOnly: Bool, _ out: inout ReplyWriter) {
        guard let function = databases.functions.function(named: r[1]) else {
            return out.error("ERR Function not found")
        }
        guard let keyCount = parseInteger(r.raw(2)) else { return out.error("ERR Bad number of keys provided") }
        guard keyCount <= r.count - 3 else {
            return out.error("ERR Number of keys can't be greater than number of args")
        }
        guard keyCount >= 0 else { return out.error("ERR Number of keys can't be negative") }
        let noWrites = function.flags.contains(.noWrites)
        if readOnly && !noWrites {
            return out.error("ERR Can not execute a script with write flag using *_ro command.")
        }
        let allowsOutOfMemory = function.flags.contains(.allowOOM)
        let client = ClientSession(info: scriptClientInfo, authenticated: true)
        client.database = session.database
        var run = ScriptEngine.ScriptRun(dispatcher: self, session: client, readOnly: readOnly || noWrites)
        run.allowsOutOfMemory = allowsOutOfMemory
        let arguments = (3..<r.count).map { r[$0] }
        // As EVAL: nothing a function calls blocks.
        let wasInExec = inExec
        inExec = true
        defer { inExec = wasInExec }
        scripts.call(
            .function(name: function.name, reference: function.reference), keys: Array(arguments.prefix(keyCount)),
            arguments: Array(arguments.dropFirst(keyCount)), command: (0..<r.count).map { r[$0] }, run: run, &out)
    }

    fileprivate func function(_ r: Request, _ out: inout ReplyWriter) {
        // A container: the dispatcher has checked each subcommand's arity
        // (as `function|load`) from Redis's table.
        let subcommands: [StaticString] = [
            "delete", "dump", "flush", "help", "kill", "list", "load", "restore", "stats",
        ]
        guard let name = subcommands.first(where: { equalsIgnoringCase(r.raw(1), $0) }) else {
            return out.unknownSubcommand(r, of: "FUNCTION")
        }
        let libraries = databases.functions
        switch "\(name)" {
        case "load":
            var replace = false
            for index in 2..<(r.count - 1) {
                guard equalsIgnoringCase(r.raw(index), "replace") else {
                    return out.error(bytes: Array("ERR Unknown option given: ".utf8) + ReplyWriter.quoted(r[index]))
                }
                replace = true
            }
            switch libraries.create(r[r.count - 1], replace: replace, engine: scripts, timeout: loadTimeout) {
            case .success(let library):
                databases.fence.changes += 1
                out.bulk(library)
            case .failure(let error): out.error(bytes: error.message)
            }
        case "list": list(r, &out)
        case "delete":
            guard libraries.delete(r[2], engine: scripts) else { return out.error("ERR Library not found") }
            databases.fence.changes += 1
            out.ok()
        case "flush":
            guard r.count <= 3 else { return out.subcommandSyntaxError(r, of: "FUNCTION") }
            guard r.count == 2 || equalsIgnoringCase(r.raw(2), "sync") || equalsIgnoringCase(r.raw(2), "async") else {
                return out.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
            }
            libraries.flush(engine: scripts)
            databases.fence.changes += 1
            out.ok()
        case "dump": out.bulk(FunctionPayload.dump(libraries.ordered.map(\.code)))
        case "restore": restore(r, &out)
        case "kill":
            // A function that runs holds the core: a FUNCTION KILL that
            // reaches the core finds none (a busy one's KILL is answered
            // off the core, ScriptActivity.swift).
            out.error("NOTBUSY No scripts in execution right now.")
        case "stats":
            out.mapHeader(2)
            out.bulk("running_script")
            out.null()
            out.bulk("engines")
            out.mapHeader(1)
            out.bulk("LUA")
            out.mapHeader(2)
            out.bulk("libraries_count")
            out.integer(libraries.libraries.count)
            out.bulk("functions_count")
            out.integer(libraries.functions.count)
        default:  // help
            out.help("FUNCTION", functionHelp)
        }
    }

    private func list(_ r: Request, _ out: inout ReplyWriter) {
        var withCode = false
        var pattern: [UInt8]?
        var index = 2
        while index < r.count {
            if !withCode && equalsIgnoringCase(r.raw(index), "withcode") {
                withCode = true
            } else if pattern == nil && equalsIgnoringCase(r.raw(index), "libraryname") {
                guard index < r.count - 1 else { return out.error("ERR library name argument was not given") }
                index += 1
                pattern = r[index]
            } else {
                return out.error(bytes: Array("ERR Unknown argument ".utf8) + ReplyWriter.quoted(r[index]))
            }
            index += 1
        }
        let shown = databases.functions.ordered.filter { library in
            pattern.map { globMatch($0, library.name) } ?? true
        }
        out.arrayHeader(shown.count)
        for library in shown {
            out.mapHeader(withCode ? 4 : 3)
            out.bulk("library_name")
            out.bulk(library.name)
            out.bulk("engine")
            out.bulk("LUA")
            out.bulk("functions")
            out.arrayHeader(library.functions.count)
            for function in library.functions {
                out.mapHeader(3)
                out.bulk("name")
                out.bulk(function.name)
                out.bulk("description")
                if let description = function.description { out.bulk(description) } else { out.null() }
                out.bulk("flags")
                let flags = ScriptFlags.names.filter { function.flags.contains($0.flag) }
                out.setHeader(flags.count)
                for flag in flags { out.status(flag.name) }
            }
            if withCode {
                out.bulk("library_code")
                out.bulk(library.code)
            }
        }
    }

    private func restore(_ r: Request, _ out: inout ReplyWriter) {
        guard r.count <= 4 else { return out.subcommandSyntaxError(r, of: "FUNCTION") }
        var policy = FunctionLibraries.RestorePolicy.append
        if r.count == 4 {
            if equalsIgnoringCase(r.raw(3), "append") {
                policy = .append
            } else if equalsIgnoringCase(r.raw(3), "replace") {
                policy = .replace
            } else if equalsIgnoringCase(r.raw(3), "flush") {
                policy = .flush
            } else {
                return out.error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
            }
        }
        let codes: [[UInt8]]
        switch FunctionPayload.libraries(in: r[2]) {
        case .success(let found): codes = found
        case .failure(let error): return out.error(bytes: error.message)
        }
        if let error = databases.functions.restore(codes, policy: policy, engine: scripts, timeout: loadTimeout) {
            return out.error(bytes: error.message)
        }
        databases.fence.changes += 1
        out.ok()
    }
}

private let functionHelp = [
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
]
