// IntrospectionCommands.swift: COMMAND, the table describing itself: every
// command kvd has, with Redis 7.0.15's own entry for it (flags, ACL
// categories, key specs, subcommands, documentation: CommandDocs), so that
// clients and redis-cli's help see what they see on Redis.

let introspectionCommands: [Command] = [
    Command("command", arity: -1, keys: .none) { _, _, r, out in command(r, &out) }
]

/// kvd's commands that Redis's table describes, in table order.
private func describedRows() -> [(row: Command, entry: CommandDocEntry)] {
    Dispatcher.rows.compactMap { row in CommandDocs.byName[row.name].map { (row, $0) } }
}

/// The entry for a name, if kvd has the command (a subcommand: if kvd has its container).
private func describedEntry(_ name: [UInt8]) -> CommandDocEntry? {
    let container = Array(name.prefix { $0 != UInt8(ascii: "|") })
    guard Dispatcher.command(named: container) != nil else { return nil }
    return CommandDocs.entry(name)
}

/// Every command's COMMAND INFO entry (COMMAND, COMMAND INFO).
private func allInfo(_ out: inout ReplyWriter) {
    let rows = describedRows()
    out.arrayHeader(rows.count)
    for (_, entry) in rows { out.raw(entry.bytes(entry.info, out)) }
}

private func command(_ r: Request, _ out: inout ReplyWriter) {
    guard r.count > 1 else { return allInfo(&out) }
    let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
    switch sub {
    case "count":
        out.integer(describedRows().count)
    case "info":
        guard r.count > 2 else { return allInfo(&out) }
        out.arrayHeader(r.count - 2)
        for name in r.dropFirst(2) {
            if let entry = describedEntry(name) { out.raw(entry.bytes(entry.info, out)) } else { out.null() }
        }
    case "docs":
        let entries =
            r.count == 2 ? describedRows().map(\.entry) : r.dropFirst(2).compactMap { describedEntry($0) }
        out.mapHeader(entries.count)
        for entry in entries {
            out.bulk(entry.name)
            out.raw(entry.bytes(entry.docs, out))
        }
    case "list":
        list(r, &out)
    case "getkeys", "getkeysandflags":
        getKeys(r, withFlags: sub == "getkeysandflags", &out)
    case "help":
        out.help(
            "COMMAND",
            [
                "(no subcommand)", "    Return details about all Redis commands.",
                "COUNT", "    Return the total number of commands in this Redis server.",
                "LIST", "    Return a list of all commands in this Redis server.",
                "INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
                "    If no command names are given, documentation details for all",
                "    commands are returned.",
                "DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
                "    If no command names are given, documentation details for all",
                "    commands are returned.",
                "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
                "GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full Redis command.",
            ])
    default:
        out.unknownSubcommand(r, of: "COMMAND")
    }
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]:
/// full names, subcommands included.
private func list(_ r: Request, _ out: inout ReplyWriter) {
    var filter: (kind: String, argument: [UInt8])?
    var index = 2
    while index < r.count {
        guard equalsIgnoringCase(r.raw(index), "filterby"), r.count - 1 - index == 2 else {
            return out.error("ERR syntax error")
        }
        let kind = String(decoding: lowercased(r[index + 1]), as: UTF8.self)
        guard ["module", "aclcat", "pattern"].contains(kind) else { return out.error("ERR syntax error") }
        filter = (kind, r[index + 2])
        index += 3
    }
    var names: [String] = []
    func visit(_ entry: CommandDocEntry) {
        let kept: Bool
        switch filter?.kind {
        case nil: kept = true
        case "module": kept = false  // kvd has no modules
        case "aclcat": kept = entry.categories.contains(String(decoding: lowercased(filter!.argument), as: UTF8.self))
        default: kept = globMatch(lowercased(filter!.argument), Array(entry.name.utf8))
        }
        if kept { names.append(entry.name) }
        entry.subcommands.forEach(visit)
    }
    describedRows().forEach { visit($0.entry) }
    out.arrayHeader(names.count)
    for name in names { out.bulk(name) }
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS: the keys of a full command, found
/// with its key specs as Redis does.
private func getKeys(_ r: Request, withFlags: Bool, _ out: inout ReplyWriter) {
    let arguments = Array(r.dropFirst(2))
    guard var entry = describedEntry(arguments[0]), !arguments[0].contains(UInt8(ascii: "|")) else {
        return out.error("ERR Invalid command specified")
    }
    if !entry.subcommands.isEmpty, arguments.count > 1 {
        let full = entry.name + "|" + String(decoding: lowercased(arguments[1]), as: UTF8.self)
        guard let sub = entry.subcommands.first(where: { $0.name == full }) else {
            return out.error("ERR Invalid command specified")
        }
        entry = sub
    }
    guard !entry.keySpecs.isEmpty else { return out.error("ERR The command has no key arguments") }
    guard entry.arity > 0 ? arguments.count == entry.arity : arguments.count >= -entry.arity else {
        return out.error("ERR Invalid number of arguments specified for command")
    }
    var keys: [(position: Int, flags: [String])] = []
    let sorts = entry.name == "sort" || entry.name == "sort_ro"
    if sorts {
        // Their specs cannot find STORE's key (Redis's are "incomplete"):
        // Redis asks sortGetKeys, which skips LIMIT's, GET's and BY's
        // arguments and takes the last STORE's (SORT_RO has none).
        keys = [(1, ["RO", "access"])]
        var index = 2
        var store: Int?
        while index < arguments.count {
            let word = arguments[index]
            if equalsIgnoringCase(word, "limit") {
                index += 2
            } else if equalsIgnoringCase(word, "get") || equalsIgnoringCase(word, "by") {
                index += 1
            } else if entry.name == "sort" && equalsIgnoringCase(word, "store") && index + 1 < arguments.count {
                store = index + 1
            }
            index += 1
        }
        if let store { keys.append((store, ["OW", "update"])) }
    }
    for spec in entry.keySpecs where !sorts {
        guard let positions = spec.positions(in: arguments) else {
            keys = []
            break
        }
        var flags = spec.flags
        if flags.contains("variable_flags") {
            // Flags that depend on the arguments: SET's key is only
            // overwritten unless GET reads it first (Redis's setGetKeys).
            guard entry.name == "set" else {
                return out.error("ERR kvd does not support GETKEYSANDFLAGS for '\(entry.name)'")
            }
            let reads = arguments.dropFirst(3).contains { equalsIgnoringCase($0, "get") }
            flags = reads ? ["RW", "access", "update"] : ["OW", "update"]
        }
        keys += positions.map { ($0, flags) }
    }
    guard !keys.isEmpty || entry.flags.contains("no_mandatory_keys") else {
        return out.error("ERR Invalid arguments specified for command")
    }
    out.arrayHeader(keys.count)
    for key in keys {
        if withFlags {
            out.arrayHeader(2)
            out.bulk(arguments[key.position])
            out.setHeader(key.flags.count)
            for flag in key.flags { out.status(flag) }
        } else {
            out.bulk(arguments[key.position])
        }
    }
}
