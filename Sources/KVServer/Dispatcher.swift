// Dispatcher.swift: from a request to a handler. Owns the command table,
// the arity check, where each command's keys are, the counters, and the
// commands that describe the server (INFO, COMMAND). It owns the keyspace
// too, and lives on the core loop with it: every method runs on that loop's
// thread.
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

/// One row of the command table.
struct Command: Sendable {
    /// What runs the command: a keyspace command sees only the keyspace; a
    /// server command sees the dispatcher (its counters, its table, INFO).
    enum Handler {
        case keyspace(@Sendable (Keyspace, Request, inout ReplyWriter) -> Void)
        case server(@Sendable (Dispatcher, Request, inout ReplyWriter) -> Void)
    }

    let name: String
    let arity: Int
    let keys: KeySpec
    let handler: Handler

    init(
        _ name: String, arity: Int, keys: KeySpec,
        _ handler: @escaping @Sendable (Keyspace, Request, inout ReplyWriter) -> Void
    ) {
        self.init(name, arity: arity, keys: keys, handler: .keyspace(handler))
    }

    init(_ name: String, arity: Int, keys: KeySpec, handler: Handler) {
        self.name = name
        self.arity = arity
        self.keys = keys
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

/// Runs requests against the keyspace it owns.
public final class Dispatcher {
    /// The store the commands work on.
    public let keyspace = Keyspace()
    /// How many requests have been executed.
    public private(set) var commandsProcessed = 0
    /// The figures other threads may read.
    public let counters = DispatcherCounters()
    /// A slice of active expiry is queued on the core (see `Server.expire`).
    var expiryContinues = false
    /// INFO's sections that describe the server (not the keyspace), from
    /// whoever runs it.
    private let serverInfo: @Sendable () -> [(section: String, lines: [String])]

    /// Every command, by name in lower case and in upper case: clients send
    /// either, so the common case costs no allocation.
    private static let table: [[UInt8]: Command] = {
        let rows =
            keyspaceCommands + [
                Command("info", arity: -1, keys: .none, handler: .server { $0.info($1, &$2) }),
                Command("command", arity: -1, keys: .none, handler: .server { $0.command($1, &$2) }),
            ]
        return Dictionary(
            uniqueKeysWithValues: rows.flatMap { row in
                [(Array(row.name.utf8), row), (Array(row.name.uppercased().utf8), row)]
            })
    }()

    /// A dispatcher over an empty keyspace; `serverInfo` supplies INFO's server sections.
    public init(serverInfo: @escaping @Sendable () -> [(section: String, lines: [String])] = { [] }) {
        self.serverInfo = serverInfo
    }

    /// The longest command name: a longer one is unknown without being hashed.
    private static let longestName = table.keys.map(\.count).max() ?? 0

    /// The row for a command name in any case. A name longer than every
    /// command's is refused before it is hashed or copied: a hostile 100 MB
    /// name costs the core nothing.
    static func command(named name: [UInt8]) -> Command? {
        guard name.count <= longestName else { return nil }
        return table[name] ?? table[lowercased(name)]
    }

    /// How many reply bytes one batch may produce before the rest of it is
    /// handed back: a client's pipeline of large replies costs the core one
    /// slice at a time, and the client's buffers stay bounded.
    static let replyBudget = 1024 * 1024

    /// Runs the requests in order, and returns their replies and the
    /// requests it did not run (nil when it ran them all): it stops once the
    /// replies pass `replyBudget` bytes.
    public func execute(_ batch: RequestBatch) -> (Replies, rest: RequestBatch?) {
        var out = ReplyWriter(expectedRequests: batch.count)
        var executed = 0
        batch.forEach { request in
            execute(request, into: &out)
            executed += 1
            return out.byteCount < Dispatcher.replyBudget
        }
        counters.publish(commands: commandsProcessed, keys: keyspace.count)
        return (out.finish(), executed < batch.count ? batch.dropping(first: executed) : nil)
    }

    func execute(_ request: Request, into out: inout ReplyWriter) {
        guard let first = request.first else { return }
        commandsProcessed += 1
        guard let command = Dispatcher.command(named: first) else {
            out.error(bytes: unknownCommandMessage(request))
            return
        }
        guard command.accepts(request.count) else {
            out.error("ERR wrong number of arguments for '\(command.name)' command")
            return
        }
        switch command.handler {
        case .keyspace(let handler): handler(keyspace, request, &out)
        case .server(let handler): handler(self, request, &out)
        }
    }

    // MARK: - Commands about the server

    private func info(_ r: Request, _ out: inout ReplyWriter) {
        let wanted = Set(r.dropFirst().map { String(decoding: lowercased($0), as: UTF8.self) })
        let everything =
            wanted.isEmpty || wanted.contains("all") || wanted.contains("everything") || wanted.contains("default")
        var sections = serverInfo()
        sections.append(
            (
                section: "Stats",
                lines: ["total_commands_processed:\(commandsProcessed)", "expired_keys:\(keyspace.expiredKeys)"]
            ))
        let count = keyspace.count
        sections.append(
            (
                section: "Keyspace",
                lines: count == 0 ? [] : ["db0:keys=\(count),expires=\(keyspace.expiresCount),avg_ttl=0"]
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
        for section in merged where everything || wanted.contains(section.section.lowercased()) {
            if !text.isEmpty { text += "\r\n" }
            text += "# \(section.section)\r\n"
            for line in section.lines { text += line + "\r\n" }
        }
        out.bulk(text)
    }

    private func command(_ r: Request, _ out: inout ReplyWriter) {
        func describe(_ command: Command) {
            // name, arity, flags, first key, last key, step (Redis 2.8's six fields)
            out.arrayHeader(6)
            out.bulk(command.name)
            out.integer(command.arity)
            out.arrayHeader(0)
            let keys = command.keys.triple
            out.integer(keys.first)
            out.integer(keys.last)
            out.integer(keys.step)
        }
        let sorted = Dispatcher.table.filter { $0.key.first.map { $0 >= 97 } ?? false }.values.sorted {
            $0.name < $1.name
        }
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
func unknownCommandMessage(_ request: Request) -> [UInt8] {
    var arguments: [UInt8] = []
    for argument in request.dropFirst() where arguments.count < 128 {
        let room = 128 - arguments.count
        arguments.append(UInt8(ascii: "'"))
        arguments.append(contentsOf: argument.prefix(room))
        arguments.append(contentsOf: [UInt8(ascii: "'"), UInt8(ascii: " ")])
    }
    return Array("ERR unknown command '".utf8) + request[0].prefix(128)
        + Array("', with args beginning with: ".utf8) + arguments
}
