// PubSub.swift: who listens to what, on the core: channels, shard channels
// and patterns to their subscribers (each client keeps its own side in its
// session), the MONITOR clients, and the delivery of a PUBLISH. Everything
// here runs on the core loop with the dispatcher, so a subscription needs
// no lock; the messages leave through the `PushOutbox`, one post per
// destination loop per job.
//
// Costs, as in Redis: a PUBLISH walks the channel's subscribers, then every
// pattern any client subscribed to (one glob match each, with Redis's
// stringmatchlen rules: Commands/Glob.swift), so a million patterns make
// every PUBLISH a million matches; a SPUBLISH looks at no pattern.

/// The server's subscriptions and monitors. Core loop only.
final class PubSub {
    /// Channel to its subscribers, in subscription order.
    private(set) var channels: [Key: [ClientSession]] = [:]
    /// Shard channel to its subscribers (SSUBSCRIBE; without a cluster,
    /// simply another namespace, as in redis-server 7.0 standalone).
    private(set) var shardChannels: [Key: [ClientSession]] = [:]
    /// Pattern to its subscribers and its place in `patternList`: one
    /// table, so a million patterns grow one table of a million entries
    /// (Swift's rehash is all at once), not two.
    private var patterns: [Key: (subscribers: [ClientSession], position: Int)] = [:]
    /// The same patterns in an array: what a PUBLISH walks.
    private var patternList: [[UInt8]] = []

    /// How many patterns somebody subscribed to (PUBSUB NUMPAT).
    var patternCount: Int { patternList.count }
    /// The clients in MONITOR mode, in the order they asked.
    /// `@exclusivity(unchecked)`: every request reads it (core loop only,
    /// never while an access to it is open); the runtime's check was a
    /// call per request.
    @exclusivity(unchecked) private(set) var monitors: [ClientSession] = []
    /// The pushes of the job under way.
    let outbox = PushOutbox()

    /// Subscribes `session` to `channel` (a shard channel when `shard`);
    /// false when it was subscribed already.
    func subscribe(_ session: ClientSession, to channel: [UInt8], shard: Bool) -> Bool {
        let added =
            shard ? session.shardChannels.insert(channel) : session.channels.insert(channel)
        if added {
            if shard {
                shardChannels[Key(channel), default: []].append(session)
            } else {
                channels[Key(channel), default: []].append(session)
            }
        }
        markSubscriber(session)
        return added
    }

    /// Unsubscribes `session` from `channel`; false when it was not subscribed.
    func unsubscribe(_ session: ClientSession, from channel: [UInt8], shard: Bool) -> Bool {
        let removed =
            shard ? session.shardChannels.remove(channel) : session.channels.remove(channel)
        if removed {
            if shard {
                PubSub.remove(session, channel, from: &shardChannels)
            } else {
                PubSub.remove(session, channel, from: &channels)
            }
        }
        markSubscriber(session)
        return removed
    }

    /// Subscribes `session` to `pattern`; false when it was subscribed already.
    func subscribe(_ session: ClientSession, toPattern pattern: [UInt8]) -> Bool {
        let added = session.patterns.insert(pattern)
        if added {
            let key = Key(pattern)
            if patterns[key] == nil {
                patterns[key] = ([session], patternList.count)
                patternList.append(pattern)
            } else {
                patterns[key]!.subscribers.append(session)
            }
        }
        markSubscriber(session)
        return added
    }

    /// Unsubscribes `session` from `pattern`; false when it was not subscribed.
    func unsubscribe(_ session: ClientSession, fromPattern pattern: [UInt8]) -> Bool {
        let removed = session.patterns.remove(pattern)
        if removed { removePattern(session, pattern) }
        markSubscriber(session)
        return removed
    }

    private func removePattern(_ session: ClientSession, _ pattern: [UInt8]) {
        let key = Key(pattern)
        guard let index = patterns[key]?.subscribers.firstIndex(where: { $0 === session }) else { return }
        patterns[key]!.subscribers.remove(at: index)
        guard patterns[key]!.subscribers.isEmpty else { return }
        // Nobody listens to it any more: the last pattern takes its place.
        let position = patterns.removeValue(forKey: key)!.position
        let last = patternList.removeLast()
        if position < patternList.count {
            patternList[position] = last
            patterns[Key(last)]!.position = position
        }
    }

    /// Every subscription of `session` ends, and its MONITOR (it closed, or
    /// sent RESET), with no notice to it.
    func removeAll(of session: ClientSession) {
        for channel in session.channels.removeAll() { PubSub.remove(session, channel, from: &channels) }
        for channel in session.shardChannels.removeAll() { PubSub.remove(session, channel, from: &shardChannels) }
        for pattern in session.patterns.removeAll() { removePattern(session, pattern) }
        markSubscriber(session)
        stopMonitoring(session)
    }

    /// `session` gets every command run from now on (MONITOR).
    func startMonitoring(_ session: ClientSession) {
        guard !session.monitoring else { return }
        session.monitoring = true
        monitors.append(session)
    }

    func stopMonitoring(_ session: ClientSession) {
        guard session.monitoring else { return }
        session.monitoring = false
        monitors.removeAll { $0 === session }
    }

    /// Delivers `message` on `channel` to its subscribers (and, unless
    /// `shard`, to the clients whose patterns match it) and returns how many
    /// got it. The publisher's own copy (a RESP3 client may listen to what
    /// it publishes) goes into its reply stream before the count, as in
    /// Redis; everybody else's into the outbox.
    func publish(
        _ channel: [UInt8], _ message: [UInt8], shard: Bool, from publisher: ClientSession,
        into out: inout ReplyWriter
    ) -> Int {
        fanOut(channel, message, shard: shard) { frame, subscriber in
            if subscriber === publisher {
                out.raw(frame)
            } else {
                outbox.append(frame, to: subscriber)
            }
        }
    }

    /// Delivers `message` on `channel` from no client (a keyspace
    /// notification): every copy goes into the outbox.
    func publish(_ channel: [UInt8], _ message: [UInt8]) {
        _ = fanOut(channel, message, shard: false) { frame, subscriber in outbox.append(frame, to: subscriber) }
    }

    /// Hands each subscriber of `channel` (and, unless `shard`, of every
    /// matching pattern) its frame; returns how many there were.
    private func fanOut(
        _ channel: [UInt8], _ message: [UInt8], shard: Bool, _ deliver: ([UInt8], ClientSession) -> Void
    ) -> Int {
        var receivers = 0
        if let subscribers = shard ? shardChannels[Key(channel)] : channels[Key(channel)] {
            var frames = PushFrames([shard ? PubSub.smessage : PubSub.message, channel, message])
            for subscriber in subscribers { deliver(frames.encoded(resp3: subscriber.resp3), subscriber) }
            receivers += subscribers.count
        }
        guard !shard, !patternList.isEmpty else { return receivers }
        // Borrowed, not copied: no reference counting per pattern.
        var matching: [[UInt8]] = []
        channel.withUnsafeBufferPointer { channel in
            patternList.withUnsafeBufferPointer { names in
                for index in names.indices where names[index].withUnsafeBufferPointer({ globMatch($0, channel) }) {
                    matching.append(names[index])
                }
            }
        }
        for pattern in matching {
            guard let subscribers = patterns[Key(pattern)]?.subscribers else { continue }
            var frames = PushFrames([PubSub.pmessage, pattern, channel, message])
            for subscriber in subscribers { deliver(frames.encoded(resp3: subscriber.resp3), subscriber) }
            receivers += subscribers.count
        }
        return receivers
    }

    /// Pushes one MONITOR line to every monitor.
    func feedMonitors(_ line: [UInt8]) {
        for monitor in monitors { outbox.append(line, to: monitor) }
    }

    private func markSubscriber(_ session: ClientSession) {
        let subscribed = session.isSubscribed
        if session.info.subscriberMark.isSubscriber != subscribed {
            session.info.subscriberMark.isSubscriber = subscribed
        }
    }

    private static func remove(
        _ session: ClientSession, _ name: [UInt8], from table: inout [Key: [ClientSession]]
    ) {
        guard var subscribers = table.removeValue(forKey: Key(name)) else { return }
        if let index = subscribers.firstIndex(where: { $0 === session }) { subscribers.remove(at: index) }
        // A channel nobody listens to is forgotten, so PUBSUB CHANNELS and
        // the table's memory follow the live subscriptions.
        if !subscribers.isEmpty { table[Key(name)] = subscribers }
    }

    static let message = Array("message".utf8)
    static let smessage = Array("smessage".utf8)
    static let pmessage = Array("pmessage".utf8)
}

/// One push's frame, encoded at most once per protocol however many
/// subscribers get it.
struct PushFrames {
    private let parts: [[UInt8]]
    private var resp2: [UInt8]?
    private var resp3: [UInt8]?

    init(_ parts: [[UInt8]]) {
        self.parts = parts
    }

    mutating func encoded(resp3 wantsResp3: Bool) -> [UInt8] {
        if wantsResp3 {
            if let resp3 { return resp3 }
            let frame = PushFrames.encode(parts, resp3: true)
            resp3 = frame
            return frame
        }
        if let resp2 { return resp2 }
        let frame = PushFrames.encode(parts, resp3: false)
        resp2 = frame
        return frame
    }

    private static func encode(_ parts: [[UInt8]], resp3: Bool) -> [UInt8] {
        var writer = ReplyWriter()
        writer.resp3 = resp3
        writer.pushHeader(parts.count)
        for part in parts { part.withUnsafeBytes { writer.bulk($0) } }
        return writer.finish().last
    }
}
