// ClientPause.swift: CLIENT PAUSE and UNPAUSE. While a pause lasts, a
// client's command that it holds (every command, or with WRITE those Redis
// flags write or may-replicate) is not run: the batch stops before it, and
// the connection waits as for a blocked command (`Dispatcher.isParked`);
// when the pause ends (its deadline, one loop timer, or CLIENT UNPAUSE)
// each held client is resumed, in the order it was held, and its batch
// goes on from the held command. Core loop only, with the dispatcher.
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
        guard r.count == 3 || r.count == 4 else {
            return out.error("ERR wrong number of arguments for 'client|pause' command")
        }
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
        if pause.writesOnly {
            let name = String(decoding: lowercased(Array(request.raw(0))), as: UTF8.self)
            guard let flags = CommandDocs.byName[name]?.flags,
                flags.contains("write") || flags.contains("may_replicate")
            else { return false }
        }
        pause.held.append(session.id)
        return true
    }
}
