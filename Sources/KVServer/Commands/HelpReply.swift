// HelpReply.swift: `X HELP` for a container command, in Redis's shape: a
// heading naming the command, its subcommands' lines, then HELP itself.

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
