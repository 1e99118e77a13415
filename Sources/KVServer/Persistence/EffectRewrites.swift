// EffectRewrites.swift: which form of a write the append-only file gets,
// as Redis 7.0 propagates it. Most writes replay as they were sent; those
// whose meaning depends on when or how they ran are logged as their
// result: a relative expiry as the absolute deadline it set (PEXPIREAT,
// SET ... PXAT, RESTORE ... ABSTTL), INCRBYFLOAT as the value it stored
// (SET ... KEEPTTL, so a float's rounding cannot drift on replay),
// HINCRBYFLOAT as HSET. The
// random and blocking ones (SPOP, BLPOP and friends) log themselves
// (Keyspace.propagate); EXEC and scripts log the commands they ran.
// Core loop only.

/// How a command's effect is logged.
enum EffectRule {
    /// The request itself, when it changed something.
    case verbatim
    /// The request itself, even when it changed nothing (FLUSHALL on empty databases, as Redis forces it).
    case always
    /// What it ran logs itself (EXEC, EVAL) or the handler does (SPOP, the blocking pops).
    case itself
    /// EXPIRE and relatives: PEXPIREAT with the deadline set (DEL when the key went).
    case expire
    /// SETEX, PSETEX, SET with EX/PX/EXAT/PXAT: SET with PXAT; the value is argument `value`.
    case setWithExpiry(value: Int)
    /// GETEX: PEXPIREAT or PERSIST.
    case getex
    /// INCRBYFLOAT: SET key value KEEPTTL.
    case incrByFloat
    /// HINCRBYFLOAT: HSET key field value.
    case hashIncrByFloat
    /// RESTORE: with a TTL, the deadline it set and ABSTTL (DEL when the
    /// TTL had passed and REPLACE deleted the key).
    case restore

    init(_ name: String) {
        switch name {
        case "flushall", "flushdb": self = .always
        case "exec", "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "spop", "blpop", "brpop",
            "blmove", "brpoplpush",
            "blmpop", "bzpopmin", "bzpopmax", "bzmpop":
            self = .itself
        case "expire", "pexpire", "expireat", "pexpireat": self = .expire
        case "setex", "psetex": self = .setWithExpiry(value: 3)
        case "set": self = .setWithExpiry(value: 2)
        case "getex": self = .getex
        case "incrbyfloat": self = .incrByFloat
        case "hincrbyfloat": self = .hashIncrByFloat
        case "restore": self = .restore
        default: self = .verbatim
        }
    }
}

extension Dispatcher {
    /// By `Command.id`: how each command is logged.
    static let effectRules = rows.map { EffectRule($0.name) }

    /// Runs `body` (a command's handler) and adds its effects to the feed:
    /// `command` ran `request` for `session`. At the top level, the
    /// command's effects are then committed (wrapped in MULTI/EXEC when
    /// several: EXEC's and a script's are one unit on replay).
    func loggingEffects(_ command: Command, _ request: Request, _ session: ClientSession, _ body: () -> Void) {
        let feed = databases.feed
        // What active expiry logged since the last command is a unit of its own.
        if effectDepth == 0 { feed.commit() }
        let (changesBefore, handledBefore) = (databases.fence.changes, feed.handled)
        feed.handled = false
        effectDepth += 1
        body()
        effectDepth -= 1
        // As Redis propagates a command that raised its `dirty` (an expiry
        // is no change: it is logged as its own DEL; SAVE and SHUTDOWN
        // lower the count, and are not logged).
        let changed = databases.fence.changes > changesBefore
        let rule = Dispatcher.effectRules[command.id]
        if !feed.handled {
            switch rule {
            case .itself: break
            case .always: feed.add(session.database, request)
            default: if changed { logEffect(rule, request, databases[session.database]) }
            }
        }
        feed.handled = handledBefore
        if effectDepth == 0 {
            if case .itself = rule, command.name == "exec" { feed.commit(transaction: true) } else { feed.commit() }
        }
    }

    private func logEffect(_ rule: EffectRule, _ request: Request, _ ks: Keyspace) {
        let feed = ks.feed
        switch rule {
        case .verbatim, .always, .itself: return feed.add(ks.index, request)
        // SET without a relative expiry replays as it was (the hot path: no lookup).
        case .setWithExpiry(let value) where value == 2 && !hasRelativeExpiry(request):
            return feed.add(ks.index, request)
        default: break
        }
        let key = request[1]
        // The key's state after the command (`now: .min`: not expired here).
        let entry = ks.lookup(key, now: .min, touching: false, use: .uncounted)
        switch rule {
        case .expire:
            guard let deadline = entry?.expiresAt else { return feed.add(ks.index, [word("DEL"), key]) }
            feed.add(ks.index, [word("PEXPIREAT"), key, decimalText(deadline)])
        case .setWithExpiry(let value):
            guard let entry else { return feed.add(ks.index, [word("DEL"), key]) }
            var effect = [word("SET"), key, request[value]]
            if let deadline = entry.expiresAt { effect += [word("PXAT"), decimalText(deadline)] }
            feed.add(ks.index, effect)
        case .getex:
            guard let entry else { return feed.add(ks.index, [word("DEL"), key]) }
            guard let deadline = entry.expiresAt else { return feed.add(ks.index, [word("PERSIST"), key]) }
            feed.add(ks.index, [word("PEXPIREAT"), key, decimalText(deadline)])
        case .incrByFloat:
            guard let entry else { return }
            feed.add(ks.index, [word("SET"), key, entry.value, word("KEEPTTL")])
        case .hashIncrByFloat:
            guard case .hash(let hash)? = entry?.collection, let value = hash.value(of: request.raw(2)) else { return }
            feed.add(ks.index, [word("HSET"), key, request[2], Array(value)])
        case .restore:
            guard let entry else { return feed.add(ks.index, [word("DEL"), key]) }
            guard let deadline = entry.expiresAt else { return feed.add(ks.index, request) }
            var effect = request.indices.map { request[$0] }
            effect[2] = decimalText(deadline)
            if !effect.dropFirst(4).contains(where: { equalsIgnoringCase($0, "absttl") }) {
                effect.append(word("ABSTTL"))
            }
            feed.add(ks.index, effect)
        case .verbatim, .always, .itself: break
        }
    }

    /// SET's EX, PX, EXAT or PXAT (EXAT and PXAT are rewritten too: one form).
    private func hasRelativeExpiry(_ request: Request) -> Bool {
        request.indices.dropFirst(3).contains { index in
            let option = request.raw(index)
            return equalsIgnoringCase(option, "ex") || equalsIgnoringCase(option, "px")
                || equalsIgnoringCase(option, "exat") || equalsIgnoringCase(option, "pxat")
        }
    }
}

private func word(_ text: String) -> [UInt8] { Array(text.utf8) }

private func decimalText(_ value: Int64) -> [UInt8] { Array(String(value).utf8) }
