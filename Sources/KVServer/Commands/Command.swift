// Command.swift: one row of the command table, as data: name, arity
// (Redis's convention: N exactly, -N at least N, the name included), where
// its keys are, the flags that decide how it passes the session's gates,
// and its handler. Adding a command touches one row and one function.

/// Where a command's key arguments are, as its row records them (COMMAND
/// answers from Redis's own table instead: CommandDocs).
enum KeySpec {
    /// No keys.
    case none
    /// The first argument.
    case one
    /// Every argument.
    case all
    /// Every other argument from the first: key, value, key, value.
    case pairs
}

/// How a command passes the session's gates.
struct CommandFlags: OptionSet, Sendable {
    let rawValue: Int
    /// Runs before AUTH (AUTH, HELLO, QUIT, RESET).
    static let noAuth = CommandFlags(rawValue: 1)
    /// Runs at once inside MULTI instead of being queued (MULTI, EXEC,
    /// DISCARD, WATCH, QUIT, RESET).
    static let transactionControl = CommandFlags(rawValue: 2)
    /// Never in SLOWLOG (EXEC: the commands it ran are logged instead).
    static let skipSlowlog = CommandFlags(rawValue: 4)
    /// Refused inside MULTI (Redis's `no-multi`: SAVE, SHUTDOWN).
    static let noMulti = CommandFlags(rawValue: 8)
}

/// One row of the command table.
struct Command: Sendable {
    /// What runs the command: a keyspace command sees only the selected
    /// database; a session command sees the dispatcher (the databases, the
    /// sessions, the statistics and INFO it routes to) and the client's session.
    enum Handler {
        case keyspace(@Sendable (Keyspace, Request, inout ReplyWriter) -> Void)
        case session(@Sendable (Dispatcher, ClientSession, Request, inout ReplyWriter) -> Void)
    }

    let name: String
    let arity: Int
    let keys: KeySpec
    let flags: CommandFlags
    let handler: Handler
    /// The row's position in the table: its latency histogram's index (set
    /// once, by `Dispatcher.rows`).
    var id = 0
    /// Its lookups are reads by default: it is not a write command
    /// (Storage/KeyReads.swift). Set with `id`, in the table's rows.
    var onlyReads = false

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
