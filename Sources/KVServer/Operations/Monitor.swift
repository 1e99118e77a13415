// Monitor.swift: MONITOR, as Redis 7.0 does it: after each command runs,
// every monitoring client gets one line, `+<unix seconds>.<micro> [<db>
// <ip:port>] "arg" ...` (`[<db> lua]` for a script's commands), with
// Redis's quoting of each argument and its exceptions: administrative
// commands (CONFIG, CLIENT KILL/LIST, SLOWLOG, DEBUG, ...) are never shown,
// AUTH's and HELLO's passwords show as "(redacted)", and EVAL shows before
// the commands its script runs. Commands refused before they ran (unknown,
// wrong arity, NOAUTH) and commands queued by MULTI show nothing; EXEC
// shows after the commands it ran. The lines leave through the push
// outbox like pub/sub messages, on every topology.
import Glibc

let monitorCommands: [Command] = [
    Command("monitor", arity: 1, keys: .none) { dispatcher, session, _, out in
        // A transaction being executed expects one reply per command.
        guard !dispatcher.inExec else { return out.error("ERR MONITOR isn't allowed for DENY BLOCKING client") }
        guard !session.monitoring else { return }  // Redis ignores it, with no reply
        dispatcher.pubsub.startMonitoring(session)
        out.ok()
    }
]

/// When a command is shown to the monitors.
enum MonitorRule {
    /// After it ran.
    case after
    /// Never (administrative).
    case never
    /// Before it runs (EVAL and friends: the script's commands follow it).
    case before
    /// Never for these subcommands, after it ran for the others.
    case neverFor(Set<String>)

    /// Each command's rule, by `Command.id`.
    static let byCommand: [MonitorRule] = Dispatcher.rows.map { rule(for: $0.name) }

    static func rule(for name: String) -> MonitorRule {
        switch name {
        case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro": .before
        case "config": .neverFor(["get", "set", "resetstat", "rewrite"])
        case "client": .neverFor(["kill", "list", "no-evict", "pause", "unblock", "unpause"])
        case "slowlog": .neverFor(["get", "len", "reset"])
        case "latency": .neverFor(["doctor", "graph", "histogram", "history", "latest", "reset"])
        case "acl": .neverFor(["deluser", "dryrun", "getuser", "list", "load", "log", "save", "setuser", "users"])
        case "debug", "monitor", "save", "bgsave", "bgrewriteaof", "lastsave", "role", "shutdown", "replicaof",
            "slaveof", "failover", "sync", "psync", "replconf", "pfdebug", "pfselftest", "module", "cluster":
            .never
        default: .after
        }
    }

    /// True when `request` (of a command with this rule) is shown at `moment`.
    func shows(_ request: Request, before moment: Bool) -> Bool {
        switch self {
        case .after: !moment
        case .never: false
        case .before: moment
        case .neverFor(let hidden):
            !moment && (request.count < 2 || !hidden.contains(String(decoding: lowercased(request[1]), as: UTF8.self)))
        }
    }
}

extension Dispatcher {
    /// True when a monitoring client may not run `request` (Redis counts
    /// it as a replica, which may not touch the keyspace): Redis 7.0's
    /// read, write and may-replicate commands and subcommands.
    static func touchesKeyspace(_ command: Command, _ request: Request) -> Bool {
        let subcommand = request.count > 1 ? String(decoding: lowercased(request[1]), as: UTF8.self) : ""
        switch command.name {
        case "watch": return false
        case "object": return true
        case "memory": return subcommand == "usage"
        case "function": return ["delete", "flush", "load", "restore"].contains(subcommand)
        default: return command.keys != .none || keyspaceCommandsWithoutKeys.contains(command.name)
        }
    }

    private static let keyspaceCommandsWithoutKeys: Set<String> = [
        "blmpop", "bzmpop", "swapdb", "flushdb", "flushall", "sintercard", "scan", "randomkey", "lmpop", "zmpop",
        "zunion", "zunionstore", "zinter", "zinterstore", "zintercard", "zdiff", "zdiffstore", "keys", "dbsize",
        "publish", "eval", "evalsha", "eval_ro", "evalsha_ro", "pfdebug",
    ]

    /// Pushes `request`'s line to every monitor, if its command is shown
    /// at this moment (`before`: the command has not run yet).
    func feedMonitors(_ request: Request, command: Int, session: ClientSession, before: Bool) {
        guard MonitorRule.byCommand[command].shows(request, before: before) else { return }
        pubsub.feedMonitors(monitorLine(request, session: session))
    }
}

/// One MONITOR line for `request`, run by `session`, now.
func monitorLine(_ request: Request, session: ClientSession) -> [UInt8] {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var line: [UInt8] = [UInt8(ascii: "+")]
    appendDecimal(now.tv_sec, to: &line)
    let micros = now.tv_nsec / 1000
    line.append(UInt8(ascii: "."))
    for divisor in [100_000, 10_000, 1000, 100, 10, 1] { line.append(UInt8(48 + (micros / divisor) % 10)) }
    line.append(contentsOf: Array(" [".utf8))
    appendDecimal(session.database, to: &line)
    line.append(UInt8(ascii: " "))
    line.append(contentsOf: Array(session.id == 0 ? "lua".utf8 : session.info.address.utf8))
    line.append(contentsOf: Array("] ".utf8))
    let redacted = redactedArguments(request)
    for index in request.indices {
        if index > 0 { line.append(UInt8(ascii: " ")) }
        if redacted.contains(index) {
            line.append(contentsOf: Array("\"(redacted)\"".utf8))
        } else {
            appendQuoted(request.raw(index), to: &line)
        }
    }
    line.append(contentsOf: [13, 10])
    return line
}

/// The arguments Redis hides from MONITOR (and SLOWLOG): AUTH's user and
/// password, HELLO's after AUTH.
private func redactedArguments(_ request: Request) -> Set<Int> {
    if equalsIgnoringCase(request.raw(0), "auth") {
        return request.count == 3 ? [1, 2] : [1]
    }
    guard equalsIgnoringCase(request.raw(0), "hello") else { return [] }
    var index = 2
    while index < request.count {
        if equalsIgnoringCase(request.raw(index), "auth") && request.count - 1 - index >= 2 {
            return [index + 1, index + 2]
        }
        index += equalsIgnoringCase(request.raw(index), "setname") ? 2 : 1
    }
    return []
}

/// Redis's sdscatrepr: in double quotes, `\` and `"` escaped, the C escapes
/// for newline, return, tab, bell and backspace, other unprintable bytes as
/// `\xHH`.
func appendQuoted(_ bytes: UnsafeRawBufferPointer, to line: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    line.append(UInt8(ascii: "\""))
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "\\"), UInt8(ascii: "\""): line += [UInt8(ascii: "\\"), byte]
        case 10: line += Array("\\n".utf8)
        case 13: line += Array("\\r".utf8)
        case 9: line += Array("\\t".utf8)
        case 7: line += Array("\\a".utf8)
        case 8: line += Array("\\b".utf8)
        case 32...126: line.append(byte)
        default: line += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
        }
    }
    line.append(UInt8(ascii: "\""))
}
