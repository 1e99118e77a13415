// ConfigCommand.swift: CONFIG GET, answered from constants: the settings
// that redis-benchmark and redis-cli ask for. CONFIG SET, and settings
// that change at run time, land here.

let configCommands: [Command] = [
    Command("config", arity: -2, keys: .none, config)
]

/// The settings CONFIG GET answers (what redis-benchmark and redis-cli ask for).
private let configParameters: [(String, String)] = [
    ("appendonly", "no"), ("databases", String(Databases.selectable)), ("save", ""), ("maxmemory", "0"),
]

private func config(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard equalsIgnoringCase(r[1], "get") else {
        return out.error(bytes: Array("ERR unknown subcommand '".utf8) + r[1] + Array("'. Try CONFIG HELP.".utf8))
    }
    guard r.count >= 3 else { return out.error("ERR wrong number of arguments for 'config|get' command") }
    var found: [(String, String)] = []
    for pattern in r.dropFirst(2) {
        for (name, value) in configParameters
        where globMatch(lowercased(pattern), Array(name.utf8)) && !found.contains(where: { $0.0 == name }) {
            found.append((name, value))
        }
    }
    out.mapHeader(found.count)
    for (name, value) in found {
        out.bulk(name)
        out.bulk(value)
    }
}
