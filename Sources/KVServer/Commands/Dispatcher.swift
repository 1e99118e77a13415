// Dispatcher.swift: from a request to a handler. Owns the command table,
// the arity check, where each command's keys are, the counters, and the
// commands that describe the server (INFO, COMMAND). It owns the 16
// databases and the client sessions too, and lives on the core loop with
// them: every method runs on that loop's thread. Before a request reaches
// its handler it passes the session's gates, in Redis's order: the command
// exists, its arity fits, the client is authenticated, and inside MULTI it
// is queued instead of run.
import MainLoop
import Synchronization

/// Where a command's key arguments are (COMMAND's first key, last key, step).
enum KeySpec {
    /// No keys.
    case none
    /// The first argument.
    case one
    /// Every argument.
    case all
    /// Every other argument from the first: key, value, key, value.
    case pairs

    /// Redis's (first, last, step) triple.
    var triple: (first: Int, last: Int, step: Int) {
        switch self {
        case .none: (0, 0, 0)
        case .one: (1, 1, 1)
        case .all: (1, -1, 1)
        case .pairs: (1, -1, 2)
        }
    }
}

/// How a command passes the session's gates.
struct CommandFlags: OptionSet, Sendable {
    let rawValue: Int
    /// Runs before AUTH (AUTH, HELLO, QUIT, RESET).
    static let noAuth = CommandFlags(rawValue: 1)
    /// Runs at once inside MULTI instead of being queued (MULTI, EXEC,
    /// DISCARD, WATCH, QUIT, RESET).
    static let transactionControl = CommandFlags(rawValue: 2)
}

/// One row of the command table.
struct Command: Sendable {
    /// What runs the command: a keyspace command sees only the selected
    /// database; a session command sees the dispatcher (its databases,
    /// counters, table) and the client's session.
    enum Handler {
        case keyspace(@Sendable (Keyspace, Request, inout ReplyWriter) -> Void)
        case session(@Sendable (Dispatcher, ClientSession, Request, inout ReplyWriter) -> Void)
    }

    let name: String
    let arity: Int
    let keys: KeySpec
    let flags: CommandFlags
    let handler: Handler
    /// The row's position in the table: its latency histogram's index.
    fileprivate(set) var id = 0

    init(
        _ name: String, arity: Int, keys: KeySpec,
        _ handler: @escaping @Sendable (Keyspace, Request, inout ReplyWriter) -> Void
    ) {
        self.init(name, arity: arity, keys: keys, handler: .keyspace(handler))
    }

    init(
        _ name: String, arity: Int, keys: KeySpec, flags: CommandFlags = [],
        session handler: @escaping @Sendable (Dispatcher, ClientSession, Request, inout ReplyWriter) -> Void
    ) {
        self.init(name, arity: arity, keys: keys, flags: flags, handler: .session(handler))
    }

    init(_ name: String, arity: Int, keys: KeySpec, flags: CommandFlags = [], handler: Handler) {
        self.name = name
        self.arity = arity
        self.keys = keys
        self.flags = flags
        self.handler = handler
    }

    /// True when `count` arguments (the name included) fit the arity.
    func accepts(_ count: Int) -> Bool {
        arity > 0 ? count == arity : count >= -arity
    }
}

/// The dispatcher's figures for other threads (the stats line), published
/// after every batch: two relaxed stores per batch, not per command.
public final class DispatcherCounters: Sendable {
    private let commands = Atomic<Int>(0)
    private let keys = Atomic<Int>(0)

    /// Requests executed, as of the last batch.
    public var commandsProcessed: Int { commands.load(ordering: .relaxed) }
    /// Keys in the keyspace, as of the last batch.
    public var keyCount: Int { keys.load(ordering: .relaxed) }

    func publish(commands: Int, keys: Int) {
        self.commands.store(commands, ordering: .relaxed)
        self.keys.store(keys, ordering: .relaxed)
    }
}

/// Runs requests against the databases it owns, for the clients it knows.
public final class Dispatcher {
    /// How many databases SELECT can choose from (Redis's default).
    public static let databaseCount = 16
    /// The time each command runs at, shared with the databases.
    let clock = CommandClock()
    /// The databases, by index.
    let databases: [Keyspace]
    /// Database 0, the one a new connection uses.
    public var keyspace: Keyspace { databases[0] }
    // `@exclusivity(unchecked)` on the fields every request touches: the
    // dispatcher runs on the core loop's thread only, with no nested access
    // to them (see Keyspace).
    /// Every connected client's session, by id.
    @exclusivity(unchecked) var sessions: [Int: ClientSession] = [:]
    /// Each command's run time, for INFO latencystats and LATENCY HISTOGRAM.
    let latencies = CommandLatencies(count: Dispatcher.rows.count)
    /// SLOWLOG: what is logged, and the entries, newest first.
    @exclusivity(unchecked) var slowlog = Slowlog()
    /// The password AUTH must give (`--requirepass`), if any.
    let password: [UInt8]?
    /// How many requests have been executed.
    @exclusivity(unchecked) public private(set) var commandsProcessed = 0
    /// The figures other threads may read.
    public let counters = DispatcherCounters()
    /// A slice of active expiry is queued on the core (see `Server.expire`).
    var expiryContinues = false
    /// The next expiry tick, and whether the ticks have been stopped
    /// (shutdown): see `Server.scheduleExpiry`.
    var expiryTick: Scheduled?
    var expiryStopped = false
    /// Turns the order in which expiry slices visit the databases.
    private var nextExpiryDatabase = 0
    /// INFO's sections that describe the server (not the keyspace), from
    /// whoever runs it.
    private let serverInfo: @Sendable () -> [(section: String, lines: [String])]

    /// Every command, once, in table order (`Command.id` is the position).
    static let rows: [Command] = {
        var rows =
            keyspaceCommands + [
                Command("info", arity: -1, keys: .none, handler: .session { $0.info($2, &$3) }),
                Command("command", arity: -1, keys: .none, handler: .session { $0.command($2, &$3) }),
            ] + stringCommands + keyCommands + sessionCommands + transactionCommands + observabilityCommands
        for index in rows.indices { rows[index].id = index }
        return rows
    }()

    /// Every command, by its name in any case.
    static let table = CommandTable(rows)

    /// A dispatcher over empty databases; `serverInfo` supplies INFO's
    /// server sections, and `password`, when set, must be given with AUTH
    /// (or HELLO's AUTH) before any other command.
    public init(
        password: String? = nil,
        serverInfo: @escaping @Sendable () -> [(section: String, lines: [String])] = { [] }
    ) {
        self.password = password.map { Array($0.utf8) }
        self.serverInfo = serverInfo
        self.databases = (0..<Dispatcher.databaseCount).map { [clock] _ in Keyspace(clock: clock) }
    }

    /// A connection was accepted: its session starts (database 0, RESP2).
    public func clientConnected(_ info: ClientInfo) {
        sessions[info.id] = ClientSession(info: info, authenticated: password == nil)
    }

    /// A connection closed: its session ends, and its WATCHes with it.
    public func clientDisconnected(id: Int) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        unwatchAll(session)
    }

    /// The session of client `id`; one is made for an id never announced
    /// (a batch run without a connection, as tests and tools do).
    private func session(_ id: Int) -> ClientSession {
        if let session = sessions[id] { return session }
        clientConnected(ClientInfo(id: id, address: "", localAddress: "", fd: -1, kill: {}))
        return sessions[id]!
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
        let session = session(client)
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
            if let command {
                latencies.record(now - previous, for: command)
                slowlog.note(request, took: now - previous, by: session)
            }
            previous = now
            executed += 1
            return out.byteCount < Dispatcher.replyBudget
        }
        counters.publish(commands: commandsProcessed, keys: databases.reduce(0) { $0 + $1.count })
        return (out.finish(), executed < batch.count ? batch.dropping(first: executed) : nil)
    }

    /// Runs one request; returns the command's `id` when its handler ran
    /// (not for a refusal, nor a command queued by MULTI).
    @discardableResult
    func execute(_ request: Request, for session: ClientSession, into out: inout ReplyWriter) -> Int? {
        guard !request.isEmpty else { return nil }
        commandsProcessed += 1
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

    /// True when some database holds keys with an expiry.
    var hasKeysWithExpiry: Bool { databases.contains { $0.expiresCount > 0 } }

    /// One slice of active expiry (and a table that emptied gives its
    /// memory back, `Keyspace.shrinkIfSparse`): the databases that hold keys with an
    /// expiry share the 2 ms budget equally, the first of them taking turns.
    /// True when some database stopped on its budget with expired keys
    /// still turning up.
    func expireCycle() -> Bool {
        for database in databases { database.shrinkIfSparse() }
        let volatile = databases.indices.filter { databases[$0].expiresCount > 0 }
        guard !volatile.isEmpty else { return false }
        let share = 2_000_000 / UInt64(volatile.count)
        var busy = false
        for turn in 0..<volatile.count {
            let index = volatile[(turn + nextExpiryDatabase) % volatile.count]
            if databases[index].expireCycle(budget: share) { busy = true }
        }
        nextExpiryDatabase += 1
        return busy
    }

    // MARK: - Commands about the server

    private func info(_ r: Request, _ out: inout ReplyWriter) {
        let wanted = Set(r.dropFirst().map { String(decoding: lowercased($0), as: UTF8.self) })
        let everything =
            wanted.isEmpty || wanted.contains("all") || wanted.contains("everything") || wanted.contains("default")
        var sections = serverInfo()
        sections.append((section: "Latencystats", lines: latencyStatsLines()))
        sections.append(
            (
                section: "Stats",
                lines: [
                    "total_commands_processed:\(commandsProcessed)",
                    "expired_keys:\(databases.reduce(0) { $0 + $1.expiredKeys })",
                    "reclaimed_buffers:\(Reclaimer.reclaimed)",
                ]
            ))
        sections.append(
            (
                section: "Keyspace",
                lines: databases.enumerated().compactMap { index, db in
                    db.count == 0 ? nil : "db\(index):keys=\(db.count),expires=\(db.expiresCount),avg_ttl=0"
                }
            ))
        var merged: [(section: String, lines: [String])] = []
        for section in sections {
            if let index = merged.firstIndex(where: { $0.section == section.section }) {
                merged[index].lines += section.lines
            } else {
                merged.append(section)
            }
        }
        var text = ""
        // Redis leaves latencystats out of the default INFO, like its other
        // optional sections: asked for by name, or with ALL/EVERYTHING.
        let defaults = wanted.isEmpty || wanted.contains("default")
        for section in merged
        where (everything && !(defaults && section.section == "Latencystats"))
            || wanted.contains(section.section.lowercased())
        {
            if !text.isEmpty { text += "\r\n" }
            text += "# \(section.section)\r\n"
            for line in section.lines { text += line + "\r\n" }
        }
        out.verbatim(text)
    }

    private func command(_ r: Request, _ out: inout ReplyWriter) {
        func describe(_ command: Command) {
            // name, arity, flags, first key, last key, step (Redis 2.8's six fields)
            out.arrayHeader(6)
            out.bulk(command.name)
            out.integer(command.arity)
            out.setHeader(0)
            let keys = command.keys.triple
            out.integer(keys.first)
            out.integer(keys.last)
            out.integer(keys.step)
        }
        let sorted = Dispatcher.rows.sorted { $0.name < $1.name }
        guard r.count > 1 else {
            out.arrayHeader(sorted.count)
            sorted.forEach(describe)
            return
        }
        if equalsIgnoringCase(r[1], "count") && r.count == 2 {
            out.integer(sorted.count)
        } else if equalsIgnoringCase(r[1], "docs") {
            out.arrayHeader(0)  // no documentation: clients fall back to their own
        } else if equalsIgnoringCase(r[1], "info") {
            out.arrayHeader(r.count - 2)
            for name in r.dropFirst(2) {
                if let command = Dispatcher.command(named: name) { describe(command) } else { out.null() }
            }
        } else {
            out.error(bytes: Array("ERR unknown subcommand '".utf8) + r[1] + Array("'. Try COMMAND HELP.".utf8))
        }
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

/// One latency histogram per command row (`Command.id`), in storage of its
/// own: recording one costs no exclusivity check and no copy-on-write test
/// (it runs once per command). Core loop only, with the dispatcher.
final class CommandLatencies {
    private let histograms: UnsafeMutablePointer<LatencyHistogram>
    let count: Int

    init(count: Int) {
        self.count = count
        histograms = .allocate(capacity: count)
        histograms.initialize(repeating: LatencyHistogram(), count: count)
    }

    deinit {
        histograms.deinitialize(count: count)
        histograms.deallocate()
    }

    @inline(__always)
    func record(_ nanoseconds: UInt64, for command: Int) {
        histograms[command].record(nanoseconds)
    }

    subscript(command: Int) -> LatencyHistogram { histograms[command] }
}
