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
    /// Snapshots: settings, INFO's counters, BGSAVE (Persistence/).
    let persistence = Persistence()
    /// What SHUTDOWN calls to stop the server (nil: SHUTDOWN fails, as
    /// with a dispatcher no server runs). Set before the loop owns it.
    var shutdownRequested: (() -> Void)?
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
            + persistenceCommands
        for index in rows.indices { rows[index].id = index }
        return rows
    }()

    /// By `Command.id`: the commands MISCONF refuses (the write commands and PING).
    static let refusedOnDiskError = rows.map { writeCommands.contains($0.name) || $0.name == "ping" }

    /// Every command, by its name in any case.
    static let table = CommandTable(rows)

    /// A dispatcher over empty databases; `serverInfo` supplies INFO's
    /// server sections, and `password`, when set, must be given with AUTH
    /// (or HELLO's AUTH) before any other command.
    public init(
        password: String? = nil,
        serverInfo: @escaping @Sendable () -> [(section: String, lines: [String])] = { [] }
    ) {
        sessions = ClientSessions(password: password.map { Array($0.utf8) })
        info = Info(serverSections: serverInfo)
    }

    /// A connection was accepted: its session starts (database 0, RESP2).
    public func clientConnected(_ info: ClientInfo) {
        sessions.open(info)
    }

    /// A connection closed: its session ends, and its WATCHes with it.
    public func clientDisconnected(id: Int) {
        guard let session = sessions.close(id: id) else { return }
        unwatchAll(session)
        if blocked.unpark(id, in: databases) != nil { armBlockingTimer() }
    }

    /// True when client `client` is parked by a blocking command: its
    /// connection waits for the reply (it comes through `ClientInfo.resume`)
    /// and submits nothing meanwhile.
    public func isParked(client: Int) -> Bool {
        blocked.isParked(client)
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
            clock.fixed = batchUnix + Int64((previous - batchStart) / 1_000_000)
            let command = execute(request, for: session, into: &out)
            let now = monotonicNanoseconds()
            if let command { stats.record(command, request, took: now - previous, by: session) }
            previous = now
            executed += 1
            // Keys that got a list while somebody waited are served after
            // the command that did it (after EXEC for a transaction).
            if blocked.count > 0 { serveReadyKeys() }
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
        guard command.accepts(request.count) else {
            session.transaction?.refused = true
            out.error("ERR wrong number of arguments for '\(command.name)' command")
            return nil
        }
        guard session.authenticated || command.flags.contains(.noAuth) else {
            session.transaction?.refused = true
            out.error("NOAUTH Authentication required.")
            return nil
        }
        // A failed BGSAVE stops writes (and PING), as Redis's MISCONF does.
        if persistence.refusesWrites && Dispatcher.refusedOnDiskError[command.id] {
            session.transaction?.refused = true
            out.error(Persistence.misconfError)
            return nil
        }
        if session.transaction != nil && command.flags.contains(.noMulti) {
            session.transaction!.refused = true
            out.error("ERR Command not allowed inside a transaction")
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
