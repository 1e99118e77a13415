// Info.swift: INFO: the sections about the server, which whoever runs the
// core supplies (Server: clients, loops, uptime), and those about the
// core's own state (latencystats, stats, keyspace), merged by section and
// chosen as Redis chooses them.

let infoCommands: [Command] = [
    Command("info", arity: -1, keys: .none) { dispatcher, _, r, out in
        dispatcher.info.reply(
            r, stats: dispatcher.stats, databases: dispatcher.databases, blockedClients: dispatcher.blocked.count,
            persistence: dispatcher.persistence.infoLines(dispatcher.databases), &out)
    }
]

/// INFO's sources. Core loop only, with the dispatcher.
struct Info {
    /// The sections that describe the server (not the keyspace), from
    /// whoever runs it.
    let serverSections: @Sendable () -> [(section: String, lines: [String])]

    /// INFO [section …]: the sections asked for, in Redis's text format.
    func reply(
        _ r: Request, stats: CommandStats, databases: Databases, blockedClients: Int, persistence: [String],
        _ out: inout ReplyWriter
    ) {
        let wanted = Set(r.dropFirst().map { String(decoding: lowercased($0), as: UTF8.self) })
        let everything =
            wanted.isEmpty || wanted.contains("all") || wanted.contains("everything") || wanted.contains("default")
        var sections = serverSections()
        sections.append((section: "Clients", lines: ["blocked_clients:\(blockedClients)"]))
        sections.append((section: "Persistence", lines: persistence))
        sections.append((section: "Latencystats", lines: stats.latencyStatsLines()))
        sections.append(
            (
                section: "Stats",
                lines: [
                    "total_commands_processed:\(stats.commandsProcessed)",
                    "expired_keys:\(databases.expiredKeys)",
                    "reclaimed_buffers:\(Reclaimer.reclaimed)",
                ]
            ))
        sections.append(
            (
                section: "Keyspace",
                lines: databases.enumerated().compactMap { index, db in
                    db.count == 0 ? nil : "db\(index):keys=\(db.count),expires=\(db.expiresCount),avg_ttl=0"
                }
            ))
        var merged: [(section: String, lines: [String])] = []
        for section in sections {
            if let index = merged.firstIndex(where: { $0.section == section.section }) {
                merged[index].lines += section.lines
            } else {
                merged.append(section)
            }
        }
        var text = ""
        // Redis leaves latencystats out of the default INFO, like its other
        // optional sections: asked for by name, or with ALL/EVERYTHING.
        let defaults = wanted.isEmpty || wanted.contains("default")
        for section in merged
        where (everything && !(defaults && section.section == "Latencystats"))
            || wanted.contains(section.section.lowercased())
        {
            if !text.isEmpty { text += "\r\n" }
            text += "# \(section.section)\r\n"
            for line in section.lines { text += line + "\r\n" }
        }
        out.verbatim(text)
    }
}
