// SessionCommands.swift: the commands that act on the connection's session
// or on more than one database: HELLO, AUTH, CLIENT, SELECT, SWAPDB, MOVE,
// COPY, FLUSHDB, FLUSHALL, RESET, QUIT, FUNCTION FLUSH and FUNCTION KILL. Wording and reply
// shapes are Redis 7.0's.
import Glibc

let sessionCommands: [Command] = [
    Command("hello", arity: -1, keys: .none, flags: .noAuth) { $0.hello($1, $2, &$3) },
    Command("auth", arity: -2, keys: .none, flags: .noAuth) { $0.auth($1, $2, &$3) },
    Command("client", arity: -2, keys: .none) { $0.client($1, $2, &$3) },
    Command("select", arity: 2, keys: .none) { dispatcher, session, r, out in
        guard let index = parseDatabaseIndex(r.raw(1), &out) else { return }
        session.database = index
        out.ok()
    },
    Command("swapdb", arity: 3, keys: .none) { dispatcher, _, r, out in
        // Both read as C ints before either is checked against the
        // databases, as Redis's swapdbCommand does.
        let int32 = Int(Int32.min)...Int(Int32.max)
        guard let a = parseInteger(r.raw(1), in: int32, message: "invalid first DB index", &out),
            let b = parseInteger(r.raw(2), in: int32, message: "invalid second DB index", &out)
        else { return }
        guard (0..<Databases.selectable).contains(a), (0..<Databases.selectable).contains(b) else {
            return out.error("ERR DB index is out of range")
        }
        if a != b {
            dispatcher.databases[a].swapContents(with: dispatcher.databases[b])
            dispatcher.databases[a].signalEveryBlockedKey()
            dispatcher.databases[b].signalEveryBlockedKey()
        } else {
            dispatcher.databases.fence.changes += 1  // Redis counts a swap with itself too
        }
        out.ok()
    },
    Command("move", arity: 3, keys: .one) { $0.move($1, $2, &$3) },
    Command("copy", arity: -3, keys: .pairs) { $0.copy($1, $2, &$3) },
    Command("flushdb", arity: -1, keys: .none) { dispatcher, session, r, out in
        guard flushOptionsAreValid(r) else { return out.error("ERR syntax error") }
        dispatcher.databases[session.database].removeAll()
        out.ok()
    },
    Command("flushall", arity: -1, keys: .none) { dispatcher, _, r, out in
        guard flushOptionsAreValid(r) else { return out.error("ERR syntax error") }
        for db in dispatcher.databases { db.removeAll() }
        dispatcher.persistence.saveAfterFlush(dispatcher.databases)
        out.ok()
    },
    Command("reset", arity: 1, keys: .none, flags: [.noAuth, .transactionControl]) { dispatcher, session, _, out in
        session.transaction = nil
        dispatcher.unwatchAll(session)
        dispatcher.pubsub.removeAll(of: session)
        session.replyMode = .on
        session.database = 0
        session.name = []
        session.resp3 = false
        session.authenticated = dispatcher.sessions.password == nil
        out.resp3 = false
        out.simple("RESET")
    },
    Command("quit", arity: -1, keys: .none, flags: [.noAuth, .transactionControl]) { _, _, _, out in out.ok() },
]

/// FLUSHDB/FLUSHALL take nothing, ASYNC or SYNC.
private func flushOptionsAreValid(_ r: Request) -> Bool {
    r.count == 1 || (r.count == 2 && (equalsIgnoringCase(r[1], "async") || equalsIgnoringCase(r[1], "sync")))
}

/// A database index, as Redis's getIntFromObjectOrReply reads it (not an
/// integer; out of the C int range: Redis's two errors), then "DB index
/// is out of range" when there is no such database.
private func parseDatabaseIndex(_ bytes: UnsafeRawBufferPointer, _ out: inout ReplyWriter) -> Int? {
    guard let index = parseInteger(bytes, in: Int(Int32.min)...Int(Int32.max), &out) else { return nil }
    guard index >= 0 && index < Databases.selectable else {
        out.error("ERR DB index is out of range")
        return nil
    }
    return index
}

/// A client name or library field: printable ASCII, no spaces.
private func isValidName(_ bytes: [UInt8]) -> Bool {
    bytes.allSatisfy { $0 >= 33 && $0 <= 126 }
}

extension Dispatcher {
    // MARK: - HELLO and AUTH

    fileprivate func hello(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
        var version = session.resp3 ? 3 : 2
        if r.count >= 2 {
            guard let asked = parseInteger(r[1]) else {
                return out.error("ERR Protocol version is not an integer or out of range")
            }
            guard asked == 2 || asked == 3 else { return out.error("NOPROTO unsupported protocol version") }
            version = asked
        }
        var credentials: (user: [UInt8], password: [UInt8])?
        var name: [UInt8]?
        var index = 2
        while index < r.count {
            let more = r.count - index - 1
            if equalsIgnoringCase(r[index], "auth") && more >= 2 {
                credentials = (r[index + 1], r[index + 2])
                index += 3
            } else if equalsIgnoringCase(r[index], "setname") && more >= 1 {
                name = r[index + 1]
                index += 2
            } else {
                return out.error(
                    bytes: Array("ERR Syntax error in HELLO option '".utf8) + ReplyWriter.quoted(r[index]) + [39])
            }
        }
        if let credentials {
            guard accepts(user: credentials.user, password: credentials.password) else {
                return out.error("WRONGPASS invalid username-password pair or user is disabled.")
            }
            session.authenticated = true
        }
        guard session.authenticated else {
            return out.error(
                "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
            )
        }
        if let name {
            guard isValidName(name) else {
                return out.error("ERR Client names cannot contain spaces, newlines or special characters.")
            }
            session.name = name
        }
        session.resp3 = version == 3
        out.resp3 = session.resp3
        out.mapHeader(7)
        out.bulk("server")
        out.bulk("redis")
        out.bulk("version")
        out.bulk("7.0.15")
        out.bulk("proto")
        out.integer(version)
        out.bulk("id")
        out.integer(session.id)
        out.bulk("mode")
        out.bulk("standalone")
        out.bulk("role")
        out.bulk("master")
        out.bulk("modules")
        out.arrayHeader(0)
    }

    /// The only user is `default`; without `--requirepass` it takes any
    /// password (Redis's `nopass`).
    private func accepts(user: [UInt8], password given: [UInt8]) -> Bool {
        guard user == Array("default".utf8) else { return false }
        guard let password = sessions.password else { return true }
        return PasswordCheck.matches(given, password)
    }

    fileprivate func auth(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
        guard r.count <= 3 else { return out.error("ERR syntax error") }
        if r.count == 2 && sessions.password == nil {
            return out.error(
                "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
            )
        }
        let user = r.count == 3 ? r[1] : Array("default".utf8)
        guard accepts(user: user, password: r[r.count - 1]) else {
            return out.error("WRONGPASS invalid username-password pair or user is disabled.")
        }
        session.authenticated = true
        out.ok()
    }

    // MARK: - CLIENT

    /// CLIENT LIST's line for `listed`. The caller's own request is the one
    /// running: its `qbuf` counts it and the rest of its read, its
    /// `argv-mem` its arguments; another client has no command running.
    private func listLine(_ listed: ClientSession, caller: ClientSession, _ r: Request, now: Int64) -> String {
        let own = listed === caller
        return listed.listLine(
            now: now, blocked: blocked.isParked(listed.id),
            queryBytes: own ? runningBatch?.encodedSize(from: runningIndex) ?? 0 : 0,
            argumentBytes: own ? r.indices.reduce(0) { $0 + r.raw($1).count } : 0)
    }

    fileprivate func client(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        let now = monotonicMilliseconds()
        switch sub {
        case "id":
            out.integer(session.id)
        case "getname":
            if session.name.isEmpty { out.null() } else { out.bulk(session.name) }
        case "setname":
            guard isValidName(r[2]) else {
                return out.error("ERR Client names cannot contain spaces, newlines or special characters.")
            }
            session.name = r[2]
            out.ok()
        case "setinfo":
            let field = String(decoding: lowercased(r[2]), as: UTF8.self)
            guard field == "lib-name" || field == "lib-ver" else {
                return out.error(bytes: Array("ERR Unrecognized option '".utf8) + ReplyWriter.quoted(r[2]) + [39])
            }
            guard isValidName(r[3]) else {
                return out.error("ERR \(field) cannot contain spaces, newlines or special characters.")
            }
            if field == "lib-name" { session.libraryName = r[3] } else { session.libraryVersion = r[3] }
            out.ok()
        case "info":
            out.verbatim(listLine(session, caller: session, r, now: now) + "\n")
        case "list":
            guard let chosen = listedSessions(r, &out) else { return }
            out.verbatim(chosen.map { listLine($0, caller: session, r, now: now) + "\n" }.joined())
        case "kill":
            kill(session, r, &out)
        case "reply":
            if equalsIgnoringCase(r.raw(2), "on") {
                session.replyMode = .on
                out.ok()
            } else if equalsIgnoringCase(r.raw(2), "off") {
                session.replyMode = .off
            } else if equalsIgnoringCase(r.raw(2), "skip") {
                if session.replyMode != .off { session.replyMode = .skipNext }
            } else {
                out.error("ERR syntax error")
            }
        case "unblock":
            // CLIENT UNBLOCK id [TIMEOUT|ERROR], as Redis checks it: the reason, then the id.
            guard r.count <= 4 else { return out.subcommandSyntaxError(r, of: "CLIENT") }
            var withError = false
            if r.count == 4 {
                if equalsIgnoringCase(r.raw(3), "error") {
                    withError = true
                } else if !equalsIgnoringCase(r.raw(3), "timeout") {
                    return out.error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
                }
            }
            guard let id = parseInteger(r.raw(2)) else { return out.error(notAnInteger) }
            out.integer(unblock(id, withError: withError) ? 1 : 0)
        case "pause":
            pauseClients(r, &out)
        case "unpause":
            endPause()
            out.ok()
        case "no-evict":
            if equalsIgnoringCase(r.raw(2), "on") {
                session.noEvict = true
            } else if equalsIgnoringCase(r.raw(2), "off") {
                session.noEvict = false
            } else {
                return out.error("ERR syntax error")
            }
            out.ok()
        // Client-side caching is not supported: tracking cannot be turned
        // on, and the rest answers as Redis does for a client without it.
        case "tracking":
            guard trackingOptionsAreKnown(r) else { return out.error("ERR syntax error") }
            if equalsIgnoringCase(r.raw(2), "on") {
                out.error("ERR CLIENT TRACKING is not supported by kvd: it sends no invalidation messages")
            } else if equalsIgnoringCase(r.raw(2), "off") {
                out.ok()
            } else {
                out.error("ERR syntax error")
            }
        case "caching":
            out.error(
                "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode "
                    + "enabled")
        case "getredir":
            out.integer(-1)
        case "trackinginfo":
            out.mapHeader(3)
            out.bulk("flags")
            out.setHeader(1)
            out.bulk("off")
            out.bulk("redirect")
            out.integer(-1)
            out.bulk("prefixes")
            out.arrayHeader(0)
        default:
            out.unknownSubcommand(r, of: "CLIENT")
        }
    }

    /// CLIENT TRACKING's options as Redis reads them: REDIRECT and PREFIX
    /// with a value, BCAST, OPTIN, OPTOUT, NOLOOP.
    private func trackingOptionsAreKnown(_ r: Request) -> Bool {
        var index = 3
        while index < r.count {
            let option = r.raw(index)
            if equalsIgnoringCase(option, "redirect") || equalsIgnoringCase(option, "prefix") {
                guard index + 1 < r.count else { return false }
                index += 2
            } else if ["bcast", "optin", "optout", "noloop"].contains(where: { equalsIgnoringCase(option, $0) }) {
                index += 1
            } else {
                return false
            }
        }
        return true
    }

    /// CLIENT LIST's filters: `TYPE normal|master|replica|pubsub` and `ID id…`.
    private func listedSessions(_ r: Request, _ out: inout ReplyWriter) -> [ClientSession]? {
        let chosen = sessions.all.sorted { $0.id < $1.id }
        guard r.count > 2 else { return chosen }
        if equalsIgnoringCase(r[2], "type") && r.count == 4 {
            let type = String(decoding: lowercased(r[3]), as: UTF8.self)
            guard ["normal", "master", "replica", "slave", "pubsub"].contains(type) else {
                out.error(bytes: Array("ERR Unknown client type '".utf8) + ReplyWriter.quoted(r[3]) + [39])
                return nil
            }
            guard type == "normal" || type == "pubsub" else { return [] }
            return chosen.filter { $0.isSubscribed == (type == "pubsub") }
        }
        if equalsIgnoringCase(r[2], "id") && r.count >= 4 {
            // In the arguments' order, repeats included, as Redis lists them.
            var listed: [ClientSession] = []
            for argument in r.dropFirst(3) {
                // Any integer, as Redis's getLongLongFromObjectOrReply:
                // one that is no client's id lists nobody.
                guard let id = parseInteger(argument) else {
                    out.error("ERR Invalid client ID")
                    return nil
                }
                if let session = sessions.existing(id) { listed.append(session) }
            }
            return listed
        }
        out.error("ERR syntax error")
        return nil
    }

    /// CLIENT KILL addr:port (the old form, +OK), or CLIENT KILL with
    /// filters (ID, ADDR, LADDR, USER, TYPE, SKIPME): the number killed.
    private func kill(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
        if r.count == 3 {
            guard let victim = sessions.all.first(where: { Array($0.info.address.utf8) == r[2] }) else {
                return out.error("ERR No such client")
            }
            victim.info.kill()
            return out.ok()
        }
        guard r.count >= 4, r.count % 2 == 0 else { return out.error("ERR syntax error") }
        var id: Int?
        var address: [UInt8]?
        var localAddress: [UInt8]?
        var type: String?
        var skipMe = true
        var index = 2
        while index < r.count {
            let (option, value) = (r[index], r[index + 1])
            if equalsIgnoringCase(option, "id") {
                guard let parsed = parseInteger(value), parsed > 0 else {
                    return out.error("ERR client-id should be greater than 0")
                }
                id = parsed
            } else if equalsIgnoringCase(option, "addr") {
                address = value
            } else if equalsIgnoringCase(option, "laddr") {
                localAddress = value
            } else if equalsIgnoringCase(option, "user") {
                // Every client is `default`'s: USER default matches them all.
                guard value == Array("default".utf8) else {
                    return out.error(bytes: Array("ERR No such user '".utf8) + ReplyWriter.quoted(value) + [39])
                }
            } else if equalsIgnoringCase(option, "type") {
                let kind = String(decoding: lowercased(value), as: UTF8.self)
                guard ["normal", "master", "replica", "slave", "pubsub"].contains(kind) else {
                    return out.error(bytes: Array("ERR Unknown client type '".utf8) + ReplyWriter.quoted(value) + [39])
                }
                type = kind
            } else if equalsIgnoringCase(option, "skipme") {
                if equalsIgnoringCase(value, "yes") {
                    skipMe = true
                } else if equalsIgnoringCase(value, "no") {
                    skipMe = false
                } else {
                    return out.error("ERR syntax error")
                }
            } else {
                return out.error("ERR syntax error")
            }
            index += 2
        }
        var killed = 0
        for candidate in sessions.all {
            if let id, candidate.id != id { continue }
            if let address, Array(candidate.info.address.utf8) != address { continue }
            if let localAddress, Array(candidate.info.localAddress.utf8) != localAddress { continue }
            if let type, (type != "normal" && type != "pubsub") || candidate.isSubscribed != (type == "pubsub") {
                continue
            }
            if skipMe && candidate === session { continue }
            candidate.info.kill()
            killed += 1
        }
        out.integer(killed)
    }

    // MARK: - Across databases

    fileprivate func move(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
        guard let target = parseDatabaseIndex(r.raw(2), &out) else { return }
        guard target != session.database else { return out.error("ERR source and destination objects are the same") }
        let now = databases.clock.now
        let source = databases[session.database]
        guard let entry = source.lookup(r[1], now: now) else { return out.integer(0) }
        let destination = databases[target]
        guard destination.lookup(r[1], now: now) == nil else { return out.integer(0) }
        let mark = source.changeMark
        source.remove(r[1])
        destination.put(r[1], entry)
        source.countChanges(1, since: mark)
        source.notify(.generic, "move_from", r.raw(1))
        destination.notify(.generic, "move_to", r.raw(1))
        out.integer(1)
    }

    fileprivate func copy(_ session: ClientSession, _ r: Request, _ out: inout ReplyWriter) {
        var target = session.database
        var replace = false
        var index = 3
        while index < r.count {
            if equalsIgnoringCase(r[index], "replace") {
                replace = true
            } else if equalsIgnoringCase(r[index], "db") && index + 1 < r.count {
                guard let chosen = parseDatabaseIndex(r.raw(index + 1), &out) else { return }
                target = chosen
                index += 1
            } else {
                return out.error("ERR syntax error")
            }
            index += 1
        }
        if target == session.database && r[1] == r[2] {
            return out.error("ERR source and destination objects are the same")
        }
        let now = databases.clock.now
        guard let entry = databases[session.database].lookup(r[1], now: now, use: .read) else {
            return out.integer(0)
        }
        let destination = databases[target]
        if destination.lookup(r[2], now: now) != nil {
            guard replace else { return out.integer(0) }
            // Deleted first, so the copy is a new key, as in Redis.
            let mark = destination.changeMark
            destination.remove(r[2])
            destination.countChanges(0, since: mark)
        }
        destination.put(r[2], entry, copying: true)
        destination.notify(.generic, "copy_to", r.raw(2))
        out.integer(1)
    }
}
