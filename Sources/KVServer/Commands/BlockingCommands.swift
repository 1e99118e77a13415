// BlockingCommands.swift: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP,
// BZPOPMIN, BZPOPMAX and BZMPOP, and
// the dispatcher's side of parking (Sessions/BlockedClients.swift says
// what ends a wait). A blocking command first does what its non-blocking
// form would; when every key it names is absent it parks the client and
// answers nothing: the dispatcher stops the client's batch there and hands
// the requests after it back to the connection, which waits, parked, for
// the reply (Connection's `.parked`) and submits nothing meanwhile. Inside
// MULTI/EXEC nothing blocks: an empty wait answers as a timeout at once,
// as in Redis.
//
// When a key is ready, each waiting client's command runs again, as it
// was sent; the reply (or, when the list is gone again, nothing: the
// client stays parked) goes to the connection through its session's
// `resume`. Argument errors are answered before anything parks, in Redis's
// order: numkeys, LEFT/RIGHT and COUNT, then the timeout.
import MainLoop

let blockingCommands: [Command] = [
    Command("blpop", arity: -3, keys: .all) { $0.blockingPop($1, $2, .head, &$3) },
    Command("brpop", arity: -3, keys: .all) { $0.blockingPop($1, $2, .tail, &$3) },
    Command("blmove", arity: 6, keys: .all) { dispatcher, session, r, out in
        guard let from = ListEnd(r.raw(3)), let to = ListEnd(r.raw(4)) else { return out.error("ERR syntax error") }
        dispatcher.blockingMove(session, r, from, to, timeoutAt: 5, &out)
    },
    Command("brpoplpush", arity: 4, keys: .all) { dispatcher, session, r, out in
        dispatcher.blockingMove(session, r, .tail, .head, timeoutAt: 3, &out)
    },
    Command("blmpop", arity: -5, keys: .none) { dispatcher, session, r, out in
        guard let arguments = MultiPopArguments(r, keysAt: 2, &out) else { return }
        guard let deadline = dispatcher.blockingDeadline(r.raw(1), &out) else { return }
        let ks = dispatcher.databases[session.database]
        for index in arguments.keys {
            guard let found = ks.lookupList(r.raw(index), &out) else { return }
            if found != nil {
                ks.propagate(plainPop(arguments.end == .head ? "LPOP" : "RPOP", r[index], arguments.count))
                return popFor(ks, r.raw(index), arguments.end, count: arguments.count, withKey: true, &out)
            }
        }
        dispatcher.block(session, r, keys: arguments.keys.map { r[$0] }, until: deadline, &out)
    },
    Command("bzpopmin", arity: -3, keys: .all) { $0.blockingPopScores($1, $2, max: false, &$3) },
    Command("bzpopmax", arity: -3, keys: .all) { $0.blockingPopScores($1, $2, max: true, &$3) },
    Command("bzmpop", arity: -5, keys: .none) { dispatcher, session, r, out in
        guard let arguments = MultiPopArguments(r, keysAt: 2, ends: ("min", "max"), &out) else { return }
        guard let deadline = dispatcher.blockingDeadline(r.raw(1), &out) else { return }
        let ks = dispatcher.databases[session.database]
        for index in arguments.keys {
            guard let found = ks.lookupSortedSet(r.raw(index), &out) else { return }
            if found != nil {
                ks.propagate(plainPop(arguments.end == .tail ? "ZPOPMAX" : "ZPOPMIN", r[index], arguments.count))
                return popScores(
                    ks, r.raw(index), max: arguments.end == .tail, count: arguments.count, shape: .keyAndPairs, &out)
            }
        }
        dispatcher.block(
            session, r, for: .sortedSet, keys: arguments.keys.map { r[$0] }, until: deadline, &out)
    },
]

/// A blocking multi-pop's effect: the plain pop of `count` from `key`.
private func plainPop(_ name: String, _ key: [UInt8], _ count: Int) -> [[UInt8]] {
    [Array(name.utf8), key, Array(String(count).utf8)]
}

extension ListEnd {
    /// LMOVE's word for this end.
    fileprivate var word: [UInt8] { Array((self == .head ? "LEFT" : "RIGHT").utf8) }
}

extension Dispatcher {
    /// BLPOP and BRPOP: key [key ...] timeout.
    fileprivate func blockingPop(_ session: ClientSession, _ r: Request, _ end: ListEnd, _ out: inout ReplyWriter) {
        guard let deadline = blockingDeadline(r.raw(r.count - 1), &out) else { return }
        let ks = databases[session.database]
        for index in 1..<(r.count - 1) {
            guard let found = ks.lookupList(r.raw(index), &out) else { return }
            guard found != nil else { continue }
            out.arrayHeader(2)
            out.bulk(r.raw(index))
            ks.propagate([Array((end == .head ? "LPOP" : "RPOP").utf8), r[index]])
            return popFor(ks, r.raw(index), end, count: nil, withKey: false, &out)
        }
        block(session, r, keys: (1..<(r.count - 1)).map { r[$0] }, until: deadline, &out)
    }

    /// BZPOPMIN and BZPOPMAX: key [key ...] timeout.
    fileprivate func blockingPopScores(_ session: ClientSession, _ r: Request, max: Bool, _ out: inout ReplyWriter) {
        guard let deadline = blockingDeadline(r.raw(r.count - 1), &out) else { return }
        let ks = databases[session.database]
        for index in 1..<(r.count - 1) {
            guard let found = ks.lookupSortedSet(r.raw(index), &out) else { return }
            guard found != nil else { continue }
            ks.propagate([Array((max ? "ZPOPMAX" : "ZPOPMIN").utf8), r[index]])
            return popScores(ks, r.raw(index), max: max, count: 1, shape: .keyAndFlat, &out)
        }
        block(session, r, for: .sortedSet, keys: (1..<(r.count - 1)).map { r[$0] }, until: deadline, &out)
    }

    /// BLMOVE and BRPOPLPUSH: LMOVE when the source holds a list.
    fileprivate func blockingMove(
        _ session: ClientSession, _ r: Request, _ from: ListEnd, _ to: ListEnd, timeoutAt index: Int,
        _ out: inout ReplyWriter
    ) {
        guard let deadline = blockingDeadline(r.raw(index), &out) else { return }
        let ks = databases[session.database]
        guard let found = ks.lookupList(r.raw(1), &out) else { return }
        if found != nil {
            // Logged as the LMOVE it is once the source holds a list.
            ks.propagate([Array("LMOVE".utf8), r[1], r[2], from.word, to.word])
            return move(ks, r.raw(1), r.raw(2), from, to, &out)
        }
        guard !inExec else { return out.null() }
        block(session, r, keys: [r[1]], until: deadline, &out)
    }

    /// Redis's getTimeoutFromObjectOrReply in seconds: the deadline in Unix
    /// milliseconds, `.some(nil)` for 0 (forever); nil after answering an error.
    func blockingDeadline(_ bytes: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> Int64?? {
        guard let seconds = parseLongDouble(Array(bytes)) else {
            out.error("ERR timeout is not a float or out of range")
            return nil
        }
        // Redis converts with a C cast, which gives LLONG_MIN for what does
        // not fit (inf included) on x86-64: a timeout too large is "negative".
        let milliseconds = (seconds * 1000).rounded(.up)
        let rounded = Int64(exactly: milliseconds) ?? Int64.min
        guard rounded >= 0 else {
            out.error("ERR timeout is negative")
            return nil
        }
        guard rounded > 0 else { return .some(nil) }
        let now = databases.clock.now
        guard rounded <= Int64.max - now else {
            out.error("ERR timeout is out of range")
            return nil
        }
        return rounded + now
    }

    /// Nothing to pop: parks the client on `keys` (inside EXEC, answers a
    /// timeout at once instead).
    fileprivate func block(
        _ session: ClientSession, _ r: Request, for awaited: BlockedClients.Awaited = .list, keys: [[UInt8]],
        until deadline: Int64?, _ out: inout ReplyWriter
    ) {
        guard !inExec else { return out.nullArray() }
        blocked.park(session, for: awaited, request: r, keys: keys, deadline: deadline, in: databases)
        armBlockingTimer()
    }

    /// The blocking commands whose pops Redis does not count as changes
    /// when it serves a client parked on them.
    static let servedUncounted: Set<String> = ["blpop", "brpop", "blmove", "brpoplpush"]

    /// Serves the clients waiting on the keys that became ready, key by
    /// key, first parked first; a command served may make more keys ready
    /// (BLMOVE's destination), which are served in turn.
    func serveReadyKeys() {
        var served = false
        repeat {
            served = false
            for database in databases.indices where !databases[database].readyKeys.isEmpty {
                for key in databases[database].takeReadyKeys() {
                    for client in databases[database].clients(waitingOn: key) {
                        // Served while the key holds what the client waits for
                        // (a client waiting for another type keeps waiting).
                        let held = databases[database].lookup(key, now: databases.clock.now, use: .uncounted)?
                            .collection
                        guard let held else { break }
                        switch (held, blocked[client]?.awaited) {
                        case (.list, .list), (.sortedSet, .sortedSet):
                            if serve(client) { served = true }
                        default:
                            continue
                        }
                    }
                }
            }
        } while served && databases.contains { !$0.readyKeys.isEmpty }
        armBlockingTimer()
    }

    /// Runs the parked command of `client` again; true when it answered
    /// (and the client is unparked), false when it found nothing again.
    private func serve(_ client: Int) -> Bool {
        guard let parked = blocked[client], let command = Dispatcher.command(named: parked.request.firstName),
            case .session(let handler) = command.handler
        else { return false }
        var out = ReplyWriter()
        out.resp3 = parked.session.resp3
        blocked.serving = client
        blocked.stillWaiting = false
        databases.reads.commandReads = false  // a blocking command writes
        let mark = databases.fence.changes
        let start = monotonicNanoseconds()
        parked.request.forEach { request in
            handler(self, parked.session, request, &out)
            let took = monotonicNanoseconds() - start
            // Logged and counted as Redis does once a client is served:
            // the command as the client sent it, for the time it ran.
            if !blocked.stillWaiting {
                stats.record(command.id, request, took: took, failed: out.errorCount > 0, by: parked.session)
                stats.takeErrors(&out)
            }
            return true
        }
        blocked.serving = nil
        guard !blocked.stillWaiting else { return false }
        // Redis's blocked.c pops for a BLPOP, BRPOP, BLMOVE or BRPOPLPUSH
        // it serves without counting a change (it counts BLMPOP's and the
        // sorted sets' pops).
        if Dispatcher.servedUncounted.contains(command.name) { databases.fence.changes = mark }
        release(client) { _ in }
        // The pop reaches the append-only file before its reply leaves.
        appendOnly.flush(databases.feed)
        parked.session.info.resume(out.finish())
        return true
    }

    /// Ends the wait of `client` with `reply`'s answer; false when it was
    /// not parked.
    @discardableResult
    func release(_ client: Int, answering reply: (inout ReplyWriter) -> Void) -> Bool {
        guard let parked = blocked.unpark(client, in: databases) else { return false }
        var out = ReplyWriter()
        out.resp3 = parked.session.resp3
        reply(&out)
        if out.byteCount > 0 { parked.session.info.resume(out.finish()) }
        return true
    }

    /// CLIENT UNBLOCK: answers the parked client as a timeout, or with
    /// Redis's UNBLOCKED error; false when it was not parked.
    func unblock(_ client: Int, withError: Bool) -> Bool {
        defer { armBlockingTimer() }
        return release(client) { out in
            if withError { out.error("UNBLOCKED client unblocked via CLIENT UNBLOCK") } else { out.nullArray() }
        }
    }

    /// Arms the timer for the earliest deadline (see BlockedClients).
    func armBlockingTimer() {
        let owner = self.owner
        blocked.armTimer(now: unixMilliseconds(), on: owner?.loop) {
            owner?.withValue { $0.blockingTimerFired() }
        }
    }

    /// The timer fired: every client past its deadline is answered as a
    /// timeout (a null array, as Redis answers every list wait).
    private func blockingTimerFired() {
        blocked.timerFired()
        for client in blocked.expired(now: unixMilliseconds()) {
            release(client) { $0.nullArray() }
        }
        armBlockingTimer()
    }
}

extension RequestBatch {
    /// The first request's name (a parked command's).
    var firstName: [UInt8] {
        var name: [UInt8] = []
        forEach { request in
            name = request[0]
            return false
        }
        return name
    }
}
