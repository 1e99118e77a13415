// CoreHop.swift: the one hop between the I/O loops and the core. A worker
// submits the batches of one loop turn; the core executes them against the
// dispatcher (which it owns, as a LoopBound: no lock, no `@unchecked`), and
// posts their replies back to the worker's loop in one post. With I/O on
// the core loop itself, `executeHere` runs a batch in place.
import MainLoop

/// The hop to the core loop, and the dispatcher that lives on it.
public struct CoreHop: Sendable {
    /// The loop that owns the dispatcher and its keyspace.
    public let loop: EventLoop
    /// The dispatcher, reachable from any thread only through its loop.
    public let dispatcher: LoopBound<Dispatcher>
    /// The dispatcher's figures, readable from any thread.
    public let counters: DispatcherCounters
    /// The script the core runs, for the I/O threads that answer while it is busy.
    public let scripts: ScriptActivity

    /// A core on `loop` with a new dispatcher (see `Dispatcher.init`) that
    /// reads `settings` (the ones CONFIG SET changes).
    public init(
        on loop: EventLoop, password: String? = nil, settings: LiveSettings = LiveSettings(ServerOptions()),
        prepare: (Dispatcher) -> Void = { _ in },
        serverInfo: @escaping @Sendable () -> [(section: String, lines: [String])],
        resetServerStats: @escaping @Sendable () -> Void = {}
    ) {
        self.loop = loop
        let dispatcher = Dispatcher(
            password: password, settings: settings, serverInfo: serverInfo, resetServerStats: resetServerStats)
        prepare(dispatcher)  // before the loop owns it: the snapshot is loaded here
        self.counters = dispatcher.stats.counters
        self.scripts = dispatcher.scripts.activity
        self.dispatcher = LoopBound(dispatcher, on: loop)
        // Posted first, so it is set before any batch runs (the mailbox keeps order).
        let bound = self.dispatcher
        try? bound.post {
            $0.owner = bound
            $0.appendOnly.attach(bound)
        }
    }

    /// Any thread: executes the batches of several clients (one worker
    /// turn's) on the core in one job, in order, then calls `deliver` on
    /// `replyLoop` with each one's replies and unrun requests, in the same
    /// order, in one post: one hop each way per turn, not per connection.
    /// `parked`: the client's batch stopped at a blocking command, whose
    /// reply comes later through its `ClientInfo.resume`.
    /// - Throws: ``EventLoopError/shutDown`` when the core has stopped.
    public func submit(
        _ batches: [(client: Int, batch: RequestBatch)], replyOn replyLoop: EventLoop,
        _ deliver: @escaping @Sendable ([(replies: Replies, rest: RequestBatch?, parked: Bool)]) -> Void
    ) throws {
        try dispatcher.post { dispatcher in
            let results = batches.map { entry -> (replies: Replies, rest: RequestBatch?, parked: Bool) in
                let (replies, rest) = dispatcher.execute(entry.batch, client: entry.client)
                return (replies, rest, dispatcher.isParked(client: entry.client))
            }
            // The job's writes reach the append-only file before its replies leave.
            dispatcher.appendOnly.flush(dispatcher.databases.feed)
            try? replyLoop.post { deliver(results) }
            // After the replies: a subscription they confirm goes out first.
            dispatcher.flushPushes()
        }
    }

    /// The core's own thread (`--io-threads 0`): executes `batch` of client
    /// `client` at once and returns what ``submit(_:replyOn:_:)`` would
    /// deliver for it. No post, no hop, no closure.
    /// The replies are written into `replyBuffer`, which it takes (see
    /// ``Dispatcher/execute(_:client:replyBuffer:)``).
    public func executeHere(
        _ batch: RequestBatch, from client: Int, replyBuffer: inout [UInt8]
    ) -> (Replies, rest: RequestBatch?, parked: Bool) {
        dispatcher.withValue { dispatcher in
            let (replies, rest) = dispatcher.execute(batch, client: client, replyBuffer: &replyBuffer)
            dispatcher.appendOnly.flush(dispatcher.databases.feed)
            // Posted, even to this loop: they are written after these replies.
            dispatcher.flushPushes()
            return (replies, rest, dispatcher.isParked(client: client))
        }
    }

    /// Any thread: starts the core's ticks on the core loop: active
    /// expiry, the idle clients' check while `timeout` is set, and the
    /// save points' and the append-only file's checks once the server
    /// turns them on (see ServerCron).
    /// - Throws: ``EventLoopError/shutDown`` when the core has stopped.
    public func startCron() throws {
        let dispatcher = self.dispatcher
        try dispatcher.post { ServerCron.start($0, through: dispatcher) }
    }

    /// Any thread: no more ticks, so none of the checks above either
    /// (graceful shutdown).
    public func stopCron() {
        try? dispatcher.post { $0.cron.stop() }
    }

    /// Any thread: a connection was accepted. Posted before its first
    /// batch, so the core knows the client when the batch arrives; on the
    /// core's own thread it registers at once, since that batch will not
    /// go through the mailbox.
    public func connect(_ info: ClientInfo) throws {
        if loop.inLoop {
            dispatcher.withValue { $0.clientConnected(info) }
        } else {
            try dispatcher.post { $0.clientConnected(info) }
        }
    }

    /// Any thread: a connection closed; its session and WATCHes end.
    public func disconnect(_ id: Int) {
        if loop.inLoop {
            dispatcher.withValue { $0.clientDisconnected(id: id) }
        } else {
            try? dispatcher.post { $0.clientDisconnected(id: id) }
        }
    }
}
