// HelpReply.swift: `X HELP` for a container command, in Redis's shape: a
// heading naming the command, its subcommands' lines, then HELP itself;
// and the replies to a subcommand it does not run.

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
    /// Redis's reply to `CONTAINER sub ...` when the container has no such
    /// subcommand (one Redis's table has with the wrong count was refused
    /// before, by the dispatcher).
    mutating func unknownSubcommand(_ r: Request, of container: String) {
        error(
            bytes: Array("ERR unknown subcommand '".utf8) + ReplyWriter.quoted(r.raw(1).prefix(128))
                + Array("'. Try \(container) HELP.".utf8))
    }

    /// Redis's addReplySubcommandSyntaxError: a subcommand in Redis's
    /// table whose handler refuses its count or shape (CLIENT PAUSE 1 WRITE x).
    mutating func subcommandSyntaxError(_ r: Request, of container: String) {
        error(
            bytes: Array("ERR unknown subcommand or wrong number of arguments for '".utf8)
                + ReplyWriter.quoted(r.raw(1).prefix(128))
                + Array("'. Try \(container) HELP.".utf8))
    }
}
