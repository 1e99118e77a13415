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
    /// The settings CONFIG SET changes that the I/O loops read too.
    let settings: LiveSettings
    /// Redis's `timeout`: idle clients are closed after this many seconds (0: never).
    private(set) var idleTimeout = 0
    /// Redis's replica output buffer limit: shown and kept, kvd has no replicas.
    var replicaOutputLimit = ServerOptions.OutputBufferLimit(hard: 256 << 20, soft: 64 << 20, softSeconds: 60)
    /// CONFIG RESETSTAT's part outside the dispatcher (the server's connection counts).
    let resetServerStats: @Sendable () -> Void
    /// The idle-client check's timer, while `idleTimeout` is set.
    private var idleCheck: Scheduled?
    /// CLIENT PAUSE's pause, and the clients it holds.
    var pause = ClientPause()
    /// True while EXEC runs its queue: nothing blocks inside a transaction.
    var inExec = false
    /// This dispatcher on its loop, for the timer of the parked clients'
    /// deadlines (set by CoreHop; nil for a dispatcher without a loop,
    /// whose parked clients wait without a deadline). It holds the
    /// dispatcher: a dispatcher lives as long as its server.
    var owner: LoopBound<Dispatcher>?

    /// Every command, once, in table order (`Command.id` is the position).
    static let rows: [Command] = {
        var rows =
            keyspaceCommands + configCommands + infoCommands + introspectionCommands + stringCommands + keyCommands
            + sessionCommands + transactionCommands + observabilityCommands + scriptingCommands
            + hashCommands + setCommands + listCommands + sortedSetCommands + blockingCommands + memoryCommands
            + geoCommands + bitOperationCommands + bitfieldCommands
        for index in rows.indices { rows[index].id = index }
        return rows
    }()

    /// Every command, by its name in any case.
    static let table = CommandTable(rows)

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
        sessions = ClientSessions(password: password.map { Array($0.utf8) })
        info = Info(serverSections: serverInfo)
        self.settings = settings
        self.resetServerStats = resetServerStats
        stats.slowlog.threshold = settings.options.slowlogSlowerThan
        stats.slowlog.maxLength = settings.options.slowlogMaxLength
    }

    /// Redis's `timeout`: from now on, a client idle for `seconds` (not
    /// parked by a blocking command) is closed, checked once a second.
    func setIdleTimeout(seconds: Int) {
        idleTimeout = seconds
        idleCheck?.cancel()
        idleCheck = nil
        guard seconds > 0, let owner else { return }
        idleCheck = try? owner.loop.schedule(every: .seconds(1)) {
            owner.withValue { $0.closeIdleClients() }
        }
    }

    private func closeIdleClients() {
        let now = monotonicMilliseconds()
        for session in sessions.all
        where now - session.lastCommandAt > Int64(idleTimeout) * 1000 && !blocked.isParked(session.id) {
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
        if blocked.unpark(id, in: databases) != nil { armBlockingTimer() }
    }

    /// True when client `client` is parked by a blocking command: its
    /// connection waits for the reply (it comes through `ClientInfo.resume`)
    /// and submits nothing meanwhile.
    public func isParked(client: Int) -> Bool {
        blocked.isParked(client) || (pause.active && pause.held.contains(client))
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
        let clock = databases.clock
        var out = ReplyWriter(reusing: &replyBuffer)
        out.resp3 = session.resp3
        session.lastCommandAt = monotonicMilliseconds()
        var executed = 0
        // One clock read per command: each command's time runs from the end
        // of the one before (Redis reads the clock around every call too).
        // Its Unix time, which expiry compares with, comes from that same
        // read: the wall clock is read once per batch.
        var previous = monotonicNanoseconds()
        let (batchStart, batchUnix) = (previous, unixMilliseconds())
        defer { clock.fixed = nil }
        batch.forEach { request in
            // A paused client's batch stops before the command the pause
            // holds; it goes on from there when the pause ends.
            if pause.active && pauseHolds(request, of: session) { return false }
            clock.fixed = batchUnix + Int64((previous - batchStart) / 1_000_000)
            let (errors, mark) = (out.errorCount, out.byteCount)
            let command = execute(request, for: session, into: &out)
            var now = monotonicNanoseconds()
            if session.replyMode != .on { applyReplyMode(session, mark, &out) }
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
            return out.byteCount < Dispatcher.replyBudget
        }
        stats.counters.publish(commands: stats.commandsProcessed, keys: databases.keyCount)
        return (out.finish(), executed < batch.count ? batch.dropping(first: executed) : nil)
    }

    /// Runs one request; returns the command's `id` when its handler ran
    /// (not for a refusal, nor a command queued by MULTI).
    @discardableResult
    func execute(_ request: Request, for session: ClientSession, into out: inout ReplyWriter) -> Int? {
        guard !request.isEmpty else { return nil }
        stats.countRequest()
        guard let command = Dispatcher.command(named: request.raw(0)) else {
            session.transaction?.refused = true
            out.error(bytes: unknownCommandMessage(request))
            return nil
        }
        session.lastCommand = command.id
        // CLIENT LIST's cmd names a container's subcommand (client|list).
        session.lastSubcommand =
            Dispatcher.containerRows[command.id] && request.count > 1 ? lowercased(Array(request.raw(1))) : nil
        guard command.accepts(request.count) else {
            session.transaction?.refused = true
            stats.recordRejection(command.id)
            out.error("ERR wrong number of arguments for '\(command.name)' command")
            return nil
        }
        guard session.authenticated || command.flags.contains(.noAuth) else {
            session.transaction?.refused = true
            stats.recordRejection(command.id)
            out.error("NOAUTH Authentication required.")
            return nil
        }
        if session.transaction != nil && !command.flags.contains(.transactionControl) {
            session.transaction!.queued.append(request)
            out.simple("QUEUED")
            return nil
        }
        switch command.handler {
        case .keyspace(let handler): handler(databases[session.database], request, &out)
        case .session(let handler): handler(self, session, request, &out)
        }
        return command.id
    }
}

extension Dispatcher {
    /// CLIENT REPLY OFF or SKIP: the reply the command made after `mark` is dropped.
    private func applyReplyMode(_ session: ClientSession, _ mark: Int, _ out: inout ReplyWriter) {
        switch session.replyMode {
        case .on: return
        case .off: out.truncate(to: mark)
        case .skipNext: session.replyMode = .skip
        case .skip:
            out.truncate(to: mark)
            session.replyMode = .on
        }
    }

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
        arguments.append(contentsOf: request.raw(index).prefix(room))
        arguments.append(contentsOf: [UInt8(ascii: "'"), UInt8(ascii: " ")])
    }
    return Array("ERR unknown command '".utf8) + request.raw(0).prefix(128)
        + Array("', with args beginning with: ".utf8) + arguments
}
