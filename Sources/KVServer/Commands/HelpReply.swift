// HelpReply.swift: `X HELP` for a container command, in Redis's shape: a
// heading naming the command, its subcommands' lines, then HELP itself;
// and the reply to a subcommand it does not run.

extension ReplyWriter {
    /// Redis's addReplyHelp: `lines` between the heading and HELP's own
    /// lines, each a status reply.
    mutating func help(_ command: String, _ lines: [String]) {
        arrayHeader(lines.count + 3)
        status("\(command) <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
        for line in lines { status(line) }
        status("HELP")
        status("    Prints this help.")
    }
}

extension ReplyWriter {
    /// The reply to `CONTAINER sub ...` that the container does not run:
    /// Redis's arity error when Redis's table has that subcommand and the
    /// count is wrong for it (Redis checks a subcommand's arity before it
    /// runs: `CONFIG HELP x`), else "unknown subcommand".
    mutating func unknownSubcommand(_ r: Request, of container: String) {
        let name = container.lowercased() + "|" + String(decoding: lowercased(r[1]), as: UTF8.self)
        if let entry = CommandDocs.entry(Array(name.utf8)),
            !(entry.arity > 0 ? r.count == entry.arity : r.count >= -entry.arity)
        {
            return error("ERR wrong number of arguments for '\(name)' command")
        }
        error(
            bytes: Array("ERR unknown subcommand '".utf8) + r[1].prefix(128) + Array("'. Try \(container) HELP.".utf8))
    }
}
