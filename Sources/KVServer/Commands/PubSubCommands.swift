// PubSubCommands.swift: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UN-forms,
// PUBLISH, SPUBLISH and PUBSUB, with Redis 7.0's replies: each
// (un)subscription is confirmed by a push (an array in RESP2, `>` in RESP3)
// carrying the client's count, and an UN-form with nothing to drop still
// answers one push with a null name. The subscriptions live in
// Sessions/PubSub.swift; what a subscribed RESP2 client may still send is
// the dispatcher's gate.

let pubSubCommands: [Command] = [
    Command("subscribe", arity: -2, keys: .none) { $0.subscribe($1, $2, &$3, kind: .channel) },
    Command("ssubscribe", arity: -2, keys: .none) { $0.subscribe($1, $2, &$3, kind: .shard) },
    Command("psubscribe", arity: -2, keys: .none) { $0.subscribe($1, $2, &$3, kind: .pattern) },
    Command("unsubscribe", arity: -1, keys: .none) { $0.unsubscribe($1, $2, &$3, kind: .channel) },
    Command("sunsubscribe", arity: -1, keys: .none) { $0.unsubscribe($1, $2, &$3, kind: .shard) },
    Command("punsubscribe", arity: -1, keys: .none) { $0.unsubscribe($1, $2, &$3, kind: .pattern) },
    Command("publish", arity: 3, keys: .none) { dispatcher, session, r, out in
        out.integer(dispatcher.pubsub.publish(r[1], r[2], shard: false, from: session, into: &out))
    },
    Command("spublish", arity: 3, keys: .one) { dispatcher, session, r, out in
        out.integer(dispatcher.pubsub.publish(r[1], r[2], shard: true, from: session, into: &out))
    },
    Command("pubsub", arity: -2, keys: .none) { dispatcher, _, r, out in dispatcher.pubsub.introspect(r, &out) },
]

/// What a subscription command subscribes to.
enum SubscriptionKind {
    case channel, shard, pattern

    /// The push's first element for a subscription and for its end.
    var notices: (subscribe: StaticString, unsubscribe: StaticString) {
        switch self {
        case .channel: ("subscribe", "unsubscribe")
        case .shard: ("ssubscribe", "sunsubscribe")
        case .pattern: ("psubscribe", "punsubscribe")
        }
    }
}

extension Dispatcher {
    fileprivate func subscribe(
        _ session: ClientSession, _ r: Request, _ out: inout ReplyWriter, kind: SubscriptionKind
    ) {
        // The client's class, and so its output limit, may change.
        defer { out.limit = replyLimit(for: session) }
        // Redis's "deny blocking" clients (a transaction being executed)
        // may not subscribe, except that SUBSCRIBE and PSUBSCRIBE stay
        // allowed inside EXEC, for compatibility. (Scripts may not call any
        // of them: RedisLibrary refuses them.)
        if inExec && kind == .shard {
            let name = kind.notices.subscribe.description.uppercased()
            return out.error("ERR \(name) isn't allowed for a DENY BLOCKING client")
        }
        for index in 1..<r.count {
            let name = r[index]
            switch kind {
            case .channel: _ = pubsub.subscribe(session, to: name, shard: false)
            case .shard: _ = pubsub.subscribe(session, to: name, shard: true)
            case .pattern: _ = pubsub.subscribe(session, toPattern: name)
            }
            notice(kind.notices.subscribe, name, count(of: session, kind), &out)
        }
    }

    fileprivate func unsubscribe(
        _ session: ClientSession, _ r: Request, _ out: inout ReplyWriter, kind: SubscriptionKind
    ) {
        // The client's class, and so its output limit, may change.
        defer { out.limit = replyLimit(for: session) }
        let names: [[UInt8]] =
            if r.count > 1 {
                (1..<r.count).map { r[$0] }
            } else {
                switch kind {
                case .channel: session.channels.members
                case .shard: session.shardChannels.members
                case .pattern: session.patterns.members
                }
            }
        guard !names.isEmpty else { return notice(kind.notices.unsubscribe, nil, count(of: session, kind), &out) }
        for name in names {
            switch kind {
            case .channel: _ = pubsub.unsubscribe(session, from: name, shard: false)
            case .shard: _ = pubsub.unsubscribe(session, from: name, shard: true)
            case .pattern: _ = pubsub.unsubscribe(session, fromPattern: name)
            }
            notice(kind.notices.unsubscribe, name, count(of: session, kind), &out)
        }
    }

    /// The count a notice carries: channels and patterns together, or the
    /// shard channels alone (Redis counts them apart).
    private func count(of session: ClientSession, _ kind: SubscriptionKind) -> Int {
        kind == .shard ? session.shardChannels.count : session.channels.count + session.patterns.count
    }

    private func notice(_ what: StaticString, _ name: [UInt8]?, _ count: Int, _ out: inout ReplyWriter) {
        out.pushHeader(3)
        what.withUTF8Buffer { out.bulk(UnsafeRawBufferPointer($0)) }
        if let name { out.bulk(name) } else { out.null() }
        out.integer(count)
    }
}

extension PubSub {
    /// PUBSUB CHANNELS | NUMSUB | NUMPAT | SHARDCHANNELS | SHARDNUMSUB | HELP.
    fileprivate func introspect(_ r: Request, _ out: inout ReplyWriter) {
        // The dispatcher refused any other subcommand, and any other count.
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "channels", "shardchannels":
            guard r.count <= 3 else { return out.subcommandSyntaxError(r, of: "PUBSUB") }
            let pattern = r.count == 3 ? r[2] : nil
            let names = (sub == "channels" ? channels : shardChannels).keys.map(\.bytes).filter { name in
                pattern.map { globMatch($0, name) } ?? true
            }
            out.arrayHeader(names.count)
            for name in names { out.bulk(name) }
        case "numsub", "shardnumsub":
            let table = sub == "numsub" ? channels : shardChannels
            out.arrayHeader(2 * (r.count - 2))
            for index in 2..<r.count {
                let name = r[index]
                out.bulk(name)
                out.integer(table[Key(name)]?.count ?? 0)
            }
        case "numpat":
            out.integer(patternCount)
        default:  // help
            let help = [
                "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "CHANNELS [<pattern>]",
                "    Return the currently active channels matching a <pattern> (default: '*').",
                "NUMPAT",
                "    Return number of subscriptions to patterns.",
                "NUMSUB [<channel> ...]",
                "    Return the number of subscribers for the specified channels, excluding",
                "    pattern subscriptions(default: no channels).",
                "SHARDCHANNELS [<pattern>]",
                "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                "SHARDNUMSUB [<shardchannel> ...]",
                "    Return the number of subscribers for the specified shard level channel(s)",
                "HELP",
                "    Prints this help.",
            ]
            out.arrayHeader(help.count)
            for line in help { out.status(line) }
        }
    }
}
