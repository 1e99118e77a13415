// ClientPause.swift: CLIENT PAUSE and UNPAUSE. While a pause lasts, a
// client's command that it holds (every command, or with WRITE those Redis
// flags write or may-replicate, a script that may write, and an EXEC whose
// queue holds one of those) is not run: the batch stops before it, and
// the connection waits as for a blocked command (`Dispatcher.isParked`);
// when the pause ends (its deadline, one loop timer, or CLIENT UNPAUSE)
// each held client is resumed, in the order it was held, and its batch
// goes on from the held command. A command refused anyway (unknown, wrong
// arity) is answered at once. No key is deleted for its expiry while the
// pause lasts (it reads as gone), as in Redis. Core loop only, with the
// dispatcher.
import MainLoop

/// The pause in force, and the clients it holds.
struct ClientPause {
    /// When the pause ends (Unix milliseconds), and whether only writes wait.
    var until: Int64 = 0
    var writesOnly = true
    var active = false
    /// The held clients, first held first.
    var held: [Int] = []
    var timer: Scheduled?
}

extension Dispatcher {
    /// CLIENT PAUSE timeout [WRITE|ALL]: a longer or stricter pause than
    /// the one in force replaces it, as in Redis.
    func pauseClients(_ r: Request, _ out: inout ReplyWriter) {
        guard r.count == 3 || r.count == 4 else { return out.subcommandSyntaxError(r, of: "CLIENT") }
        guard let milliseconds = parseInteger(r.raw(2)) else {
            return out.error("ERR timeout is not an integer or out of range")
        }
        guard milliseconds >= 0 else { return out.error("ERR timeout is negative") }
        var writesOnly = false
        if r.count == 4 {
            if equalsIgnoringCase(r.raw(3), "write") {
                writesOnly = true
            } else if !equalsIgnoringCase(r.raw(3), "all") {
                return out.error("ERR CLIENT PAUSE mode must be WRITE or ALL")
            }
        }
        let now = unixMilliseconds()
        let (until, overflow) = now.addingReportingOverflow(Int64(milliseconds))
        let end = overflow ? Int64.max : until
        if pause.active {
            pause.writesOnly = pause.writesOnly && writesOnly
            pause.until = max(pause.until, end)
        } else {
            pause.active = true
            pause.writesOnly = writesOnly
            pause.until = end
        }
        databases.pauseExpiry(until: pause.until)
        pause.timer?.cancel()
        if let owner {
            let delay = Duration.milliseconds(max(pause.until - now, 0))
            pause.timer = try? owner.loop.schedule(after: delay) { owner.withValue { $0.endPauseIfDue() } }
        }
        out.ok()
    }

    /// CLIENT UNPAUSE, or the deadline: every held client goes on.
    func endPause() {
        pause.timer?.cancel()
        let held = pause.held
        pause = ClientPause()
        databases.pauseExpiry(until: 0)
        for id in held {
            sessions.all.first { $0.id == id }?.info.resume(Replies(sealed: [], last: [], byteCount: 0))
        }
    }

    private func endPauseIfDue() {
        if pause.active && unixMilliseconds() >= pause.until { endPause() }
    }

    /// True when the pause holds `request` of `session` (which is then held).
    func pauseHolds(_ request: Request, of session: ClientSession) -> Bool {
        guard unixMilliseconds() < pause.until else {
            endPause()
            return false
        }
        guard let command = Dispatcher.command(named: request.raw(0)), Dispatcher.isWellFormed(request, command)
        else { return false }
        if pause.writesOnly {
            if command.name == "exec" {
                var writes = false
                session.transaction?.queued.forEach { queued in
                    writes = mayWrite(queued)
                    return !writes
                }
                guard writes else { return false }
            } else {
                guard mayWrite(request) else { return false }
            }
        }
        pause.held.append(session.id)
        return true
    }

    /// Redis's `is_may_replicate_command`: a command it flags write or
    /// may-replicate; for EVAL and EVALSHA the script's own flags when it
    /// declares them (a `#!lua` line), as Redis reads them.
    private func mayWrite(_ request: Request) -> Bool {
        guard let command = Dispatcher.command(named: request.raw(0)), Dispatcher.isWellFormed(request, command)
        else { return false }
        switch command.name {
        case "eval":
            return !declaresNoWrites(Array(request.raw(1)))
        case "evalsha":
            let sha = String(decoding: lowercased(Array(request.raw(1))), as: UTF8.self)
            guard let script = scripts.cache[sha], script.hasShebang else { return true }
            return !script.noWrites
        case "fcall":
            // A function's own flags, as Redis reads them (an unknown one is held).
            guard let function = databases.functions.function(named: Array(request.raw(1))) else { return true }
            return !function.flags.contains(.noWrites)
        case "function":
            // The container has no flags; its subcommands do (LOAD, DELETE,
            // FLUSH and RESTORE write).
            guard request.count > 1 else { return false }
            return CommandDocs.entry(Array("function|".utf8) + Array(request.raw(1)))?.flags.contains("write") == true
        default:
            return mayReplicateCommands.contains(command.name)
                || CommandDocs.byName[command.name]?.flags.contains("write") == true
        }
    }
}

/// True when a script body's `#!lua` line declares `no-writes`.
private func declaresNoWrites(_ body: [UInt8]) -> Bool {
    guard body.starts(with: Array("#!".utf8)) else { return false }
    let line = body.prefix { $0 != 10 }
    return line.split(separator: 32).contains { option in
        option.starts(with: Array("flags=".utf8))
            && option.dropFirst(6).split(separator: UInt8(ascii: ",")).contains { Array($0) == Array("no-writes".utf8) }
    }
}
