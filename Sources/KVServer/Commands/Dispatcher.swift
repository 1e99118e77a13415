// Dispatcher.swift: from a request to a handler. Owns the command table
// and routes each request through it, on the core loop's thread. Before a
// request reaches its handler it passes the session's gates, in Redis's
// order: the command exists, its arity fits, the client is authenticated,
// and inside MULTI it is queued instead of run. What the handlers work on
// is not the dispatcher's own: the databases (Storage/Databases.swift), the
// sessions (Sessions/ClientSessions.swift), the statistics and INFO
// (Operations/); it hands them to the handlers.
import MainLoop

/// Routes requests to their commands, for the clients it knows.
public final class Dispatcher {
    /// The databases the commands run against, with their clock and active expiry.
    let databases = Databases()
    /// The databases' reads (`databases.reads`), held here for the one
    /// store per command that says what its lookups are.
    private let reads: KeyReads
    /// Every connected client's session, and the password they must give.
    let sessions: ClientSessions
    /// What the commands cost (INFO, LATENCY, SLOWLOG, the stats line).
    let stats = CommandStats()
    /// INFO's sources beyond the databases and the statistics.
    let info: Info
    /// The Lua interpreter and script cache behind EVAL.
    let scripts = ScriptEngine()
    /// The clients parked by a blocking command (BLPOP and friends).
    let blocked = BlockedClients()
    /// The pub/sub subscriptions and the MONITOR clients, and the pushes
    /// of the job under way (see `flushPushes`).
    let pubsub = PubSub()
    /// The settings CONFIG SET changes that the I/O loops read too.
    let settings: LiveSettings
    /// Redis's `timeout`: idle clients are closed after this many seconds (0: never).
    private(set) var idleTimeout = 0
    /// Redis's replica output buffer limit: shown and kept, kvd has no replicas.
    var replicaOutputLimit = ServerOptions.OutputBufferLimit(hard: 256 << 20, soft: 64 << 20, softSeconds: 60)
    /// CONFIG RESETSTAT's part outside the dispatcher (the server's connection counts).
    let resetServerStats: @Sendable () -> Void
    /// The core's periodic work: active expiry, the save points, idle clients.
    let cron = ServerCron()
    /// CLIENT PAUSE's pause, and the clients it holds.
    var pause = ClientPause()
    /// MEMORY STATS's figures over time (startup, peak).
    let memory = MemoryFigures()
    /// Snapshots: settings, INFO's counters, BGSAVE (Persistence/).
    let persistence = Persistence()
    /// The append-only file (Persistence/AppendOnlyFile.swift), when on.
    let appendOnly = AppendOnlyFile()
    /// Deletes keys while memory is over maxmemory (Dispatcher+Memory.swift);
    /// a test gives it a count of memory of its own.
    var evictor = Evictor()
    /// Memory was over maxmemory, nothing left to evict, as the last
    /// command to pass the gate started: a script it runs reads it
    /// (Redis's `pre_command_oom_state`).
    var scriptOutOfMemory = false
    /// How deep the command under way is nested (EXEC's and a script's
    /// commands run inside it): its effects are committed at depth 0.
    var effectDepth = 0
    /// What SHUTDOWN calls to stop the server (nil: SHUTDOWN fails, as
    /// with a dispatcher no server runs). Set before the loop owns it.
    var shutdownRequested: (() -> Void)?
    /// True while EXEC runs its queue: nothing blocks inside a transaction.
    /// Unchecked as the session's fields are: read by every request, on the
    /// core's thread only.
    @exclusivity(unchecked) var inExec = false
    /// The batch being run and the number of the request running, for
    /// CLIENT LIST's `qbuf` (nil between batches: a shared parser buffer
    /// must not be held past its batch).
    @exclusivity(unchecked) private(set) var runningBatch: RequestBatch?
    @exclusivity(unchecked) private(set) var runningIndex = 0
    /// This dispatcher on its loop, for the timer of the parked clients'
    /// deadlines (set by CoreHop; nil for a dispatcher without a loop,
    /// whose parked clients wait without a deadline). It holds the
    /// dispatcher: a dispatcher lives as long as its server.
    var owner: LoopBound<Dispatcher>?
    /// The clients' output buffer hard limit now (`ReplyWriter.limit`),
    /// past which a reply that could grow without bound stops being
    /// written (the connection closes that client anyway).
    var replyLimit: Int { Dispatcher.writerLimit(settings.outputHard.load(ordering: .relaxed)) }

    /// The hard limit of `session`'s class now: pubsub's for a client with
    /// subscriptions (RESP3 ones too), as Redis's getClientType and the
    /// connection's own check choose it.
    func replyLimit(for session: ClientSession) -> Int {
        guard session.isSubscribed else { return replyLimit }
        return Dispatcher.writerLimit(settings.pubsubHard.load(ordering: .relaxed))
    }

    /// A hard limit as a writer's limit: 0 means none.
    private static func writerLimit(_ hard: Int) -> Int { hard > 0 ? hard : .max }

    /// Every command, once, in table order (`Command.id` is the position).
    static let rows: [Command] = {
        var rows =
            keyspaceCommands + configCommands + infoCommands + introspectionCommands + stringCommands + keyCommands
            + sessionCommands + transactionCommands + observabilityCommands + scriptingCommands
            + hashCommands + setCommands + listCommands + sortedSetCommands + blockingCommands + memoryCommands
            + pubSubCommands + monitorCommands + geoCommands + bitOperationCommands + bitfieldCommands
            + persistenceCommands + sortCommands + dumpCommands + hyperLogLogCommands
        for index in rows.indices {
            rows[index].id = index
            rows[index].onlyReads = !writeCommands.contains(rows[index].name)
        }
        return rows
    }()

    /// By `Command.id`: the commands MISCONF refuses (the write commands and PING).
    static let refusedOnDiskError = rows.map { writeCommands.contains($0.name) || $0.name == "ping" }

    /// Every command, by its name in any case.
    static let table = CommandTable(rows)

    /// The rows again, in memory of their own that lives as long as the
    /// process and is never written after this: a request reads its row
    /// in place. Copying the row out (`rows[id]`) retained and released its
    /// name and its handler's context on every request.
    nonisolated(unsafe) private static let rowsInPlace: UnsafePointer<Command> = {
        let storage = UnsafeMutablePointer<Command>.allocate(capacity: rows.count)
        storage.initialize(from: rows, count: rows.count)
        return UnsafePointer(storage)
    }()

    /// Which rows are Redis containers (their subcommands are named apart).
    static let containerRows = rows.map { CommandStats.containers.contains($0.name) }

    /// A dispatcher over empty databases; `serverInfo` supplies INFO's
    /// server sections, and `password`, when set, must be given with AUTH
    /// (or HELLO's AUTH) before any other command.
    /// `settings` are those shared with the I/O loops; `resetServerStats`
    /// zeroes the server's own figures (CONFIG RESETSTAT).
    public init(
        password: String? = nil, settings: LiveSettings = LiveSettings(ServerOptions()),
        serverInfo: @escaping @Sendable () -> [(section: String, lines: [String])] = { [] },
        resetServerStats: @escaping @Sendable () -> Void = {}
    ) {
        reads = databases.reads
        sessions = ClientSessions(password: password.map { Array($0.utf8) })
        info = Info(serverSections: serverInfo)
        self.settings = settings
        self.resetServerStats = resetServerStats
        stats.slowlog.threshold = settings.options.slowlogSlowerThan
        stats.slowlog.maxLength = settings.options.slowlogMaxLength
        databases.memory.maxmemory = settings.options.maxmemory
        databases.memory.policy = EvictionPolicy(name: Array(settings.options.maxmemoryPolicy.utf8)) ?? .noEviction
        databases.events.classes =
            KeyspaceEventClasses(letters: Array(settings.options.notifyKeyspaceEvents.utf8)) ?? []
        databases.events.publish = { [pubsub] channel, message in pubsub.publish(channel, message) }
    }

    /// Redis's `timeout`: from now on, a client idle for `seconds` is
    /// closed, checked once a second by the core's ticks (ServerCron.swift).
    func setIdleTimeout(seconds: Int) {
        idleTimeout = seconds
    }

    /// Core loop: closes the clients idle for longer than `idleTimeout`,
    /// except those Redis's `clientsCronHandleTimeout` spares: a client
    /// parked by a blocking command, a subscriber (it only listens) and a
    /// MONITOR client (a replica's flag in Redis).
    func closeIdleClients() {
        let now = monotonicMilliseconds()
        for session in sessions.all
        where now - session.lastCommandAt > Int64(idleTimeout) * 1000 && !blocked.isParked(session.id)
            && !session.isSubscribed && !session.monitoring
        {
            session.info.kill()
        }
    }

    /// A connection was accepted: its session starts (database 0, RESP2).
    public func clientConnected(_ info: ClientInfo) {
        sessions.open(info)
    }

    /// A connection closed: its session ends, and its WATCHes with it.
    public func clientDisconnected(id: Int) {
        guard let session = sessions.close(id: id) else { return }
        pause.held.removeAll { $0 == id }
        unwatchAll(session)
        pubsub.removeAll(of: session)
        if blocked.unpark(id, in: databases) != nil { armBlockingTimer() }
    }

    /// True when client `client` is parked by a blocking command: its
    /// connection waits for the reply (it comes through `ClientInfo.resume`)
    /// and submits nothing meanwhile.
    public func isParked(client: Int) -> Bool {
        blocked.isParked(client) || (pause.active && pause.held.contains(client))
    }

    /// Sends the pushes gathered since the last call (pub/sub messages,
    /// MONITOR lines) to their clients' loops, one post per loop. Called at
    /// the end of each core job that ran batches, after the job's replies
    /// were posted, so a client's subscription is confirmed before its
    /// first message arrives.
    public func flushPushes() {
        pubsub.outbox.flush()
    }

    /// The row for a command name in any case. A name longer than every
    /// command's is refused before it is hashed or copied: a hostile 100 MB
    /// name costs the core nothing.
    static func command(named name: [UInt8]) -> Command? {
        name.withUnsafeBytes { command(named: $0) }
    }

    /// The row for a command name in any case, read in place.
    static func command(named name: UnsafeRawBufferPointer) -> Command? {
        table.row(named: name).map { rows[$0] }
    }

    /// How many reply bytes one batch may produce before the rest of it is
    /// handed back: a client's pipeline of large replies costs the core one
    /// slice at a time, and the client's buffers stay bounded.
    static let replyBudget = 1024 * 1024

    /// Runs the requests of client `client` in order, and returns their
    /// replies and the requests it did not run (nil when it ran them all):
    /// it stops once the replies pass `replyBudget` bytes.
    public func execute(_ batch: RequestBatch, client: Int = 0) -> (Replies, rest: RequestBatch?) {
        var none: [UInt8] = []
        return execute(batch, client: client, replyBuffer: &none)
    }

    /// Like `execute(_:client:)`, writing the replies into `replyBuffer`,
    /// which it takes (leaving it empty): the connection's buffer from its
    /// batch before, once sent, so a batch of short replies allocates nothing.
    public func execute(
        _ batch: RequestBatch, client: Int = 0, replyBuffer: inout [UInt8]
    ) -> (Replies, rest: RequestBatch?) {
        let session = sessions.session(client)
        if let changes = batch.transactionChanges { apply(changes, to: session) }
        let clock = databases.clock
        var out = ReplyWriter(reusing: &replyBuffer)
        out.resp3 = session.resp3
        out.limit = replyLimit(for: session)
        var executed = 0
        // One clock read per command: each command's time runs from the end
        // of the one before (Redis reads the clock around every call too).
        // Its Unix time, which expiry compares with, comes from that same
        // read: the wall clock is read once per batch.
        var previous = monotonicNanoseconds()
        // The same monotonic clock, in milliseconds: no read of its own.
        session.lastCommandAt = Int64(previous / 1_000_000)
        // Pushes count against the batch's budget too: a publisher's batch
        // that fans out a lot hands the rest back, as a large reply does.
        let pushedBefore = pubsub.outbox.byteCount
        let (batchStart, batchUnix) = (previous, unixMilliseconds())
        runningBatch = batch
        defer {
            clock.fixed = nil
            runningBatch = nil
        }
        batch.forEach { request in
            // A paused client's batch stops before the command the pause
            // holds; it goes on from there when the pause ends.
            if pause.active && pauseHolds(request, of: session) { return false }
            clock.fixed = batchUnix + Int64((previous - batchStart) / 1_000_000)
            runningIndex = executed
            let errors = out.errorCount
            let command = executeSilencing(request, for: session, into: &out)
            var now = monotonicNanoseconds()
            // A parked command is timed when it is served (see serve).
            if let command, blocked.count == 0 || !blocked.isParked(session.id) {
                stats.record(command, request, took: now - previous, failed: out.errorCount > errors, by: session)
            }
            stats.takeErrors(&out)
            executed += 1
            // Keys that got a list while somebody waited are served after
            // the command that did it (after EXEC for a transaction), on
            // the clock of neither command.
            if blocked.count > 0 {
                serveReadyKeys()
                now = monotonicNanoseconds()
            }
            previous = now
            // A parked client's batch stops at its blocking command; the
            // requests after it go back to the connection.
            if blocked.count > 0 && blocked.isParked(session.id) { return false }
            // A reply stopped at the output limit closes the client: what
            // it sent after that request is not run, as in Redis.
            if out.stoppedAtLimit { return false }
            return out.byteCount + pubsub.outbox.byteCount - pushedBefore < Dispatcher.replyBudget
        }
        stats.counters.publish(commands: stats.commandsProcessed, keys: databases.keyCount)
        var replies = out.finish()
        replies.inTransaction = session.transaction != nil
        return (replies, executed < batch.count ? batch.dropping(first: executed) : nil)
    }

    /// Runs one request; returns the command's `id` when its handler ran
    /// (not for a refusal, nor a command queued by MULTI).
    @discardableResult
    func execute(_ request: Request, for session: ClientSession, into out: inout ReplyWriter) -> Int? {
        guard !request.isEmpty else { return nil }
        stats.countRequest()
        // A command or subcommand Redis's table lacks leaves CLIENT LIST's
        // cmd=NULL, as Redis's lookup leaves its lastcmd.
        guard let id = Dispatcher.table.row(named: request.raw(0)) else {
            session.transaction?.refused = true
            session.lastCommand = nil
            out.error(bytes: unknownCommandMessage(request))
            return nil
        }
        let row = Dispatcher.rowsInPlace + id
        // A subcommand Redis's table lacks is refused as an unknown command
        // is, before anything else (CLIENT NOSUCH inside MULTI is not queued).
        let isSubcommand = Dispatcher.containerRows[id] && request.count > 1
        let subcommandRefusal = isSubcommand ? CommandDocs.subcommandRefusal(request) : nil
        guard subcommandRefusal != .unknown else {
            session.transaction?.refused = true
            session.lastCommand = nil
            out.unknownSubcommand(request, of: row.pointee.name.uppercased())
            return nil
        }
        session.lastCommand = id
        // CLIENT LIST's cmd names a container's subcommand (client|list).
        session.lastSubcommand = isSubcommand ? lowercased(Array(request.raw(1))) : nil
        guard row.pointee.accepts(request.count) else {
            stats.recordRejection(id)
            // EXEC's own arity error aborts the transaction (EXECABORT).
            reject(row.pointee, request, "wrong number of arguments for '\(row.pointee.name)' command", session, &out)
            return nil
        }
        // A subcommand's arity, from Redis's table, as Redis checks it: here,
        // before authentication and MULTI (CONFIG HELP x is refused, not
        // queued). Subcommands the table lacks are the handler's to refuse.
        if case .wrongArity(let name) = subcommandRefusal {
            stats.recordRejection(id)
            reject(row.pointee, request, "wrong number of arguments for '\(name)' command", session, &out)
            return nil
        }
        guard session.authenticated || row.pointee.flags.contains(.noAuth) else {
            stats.recordRejection(id)
            if row.pointee.name == "exec" {
                abortExec(request, "NOAUTH Authentication required.", session, &out)
            } else {
                session.transaction?.refused = true
                out.error("NOAUTH Authentication required.")
            }
            return nil
        }
        // In Redis's order: no-multi, maxmemory, a failed BGSAVE (MISCONF), then the
        // monitor and subscribed-context checks, as a request arrives (not
        // inside EXEC).
        if session.transaction != nil && row.pointee.flags.contains(.noMulti) {
            session.transaction!.refused = true
            out.error("ERR Command not allowed inside a transaction")
            return nil
        }
        if databases.memory.maxmemory > 0 && session.id != Dispatcher.replayingClient
            && refusedForMemory(id, request, session, &out)
        {
            return nil
        }
        // A failed BGSAVE or append-only write stops writes (and PING), as
        // Redis's MISCONF does; an EXEC whose queue writes is aborted.
        if persistence.refusesWrites || appendOnly.refusesWrites,
            row.pointee.name == "exec" ? queuesWrites(session) : Dispatcher.refusedOnDiskError[id]
        {
            let error = persistence.refusesWrites ? Persistence.misconfError : appendOnly.misconfError
            if row.pointee.name == "exec" {
                abortExec(request, error, session, &out)
            } else {
                session.transaction?.refused = true
                out.error(error)
            }
            return nil
        }
        if session.monitoring && !inExec && Dispatcher.touchesKeyspace(row.pointee, request) {
            reject(row.pointee, request, "Replica can't interact with the keyspace", session, &out)
            return nil
        }
        if !session.resp3 && session.isSubscribed && !inExec && !Dispatcher.allowedWhileSubscribed[id] {
            reject(
                row.pointee, request,
                "Can't execute '\(fullName(row.pointee, request))': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                session, &out)
            return nil
        }
        if session.transaction != nil && !row.pointee.flags.contains(.transactionControl) {
            session.transaction!.queued.append(request)
            out.simple("QUEUED")
            return nil
        }
        let monitored = !pubsub.monitors.isEmpty
        if monitored { feedMonitors(request, command: id, session: session, before: true) }
        if databases.feed.isOn {
            loggingEffects(row.pointee, request, session) { run(row, request, session, &out) }
        } else {
            run(row, request, session, &out)
        }
        if monitored || !pubsub.monitors.isEmpty {
            feedMonitors(request, command: id, session: session, before: false)
        }
        return id
    }

    @inline(__always)
    private func run(
        _ command: UnsafePointer<Command>, _ request: Request, _ session: ClientSession, _ out: inout ReplyWriter
    ) {
        reads.commandReads = command.pointee.onlyReads
        switch command.pointee.handler {
        case .keyspace(let handler): handler(databases[session.database], request, &out)
        case .session(let handler): handler(self, session, request, &out)
        }
    }

    /// Redis's rejectCommand: the error, and a transaction being queued
    /// fails at EXEC; a refused EXEC itself aborts the transaction.
    private func reject(
        _ command: Command, _ request: Request, _ message: String, _ session: ClientSession,
        _ out: inout ReplyWriter
    ) {
        guard command.name == "exec" else {
            session.transaction?.refused = true
            return out.error("ERR " + message)
        }
        abortExec(request, message, session, &out)
    }

    /// True when `session`'s transaction has a write command queued.
    private func queuesWrites(_ session: ClientSession) -> Bool {
        var writes = false
        session.transaction?.queued.forEach { queued in
            writes =
                Dispatcher.table.row(named: queued.raw(0)).map { writeCommands.contains(Dispatcher.rows[$0].name) }
                ?? false
            return !writes
        }
        return writes
    }

    /// True when Redis's lookup and arity checks pass `request` of
    /// `command`: its count, and a container's subcommand and its count.
    /// (A request they refuse is answered at once, even by a pause.)
    static func isWellFormed(_ request: Request, _ command: Command) -> Bool {
        command.accepts(request.count)
            && !(containerRows[command.id] && request.count > 1 && CommandDocs.subcommandRefusal(request) != nil)
    }

    /// Redis's execCommandAbort: a refused EXEC discards the transaction,
    /// says why (`reason`: a formatted error without its ERR, a shared one
    /// with its code, as Redis passes them), and is shown to the monitors
    /// (as a run EXEC is).
    func abortExec(_ request: Request, _ reason: String, _ session: ClientSession, _ out: inout ReplyWriter) {
        session.transaction = nil
        unwatchAll(session)
        out.error("EXECABORT Transaction discarded because of: " + reason)
        if !pubsub.monitors.isEmpty { pubsub.feedMonitors(monitorLine(request, session: session)) }
    }

    /// What a RESP2 client with subscriptions may still send, by `Command.id`.
    static let allowedWhileSubscribed: [Bool] = rows.map {
        [
            "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit",
            "reset",
        ]
        .contains($0.name)
    }

    /// Redis's name for what a request runs: `client|list` for a container's
    /// subcommand, the command's own name otherwise.
    private func fullName(_ command: Command, _ request: Request) -> String {
        let containers: Set<String> = [
            "client", "config", "command", "object", "script", "memory", "slowlog", "latency", "pubsub", "function",
            "acl", "cluster", "module", "xinfo", "xgroup",
        ]
        guard containers.contains(command.name), request.count > 1 else { return command.name }
        return command.name + "|" + String(decoding: lowercased(request[1]), as: UTF8.self)
    }

    /// Runs one request of a batch, honouring CLIENT REPLY: a silenced
    /// command runs into a scratch writer whose output is dropped, except a
    /// subscription command's, which is all pushes (Redis sends pushes
    /// whatever the reply mode), and the answer of what turns replies on.
    private func executeSilencing(
        _ request: Request, for session: ClientSession, into out: inout ReplyWriter
    ) -> Int? {
        switch session.replyMode {
        case .on:
            return execute(request, for: session, into: &out)
        case .skipNext:
            session.replyMode = .on  // the command may set it again (another SKIP)
        case .off:
            break
        }
        var scratch = ReplyWriter()
        scratch.resp3 = out.resp3
        // Bounded like a reply that is sent: a silenced SRANDMEMBER of
        // billions stops at the limit (the client is not closed for it:
        // Redis does not close a client whose replies are off).
        scratch.limit = out.limit
        let command = execute(request, for: session, into: &scratch)
        out.countErrors(of: scratch)
        // A refused command (nil) did not turn anything on.
        if let command, turnsRepliesOn(request) || Dispatcher.subscriptionCommands[command] {
            out.raw(scratch.finish().chunks.flatMap { $0 })
        }
        return command
    }

    /// The commands whose replies are all pushes, by `Command.id`.
    static let subscriptionCommands: [Bool] = rows.map {
        ["subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe"].contains($0.name)
    }

    /// CLIENT REPLY ON and RESET turn the replies on before they answer.
    private func turnsRepliesOn(_ request: Request) -> Bool {
        if request.count == 1 && equalsIgnoringCase(request.raw(0), "reset") { return true }
        return request.count == 3 && equalsIgnoringCase(request.raw(0), "client")
            && equalsIgnoringCase(request.raw(1), "reply") && equalsIgnoringCase(request.raw(2), "on")
    }
}

extension Dispatcher {
    /// CLIENT REPLY OFF or SKIP: the reply the command made after `mark` is dropped.
    /// Runs one request and records its figures on its own clock (a
    /// command EXEC runs, a parked command served): SLOWLOG and INFO see
    /// each command, not the one that ran it.
    func executeTimed(_ request: Request, for session: ClientSession, into out: inout ReplyWriter) {
        let (start, errors) = (monotonicNanoseconds(), out.errorCount)
        guard let command = execute(request, for: session, into: &out) else { return }
        let failed = out.errorCount > errors
        stats.record(command, request, took: monotonicNanoseconds() - start, failed: failed, by: session)
    }
}

func lowercased(_ bytes: [UInt8]) -> [UInt8] {
    bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
}

/// Redis's wording, including its 128-byte limits and the trailing space;
/// bytes, not a String, so binary arguments come back exactly.
/// Reads only those 128-byte prefixes (a 100 MB name is not copied).
func unknownCommandMessage(_ request: Request) -> [UInt8] {
    var arguments: [UInt8] = []
    for index in request.indices.dropFirst() where arguments.count < 128 {
        let room = 128 - arguments.count
        arguments.append(UInt8(ascii: "'"))
        arguments.append(contentsOf: ReplyWriter.quoted(request.raw(index).prefix(room)))
        arguments.append(contentsOf: [UInt8(ascii: "'"), UInt8(ascii: " ")])
    }
    return Array("ERR unknown command '".utf8) + ReplyWriter.quoted(request.raw(0).prefix(128))
        + Array("', with args beginning with: ".utf8) + arguments
}
