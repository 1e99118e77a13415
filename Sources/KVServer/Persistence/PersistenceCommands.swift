// PersistenceCommands.swift: SAVE, BGSAVE [SCHEDULE] and LASTSAVE, with
// Redis 7.0's replies and errors. The work is Persistence.swift's.

let persistenceCommands: [Command] = [
    Command("save", arity: 1, keys: .none) { dispatcher, _, _, out in
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
        guard persistence.startBackgroundSave(dispatcher.databases, owner: dispatcher.owner) else {
            return out.error("ERR")
        }
        out.simple("Background saving started")
    },
    Command("lastsave", arity: 1, keys: .none) { dispatcher, _, _, out in
        out.integer(Int(dispatcher.persistence.lastSave))
    },
]

/// The answer to SAVE and BGSAVE on a server made without a directory
/// (kvd always has one: `--dir`, "." by default).
private let persistenceOff = "ERR snapshots are off: this server was started without a directory"
