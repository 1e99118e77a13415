// PersistenceCommands.swift: SAVE, BGSAVE [SCHEDULE], LASTSAVE and
// SHUTDOWN, with Redis 7.0's replies and errors. The work is
// Persistence.swift's; SHUTDOWN saves (unless NOSAVE, or with no save
// points and no SAVE), then asks whoever runs the server to stop it as
// SIGTERM does, and the client gets no reply: its connection closes, as
// with Redis.

let persistenceCommands: [Command] = [
    Command("save", arity: 1, keys: .none, flags: .noMulti) { dispatcher, _, _, out in
        let persistence = dispatcher.persistence
        guard persistence.file != nil else { return out.error(persistenceOff) }
        guard !persistence.inProgress else { return out.error("ERR Background save already in progress") }
        if persistence.saveNow(dispatcher.databases) { out.ok() } else { out.error("ERR") }
    },
    Command("bgsave", arity: -1, keys: .none) { dispatcher, _, r, out in
        let persistence = dispatcher.persistence
        var schedule = false
        if r.count > 1 {
            guard r.count == 2, lowercased(r[1]) == Array("schedule".utf8) else { return out.error("ERR syntax error") }
            schedule = true
        }
        guard persistence.file != nil else { return out.error(persistenceOff) }
        if persistence.inProgress {
            guard schedule else { return out.error("ERR Background save already in progress") }
            persistence.schedule()
            return out.simple("Background saving scheduled")
        }
        if dispatcher.appendOnly.rewriteStarted != nil {
            guard schedule else {
                return out.error(
                    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."
                )
            }
            persistence.schedule()
            return out.simple("Background saving scheduled")
        }
        guard persistence.startBackgroundSave(dispatcher.databases, owner: dispatcher.owner) else {
            return out.error("ERR")
        }
        out.simple("Background saving started")
    },
    Command("bgrewriteaof", arity: 1, keys: .none) { dispatcher, _, _, out in
        let aof = dispatcher.appendOnly
        guard aof.isOn else { return out.error(appendOnlyOff) }
        guard aof.rewriteStarted == nil else {
            return out.error("ERR Background append only file rewriting already in progress")
        }
        // One background job at a time, as Redis: after the BGSAVE; and
        // inside EXEC after it (its effects are one unit in the old file).
        if dispatcher.persistence.inProgress || dispatcher.inExec {
            aof.rewriteScheduled = true
            return out.simple("Background append only file rewriting scheduled")
        }
        if let error = dispatcher.startAppendOnlyRewrite() { return out.error(error) }
        out.simple("Background append only file rewriting started")
    },
    Command("lastsave", arity: 1, keys: .none) { dispatcher, _, _, out in
        out.integer(Int(dispatcher.persistence.lastSave))
    },
    Command("shutdown", arity: -1, keys: .none, flags: .noMulti) { dispatcher, _, r, out in
        var save: Bool?
        var force = false
        var abort = false
        var syntaxError = false
        for index in 1..<r.count {
            switch String(decoding: lowercased(r[index]), as: UTF8.self) {
            case "nosave":
                syntaxError = syntaxError || save == true
                save = false
            case "save":
                syntaxError = syntaxError || save == false
                save = true
            case "now": break  // no replicas to wait for
            case "force": force = true
            case "abort": abort = true
            default: syntaxError = true
            }
        }
        guard !syntaxError, !abort || r.count == 2 else { return out.error("ERR syntax error") }
        // kvd's stop, once begun, runs to its end.
        guard !abort else { return out.error("ERR No shutdown in progress.") }
        let persistence = dispatcher.persistence
        guard let stop = dispatcher.shutdownRequested else { return out.error(shutdownFailed) }
        if persistence.file != nil && (save ?? !persistence.savePoints.isEmpty) {
            guard persistence.saveNow(dispatcher.databases) || force else { return out.error(shutdownFailed) }
        }
        persistence.savedForExit = true  // the stop that follows saves nothing more
        stop()
    },
]

/// Redis's answer when SHUTDOWN could not save (without FORCE).
private let shutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs."

/// The answer to SAVE and BGSAVE on a server made without a directory
/// (kvd always has one: `--dir`, "." by default).
private let persistenceOff = "ERR snapshots are off: this server was started without a directory"

/// BGREWRITEAOF with the append-only file off (Redis would write a new
/// base anyway; kvd rewrites only a live AOF).
private let appendOnlyOff = "ERR BGREWRITEAOF needs the append-only file on in kvd (appendonly yes)"
