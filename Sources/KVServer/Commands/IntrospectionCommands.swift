// IntrospectionCommands.swift: COMMAND, the table describing itself (COUNT,
// INFO, DOCS), in Redis 2.8's six fields per command, which every client
// reads.

let introspectionCommands: [Command] = [
    Command("command", arity: -1, keys: .none) { _, _, r, out in command(r, &out) }
]

private func command(_ r: Request, _ out: inout ReplyWriter) {
    func describe(_ command: Command) {
        // name, arity, flags, first key, last key, step (Redis 2.8's six fields)
        out.arrayHeader(6)
        out.bulk(command.name)
        out.integer(command.arity)
        out.setHeader(0)
        let keys = command.keys.triple
        out.integer(keys.first)
        out.integer(keys.last)
        out.integer(keys.step)
    }
    let sorted = Dispatcher.rows.sorted { $0.name < $1.name }
    guard r.count > 1 else {
        out.arrayHeader(sorted.count)
        sorted.forEach(describe)
        return
    }
    if equalsIgnoringCase(r[1], "count") && r.count == 2 {
        out.integer(sorted.count)
    } else if equalsIgnoringCase(r[1], "docs") {
        out.arrayHeader(0)  // no documentation: clients fall back to their own
    } else if equalsIgnoringCase(r[1], "info") {
        out.arrayHeader(r.count - 2)
        for name in r.dropFirst(2) {
            if let command = Dispatcher.command(named: name) { describe(command) } else { out.null() }
        }
    } else {
        out.error(bytes: Array("ERR unknown subcommand '".utf8) + r[1] + Array("'. Try COMMAND HELP.".utf8))
    }
}
