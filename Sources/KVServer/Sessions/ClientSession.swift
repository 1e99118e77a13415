// ClientSession.swift: what the core knows of one connection. The commands
// that change how a connection is served (HELLO, AUTH, SELECT, CLIENT
// SETNAME, MULTI, WATCH) change its session; CLIENT LIST reads every
// session. Sessions live on the core with the dispatcher (no lock): a
// connection registers its session when it is accepted and removes it when
// it closes, by posts to the core that the mailbox keeps in order with its
// batches.

/// A connection's facts, from the worker that accepted it.
public struct ClientInfo: Sendable {
    /// The connection's id, unique for the server's life (CLIENT ID).
    public let id: Int
    /// The peer's address, `ip:port`.
    public let address: String
    /// The local address it connected to, `ip:port`.
    public let localAddress: String
    /// The socket.
    public let fd: Int32
    /// It came through the Unix socket (CLIENT LIST's `U` flag).
    public let viaUnixSocket: Bool
    /// Closes the connection, on its worker, once what is queued for it is
    /// written (CLIENT KILL).
    public let kill: @Sendable () -> Void
    /// Delivers the reply of a parked blocking command, on the connection's
    /// worker, after which it goes on with its requests (called on the core).
    public let resume: @Sendable (Replies) -> Void
    /// Where pushes for it go (pub/sub messages, MONITOR lines): its loop's
    /// door (nil: a session with no connection, which gets none).
    public let outlet: PushOutlet?
    /// Set by the core while it has subscriptions: its loop then holds it
    /// to the pub/sub output limit.
    public let subscriberMark: SubscriberMark
    /// Its I/O figures, published by its loop (CLIENT LIST).
    public let figures: ConnectionFigures

    /// A connection's facts.
    public init(
        id: Int, address: String, localAddress: String, fd: Int32, viaUnixSocket: Bool = false,
        kill: @escaping @Sendable () -> Void,
        resume: @escaping @Sendable (Replies) -> Void = { _ in }, outlet: PushOutlet? = nil,
        subscriberMark: SubscriberMark = SubscriberMark(), figures: ConnectionFigures = ConnectionFigures()
    ) {
        self.id = id
        self.address = address
        self.localAddress = localAddress
        self.fd = fd
        self.viaUnixSocket = viaUnixSocket
        self.kill = kill
        self.resume = resume
        self.outlet = outlet
        self.subscriberMark = subscriberMark
        self.figures = figures
    }
}

/// One connection's state on the core.
final class ClientSession {
    /// A MULTI block being queued.
    struct Transaction {
        /// The queued requests, copied out of their batches.
        var queued = RequestBatch()
        /// A queued request was refused (unknown command, wrong arity):
        /// EXEC answers EXECABORT.
        var refused = false
    }

    // `@exclusivity(unchecked)` on the fields every request reads: a
    // session lives on the core loop's thread with its dispatcher (see
    // Keyspace for why).
    let info: ClientInfo
    /// CLIENT SETNAME's name (empty: none).
    var name: [UInt8] = []
    /// CLIENT SETINFO's LIB-NAME and LIB-VER.
    var libraryName: [UInt8] = []
    var libraryVersion: [UInt8] = []
    /// The selected database (SELECT).
    @exclusivity(unchecked) var database = 0
    /// HELLO 3 was sent.
    @exclusivity(unchecked) var resp3 = false
    /// AUTH succeeded, or no password is required.
    @exclusivity(unchecked) var authenticated: Bool
    /// Inside MULTI.
    @exclusivity(unchecked) var transaction: Transaction?
    /// WATCHed keys, with their database.
    var watched: [(database: Int, key: [UInt8])] = []
    let watchFlag = WatchFlag()
    let connectedAt = monotonicMilliseconds()
    @exclusivity(unchecked) var lastCommandAt = monotonicMilliseconds()
    /// CLIENT NO-EVICT: shown in CLIENT LIST's flags (kvd evicts no client).
    var noEvict = false
    /// The last command's `Command.id` (nil: none yet).
    @exclusivity(unchecked) var lastCommand: Int?
    /// Pub/sub: the channels, patterns and shard channels it listens to.
    @exclusivity(unchecked) var channels = SubscriptionSet()
    @exclusivity(unchecked) var patterns = SubscriptionSet()
    @exclusivity(unchecked) var shardChannels = SubscriptionSet()
    /// Where its pushes of the job under way are in the `PushOutbox`
    /// (valid in that generation only).
    var pushSlot = (generation: -1, loop: 0, index: 0)
    /// MONITOR was sent: every command run is pushed to it.
    @exclusivity(unchecked) var monitoring = false
    /// CLIENT REPLY: whether its replies are sent.
    @exclusivity(unchecked) var replyMode = ReplyMode.on

    /// CLIENT REPLY's modes (pushes are sent in all of them, as in Redis).
    enum ReplyMode {
        case on
        /// CLIENT REPLY OFF.
        case off
        /// CLIENT REPLY SKIP was the last command: the next one is silenced.
        case skipNext
    }

    /// Redis's "pub/sub context": SUBSCRIBE, PSUBSCRIBE or SSUBSCRIBE
    /// left it listening to something.
    var isSubscribed: Bool { channels.count + patterns.count + shardChannels.count > 0 }
    /// Its subcommand, lower-cased, when it is a container (`list` of CLIENT LIST).
    @exclusivity(unchecked) var lastSubcommand: [UInt8]?

    init(info: ClientInfo, authenticated: Bool) {
        self.info = info
        self.authenticated = authenticated
    }

    var id: Int { info.id }

    /// The last command's full name, as CLIENT LIST shows it (NULL: none yet).
    private var lastCommandName: String {
        guard let lastCommand else { return "NULL" }
        let name = Dispatcher.rows[lastCommand].name
        return lastSubcommand.map { name + "|" + String(decoding: $0, as: UTF8.self) } ?? name
    }

    /// CLIENT LIST's line for this client, with Redis 7.0's fields in its
    /// order (and 7.2's `lib-name`/`lib-ver` after them); `blocked`: parked
    /// by a blocking command; `queryBytes` and `argumentBytes`: the request
    /// running, if it is this client's (see Dispatcher). Flags in Redis's
    /// order: `O` monitor, `P` subscriber, `x` MULTI, `b` blocked, `U` Unix
    /// socket, `e` no-evict; `N` for none. The memory figures are kvd's:
    /// `qbuf` the requests of this read still to run plus the input its
    /// loop holds unparsed, `qbuf-free` 0 (no buffer is reserved for it on
    /// the core), `rbs`/`rbp`/`obl` 0 (kvd has no fixed reply buffer per
    /// client: unsent replies are all in `oll` blocks of `omem` bytes, as
    /// its loop reports them), `tot-mem` the sum of those.
    func listLine(now: Int64, blocked: Bool, queryBytes: Int = 0, argumentBytes: Int = 0) -> String {
        var flags = monitoring ? "O" : ""
        if isSubscribed { flags += "P" }
        if transaction != nil { flags += "x" }
        if blocked { flags += "b" }
        if info.viaUnixSocket { flags += "U" }
        if noEvict { flags += "e" }
        if flags.isEmpty { flags = "N" }
        let name = String(decoding: self.name, as: UTF8.self)
        let library = String(decoding: libraryName, as: UTF8.self)
        let version = String(decoding: libraryVersion, as: UTF8.self)
        let figures = info.figures
        let query = queryBytes + figures.unreadBytes
        let multiMemory = transaction?.queued.argumentMemory ?? 0
        let unsent = figures.unsentBytes
        return "id=\(id) addr=\(info.address) laddr=\(info.localAddress) fd=\(info.fd) name=\(name)"
            + " age=\((now - connectedAt) / 1000) idle=\((now - lastCommandAt) / 1000) flags=\(flags)"
            + " db=\(database) sub=\(channels.count) psub=\(patterns.count) ssub=\(shardChannels.count)"
            + " multi=\(transaction.map { $0.queued.count } ?? -1) qbuf=\(query) qbuf-free=0"
            + " argv-mem=\(argumentBytes) multi-mem=\(multiMemory) rbs=0 rbp=0 obl=0 oll=\(figures.unsentChunks)"
            + " omem=\(unsent) tot-mem=\(query + argumentBytes + multiMemory + unsent) events=\(figures.events)"
            + " cmd=\(lastCommandName) user=default redir=-1 resp=\(resp3 ? 3 : 2)"
            + " lib-name=\(library) lib-ver=\(version)"
    }
}
