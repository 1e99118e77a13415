// PushOutbox.swift: how bytes the core pushes to a client outside its
// replies (pub/sub messages, MONITOR lines) reach the loop the client's
// connection lives on. The core gathers a job's pushes per destination loop
// and per client (`PushOutbox`), then sends each loop its share in one post
// (`PushOutlet.deliver`): a PUBLISH to a thousand subscribers on two I/O
// loops costs the core two posts per job, not a thousand; a hundred
// messages to one subscriber in a job are one array. The core never waits
// for a subscriber: what a slow one does not read piles up on its own
// loop, which cuts it off at its output buffer limit.
import Synchronization

/// The pushes of one job for one client.
public struct Push: Sendable {
    /// The client's id.
    public let client: Int
    /// The encoded pushes, in order.
    public var bytes: [UInt8]
    /// True when this job's pushes alone passed the loop's hard limit: the
    /// bytes were dropped and the client must be disconnected.
    public var overLimit = false
}

/// A loop's door for pushes: one per loop that serves connections.
public final class PushOutlet: Sendable {
    /// Posts `pushes` to the loop, which hands each to its connection.
    /// Called on the core, once per job that pushed to this loop's clients.
    let deliver: @Sendable ([Push]) -> Void
    /// The pub/sub hard output limit now (0: none; CONFIG SET may change
    /// it): more pushes than this for one client in one job are not
    /// gathered at all.
    let hardLimit: @Sendable () -> Int

    /// A door whose `deliver` posts to the loop.
    public init(hardLimit: @escaping @Sendable () -> Int, deliver: @escaping @Sendable ([Push]) -> Void) {
        self.hardLimit = hardLimit
        self.deliver = deliver
    }
}

/// Whether a client has subscriptions, for its own loop to pick the
/// output limit it is held to (Redis's `pubsub` class). Written by the
/// core when the count goes from none to some and back, read by the
/// connection when it checks its limit; relaxed, since it only chooses
/// between two limits and the next check sees the change.
public final class SubscriberMark: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A mark for a client with no subscriptions.
    public init() {}

    /// True while the client has any subscription.
    public var isSubscriber: Bool {
        get { flag.load(ordering: .relaxed) }
        set { flag.store(newValue, ordering: .relaxed) }
    }
}

/// The pushes of the core job under way, by destination loop. Core loop only.
final class PushOutbox {
    /// The loops pushed to in this job, and each one's pushes. `outlets`
    /// is unchecked as BlockedClients' `parked` is: every batch's `flush`
    /// reads it.
    @exclusivity(unchecked) private var outlets: [PushOutlet] = []
    private var pushes: [[Push]] = []
    /// Which entry of `outlets` each loop is (looked up once per client per job).
    private var outletIndex: [ObjectIdentifier: Int] = [:]
    /// Advanced by each `flush`: a session's place in the outbox (its
    /// `pushSlot`) counts only when it was taken in this generation, so a
    /// message to a client costs an array append, not a hash lookup.
    private var generation = 0
    /// Bytes gathered since the last `flush` (a batch's budget counts them).
    private(set) var byteCount = 0

    /// Appends `bytes` to what `session`'s loop will get for it. A client
    /// with no loop (a session without a connection) gets nothing.
    func append(_ bytes: [UInt8], to session: ClientSession) {
        guard let outlet = session.info.outlet else { return }
        byteCount += bytes.count
        let limit = outlet.hardLimit()
        let slot = session.pushSlot
        guard slot.generation == generation else {
            let key = ObjectIdentifier(outlet)
            let loop = outletIndex[key] ?? outlets.count
            if loop == outlets.count {
                outletIndex[key] = loop
                outlets.append(outlet)
                pushes.append([])
            }
            session.pushSlot = (generation, loop, pushes[loop].count)
            pushes[loop].append(Push(client: session.id, bytes: bytes))
            if limit > 0 && bytes.count > limit { dropOverLimit(loop, pushes[loop].count - 1) }
            return
        }
        guard !pushes[slot.loop][slot.index].overLimit else { return }
        pushes[slot.loop][slot.index].bytes.append(contentsOf: bytes)
        if limit > 0 && pushes[slot.loop][slot.index].bytes.count > limit { dropOverLimit(slot.loop, slot.index) }
    }

    private func dropOverLimit(_ loop: Int, _ index: Int) {
        pushes[loop][index].bytes = []
        pushes[loop][index].overLimit = true
    }

    /// Sends every loop its share, one post each, and starts afresh.
    func flush() {
        guard !outlets.isEmpty else { return }
        let (sending, shares) = (outlets, pushes)
        outlets = []
        pushes = []
        outletIndex = [:]
        generation += 1
        byteCount = 0
        for (outlet, share) in zip(sending, shares) { outlet.deliver(share) }
    }
}
