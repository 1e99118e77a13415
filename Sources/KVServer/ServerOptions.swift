// ServerOptions.swift: what kvd is told on its command line, and how the
// command line is read.
import Glibc

/// What kvd is told on its command line.
public struct ServerOptions: Sendable {
    /// The addresses to listen on, in Redis's `bind` syntax: IPv4 or IPv6
    /// (`*` and `::*` for any), a leading `-` for one that is skipped when
    /// this host lacks it (`["127.0.0.1", "-::1"]`). Empty: no TCP at all
    /// (then `unixSocket` must be set).
    public var bind = ["127.0.0.1"]
    /// Redis's `unixsocket`: a Unix-domain socket to listen on too.
    public var unixSocket: String?
    /// Redis's `unixsocketperm` (octal on the command line; 0: what the
    /// umask leaves).
    public var unixSocketPermissions: UInt32 = 0
    /// The TCP port; 0 lets the kernel choose (see ``Server/port``).
    public var port = 6380
    /// I/O worker loops. 0 serves I/O on the keyspace's own loop, as Redis
    /// does: the default on up to 2 cores, where it measured fastest
    /// (bench/kvd-latest.txt: 1.3-1.5x `--io-threads 1` unpipelined, and no
    /// hop to pay). On more cores, the number of cores minus one: the I/O
    /// (about half of a request's CPU is the kernel's socket work) then runs
    /// beside the core instead of on it.
    public var ioThreads = ServerOptions.defaultIOThreads(cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// The default `ioThreads` for a machine with `cores` cores.
    public static func defaultIOThreads(cores: Int) -> Int { cores <= 2 ? 0 : cores - 1 }
    /// Connections served at once; more are refused.
    public var maxClients = 10_000
    /// What one request may announce.
    public var limits = RESPLimits()
    /// Redis's `client-output-buffer-limit` for normal clients: a client
    /// whose unsent replies pass `hard` bytes, or stay above `soft` bytes for
    /// longer than `softSeconds`, is disconnected (0 turns a limit off).
    public var outputBufferLimit = OutputBufferLimit(hard: 256 * 1024 * 1024, soft: 0, softSeconds: 0)
    /// Redis's `client-output-buffer-limit pubsub`, for clients with
    /// subscriptions, with Redis's default: 32 MiB at once, or above 8 MiB
    /// for 60 seconds.
    public var pubsubOutputBufferLimit = OutputBufferLimit(
        hard: 32 * 1024 * 1024, soft: 8 * 1024 * 1024, softSeconds: 60)
    /// How long a graceful stop may take before kvd exits anyway, in seconds.
    public var shutdownTimeout: Double = 1
    /// Redis's `requirepass`: when set, a client must AUTH (or HELLO with
    /// AUTH) with it before any other command.
    public var requirePassword: String?
    /// Redis's `protected-mode` (on by default): with no password set, only
    /// clients on the loopback interface are served; any other is told why
    /// (Redis's `DENIED` message) and closed.
    public var protectedMode = true
    /// Redis's `slowlog-log-slower-than`, in microseconds: SLOWLOG keeps
    /// each command that took at least this long (negative: no slow log).
    public var slowlogSlowerThan = 10_000
    /// Redis's `slowlog-max-len`.
    public var slowlogMaxLength = 128
    /// Redis's `maxmemory`, in bytes (0: no limit), and `maxmemory-policy`
    /// (Storage/Eviction/).
    public var maxmemory = 0
    public var maxmemoryPolicy = "noeviction"
    /// Redis's `notify-keyspace-events`: the classes of keyspace
    /// notifications published (empty: none, as Redis's default). A value
    /// with a letter Redis does not know is refused by `parse`; set here
    /// directly, it publishes nothing.
    public var notifyKeyspaceEvents = ""
    /// Redis's `dir`: where the snapshot is loaded from at start and saved
    /// to. nil: no snapshots at all (the library's default, so that tests
    /// never touch the working directory); kvd's command line makes it ".".
    public var directory: String?
    /// Redis's `dbfilename`.
    public var dbFilename = "dump.rdb"
    /// Redis's `save`: when a BGSAVE starts by itself, and whether SIGTERM
    /// saves (not with none). The library's default is none; kvd's command
    /// line gives Redis's (`SavePoint.redisDefault`).
    public var savePoints: [SavePoint] = []
    /// Redis's `stop-writes-on-bgsave-error`.
    public var stopWritesOnBgsaveError = true
    /// The append-only file (Persistence/AppendOnlyFile.swift), with
    /// Redis's names and defaults: `appendonly`, `appendfsync`,
    /// `appendfilename`, `appenddirname`, `aof-load-truncated`.
    public var appendOnly = false
    public var appendFsync = AppendFsync.everysec
    public var appendFilename = "appendonly.aof"
    public var appendDirname = "appendonlydir"
    public var aofLoadTruncated = true
    /// `aof-use-rdb-preamble`: a rewrite's base is an RDB file (else RESP commands).
    public var aofUseRDBPreamble = true

    /// Limits on one client's unsent replies.
    public struct OutputBufferLimit: Sendable, Equatable {
        /// Disconnect at once above this many bytes (0: no hard limit).
        public var hard: Int
        /// Disconnect after `softSeconds` above this many bytes (0: no soft limit).
        public var soft: Int
        /// How long a client may stay above `soft`.
        public var softSeconds: Int

        public init(hard: Int, soft: Int, softSeconds: Int) {
            self.hard = hard
            self.soft = soft
            self.softSeconds = softSeconds
        }
    }

    /// The defaults.
    public init() {}

    /// `kvd --help`.
    public static let usage = """
        usage: kvd [options]
          --bind ADDRESS ... addresses to listen on, IPv4 or IPv6, as Redis's bind:
                             * and ::* for any, a leading - for one this host may
                             lack ("127.0.0.1 -::1"; default 127.0.0.1)
          --unixsocket PATH  listen on a Unix socket too (its clients count as local)
          --unixsocketperm OCTAL
                             the Unix socket's permissions (e.g. 700)
          --port PORT        TCP port (default 6380; 0 picks a free one)
          --io-threads N     I/O worker loops; 0 serves I/O on the keyspace's own loop,
                             as Redis does (default: 0 on up to 2 cores, else cores - 1)
          --max-clients N    connections served at once; more are refused (default 10000)
          --max-bulk BYTES   largest bulk argument accepted (default 536870912, as Redis)
          --client-query-buffer-limit SIZE
                             disconnect a client whose unread requests pass SIZE
                             (sizes take kb/mb/gb; default 1gb, as Redis)
          --client-output-buffer-limit [normal|pubsub] HARD SOFT SECONDS
                             disconnect a client whose unsent replies pass HARD
                             bytes, or stay above SOFT bytes for SECONDS (sizes
                             take kb/mb/gb; 0 turns a limit off; default
                             normal 256mb 0 0: a client that never reads cannot
                             take more than 256 MiB; pubsub 32mb 8mb 60, as
                             Redis: for clients with subscriptions)
          --shutdown-timeout SECONDS
                             how long a graceful stop may take (default 1)
          --slowlog-log-slower-than MICROSECONDS
                             SLOWLOG keeps each command that took at least
                             this long (default 10000, as Redis; negative: off)
          --slowlog-max-len N
                             SLOWLOG's length (default 128)
          --maxmemory SIZE   evict keys (or refuse writes with OOM) while used
                             memory is over SIZE, in bytes or kb/mb/gb
                             (default 0: no limit)
          --maxmemory-policy POLICY
                             what goes: noeviction (refuse writes), allkeys-lru,
                             volatile-lru, allkeys-lfu, volatile-lfu,
                             allkeys-random, volatile-random or volatile-ttl
                             (default noeviction, as Redis)
          --notify-keyspace-events CLASSES
                             publish keyspace notifications of these classes,
                             in Redis's letters (K, E, A, g$lshzxetd, m, n;
                             default none)
          --requirepass PASSWORD
                             clients must AUTH with PASSWORD (user "default")
                             before anything else (default: no password)
          --protected-mode yes|no
                             with no password, serve only loopback clients and
                             refuse others with Redis's DENIED message (default yes)
          --dir DIRECTORY    where dump.rdb is loaded from at start and saved to
                             (default: the working directory)
          --dbfilename NAME  the snapshot's file name (default dump.rdb)
          --save "SECONDS CHANGES ..."
                             BGSAVE after SECONDS if at least CHANGES changes,
                             and save on SIGTERM; "" turns both off (default
                             "3600 1 300 100 60 10000", as Redis)
          --stop-writes-on-bgsave-error yes|no
                             refuse writes with MISCONF after a failed BGSAVE
                             while save points are set (default yes)
          --appendonly yes|no
                             log every write to appendonlydir/ and replay it at
                             start instead of dump.rdb (default no, as Redis)
          --appendfsync always|everysec|no
                             fsync the log before each reply, once a second, or
                             never (default everysec)
          --appendfilename NAME, --appenddirname NAME
                             the log's names (default appendonly.aof, appendonlydir)
          --aof-load-truncated yes|no
                             load a log whose last command is cut short, up to
                             that command (default yes)
          --aof-use-rdb-preamble yes|no
                             a rewrite's base is an RDB file, or RESP commands
                             (default yes)
          --help             this text
        Signals: SIGTERM and SIGINT stop gracefully (stop accepting, answer what
        was read, close, save dump.rdb when save points are set, exit 0),
        bounded by --shutdown-timeout (the snapshot is waited for); a second
        one exits at once (status 1). SIGHUP prints the stats line.
        """

    /// A command line that cannot be honoured; the description says why.
    public struct UsageError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    /// Parses `arguments` (without the program name). Returns nil for --help.
    public static func parse(_ arguments: [String]) throws(UsageError) -> ServerOptions? {
        var options = ServerOptions()
        options.directory = "."
        options.savePoints = SavePoint.redisDefault
        var index = 0
        func value(_ flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[index]
        }
        func yesNo(_ flag: String) throws(UsageError) -> Bool {
            switch try value(flag).lowercased() {
            case "yes": return true
            case "no": return false
            case let other: throw UsageError(description: "\(flag) takes yes or no, got '\(other)'")
            }
        }
        func number(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let text = try value(flag)
            guard let n = Int(text), range.contains(n) else {
                throw UsageError(
                    description: "\(flag) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
            }
            return n
        }
        /// A size as Redis writes them: bytes, or with kb, mb or gb (1024-based).
        func size(_ flag: String, _ text: String) throws(UsageError) -> Int {
            let lower = text.lowercased()
            let units: [(String, Int)] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10), ("b", 1)]
            let (digits, scale) =
                units.first { lower.hasSuffix($0.0) }.map { (String(lower.dropLast($0.0.count)), $0.1) }
                ?? (lower, 1)
            guard let n = Int(digits), n >= 0, n <= Int.max / scale else {
                throw UsageError(description: "\(flag) takes sizes such as 256mb or 0, got '\(text)'")
            }
            return n * scale
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--help", "-h": return nil
            case "--bind":
                // Redis's: one argument with spaces, or several arguments.
                var words = try value("--bind").split(separator: " ").map(String.init)
                while index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                    index += 1
                    words += arguments[index].split(separator: " ").map(String.init)
                }
                _ = try ListenAddress.parse(words)
                options.bind = words
            case "--unixsocket": options.unixSocket = try value("--unixsocket")
            case "--unixsocketperm":
                let text = try value("--unixsocketperm")
                guard let permissions = UInt32(text, radix: 8), permissions <= 0o777 else {
                    throw UsageError(description: "--unixsocketperm takes octal permissions such as 700, got '\(text)'")
                }
                options.unixSocketPermissions = permissions
            case "--port": options.port = try number("--port", 0...65535)
            case "--io-threads": options.ioThreads = try number("--io-threads", 0...256)
            case "--max-clients": options.maxClients = try number("--max-clients", 1...1_000_000)
            case "--max-bulk": options.limits.maxBulk = try number("--max-bulk", 1...(512 * 1024 * 1024))
            case "--client-query-buffer-limit":
                let flag = "--client-query-buffer-limit"
                let limit = try size(flag, try value(flag))
                guard limit >= 1024 * 1024 else { throw UsageError(description: "\(flag) must be at least 1mb") }
                options.limits.maxQueryBuffer = limit
            case "--client-output-buffer-limit":
                let flag = "--client-output-buffer-limit"
                // Redis's form names the class first; without one it is `normal`.
                var first = try value(flag)
                let pubsub = first.lowercased() == "pubsub"
                if pubsub || first.lowercased() == "normal" { first = try value(flag) }
                let limit = OutputBufferLimit(
                    hard: try size(flag, first), soft: try size(flag, try value(flag)),
                    softSeconds: try number(flag, 0...86_400))
                if pubsub { options.pubsubOutputBufferLimit = limit } else { options.outputBufferLimit = limit }
            case "--slowlog-log-slower-than":
                options.slowlogSlowerThan = try number("--slowlog-log-slower-than", -1...3_600_000_000)
            case "--slowlog-max-len": options.slowlogMaxLength = try number("--slowlog-max-len", 0...1_000_000)
            case "--maxmemory": options.maxmemory = try size("--maxmemory", try value("--maxmemory"))
            case "--maxmemory-policy":
                let policy = try value("--maxmemory-policy")
                guard EvictionPolicy(name: Array(policy.utf8)) != nil else {
                    throw UsageError(
                        description: "--maxmemory-policy takes "
                            + EvictionPolicy.allCases.map(\.name).joined(separator: ", ") + "; got '\(policy)'")
                }
                options.maxmemoryPolicy = policy
            case "--notify-keyspace-events":
                let classes = try value("--notify-keyspace-events")
                guard KeyspaceEventClasses(letters: Array(classes.utf8)) != nil else {
                    throw UsageError(
                        description: "--notify-keyspace-events: " + KeyspaceEventClasses.invalidLetterError
                            + " Got '\(classes)'")
                }
                options.notifyKeyspaceEvents = classes
            case "--requirepass":
                let password = try value("--requirepass")
                guard !password.isEmpty else {
                    throw UsageError(description: "--requirepass needs a non-empty password")
                }
                options.requirePassword = password
            case "--protected-mode":
                switch try value("--protected-mode").lowercased() {
                case "yes": options.protectedMode = true
                case "no": options.protectedMode = false
                case let other: throw UsageError(description: "--protected-mode takes yes or no, got '\(other)'")
                }
            case "--dir": options.directory = try value("--dir")
            case "--dbfilename":
                let name = try value("--dbfilename")
                guard !name.isEmpty, !name.contains("/") else {
                    throw UsageError(description: "--dbfilename takes a file name without a directory, got '\(name)'")
                }
                options.dbFilename = name
            case "--save":
                let text = try value("--save")
                guard let points = SavePoint.parse(text) else {
                    throw UsageError(description: "--save takes pairs of seconds and changes, or \"\", got '\(text)'")
                }
                options.savePoints = points
            case "--stop-writes-on-bgsave-error":
                switch try value("--stop-writes-on-bgsave-error").lowercased() {
                case "yes": options.stopWritesOnBgsaveError = true
                case "no": options.stopWritesOnBgsaveError = false
                case let other:
                    throw UsageError(description: "--stop-writes-on-bgsave-error takes yes or no, got '\(other)'")
                }
            case "--appendonly": options.appendOnly = try yesNo("--appendonly")
            case "--aof-load-truncated": options.aofLoadTruncated = try yesNo("--aof-load-truncated")
            case "--aof-use-rdb-preamble": options.aofUseRDBPreamble = try yesNo("--aof-use-rdb-preamble")
            case "--appendfsync":
                let text = try value("--appendfsync")
                guard let policy = AppendFsync(rawValue: text.lowercased()) else {
                    throw UsageError(description: "--appendfsync takes always, everysec or no, got '\(text)'")
                }
                options.appendFsync = policy
            case "--appendfilename", "--appenddirname":
                let flag = arguments[index]
                let name = try value(flag)
                guard !name.isEmpty, !name.contains("/") else {
                    throw UsageError(description: "\(flag) takes a name without a directory, got '\(name)'")
                }
                if flag == "--appendfilename" { options.appendFilename = name } else { options.appendDirname = name }
            case "--shutdown-timeout":
                let text = try value("--shutdown-timeout")
                guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                    throw UsageError(description: "--shutdown-timeout must be seconds in (0, 3600], got '\(text)'")
                }
                options.shutdownTimeout = seconds
            default: throw UsageError(description: "unknown option '\(arguments[index])'")
            }
            index += 1
        }
        return options
    }
}
