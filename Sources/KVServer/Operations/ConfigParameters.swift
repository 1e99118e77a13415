// ConfigParameters.swift: the settings CONFIG GET, SET and REWRITE know, as
// a table: one row per setting, with Redis 7.0's name (and aliases), type,
// bounds and default, and where kvd keeps it. A row with a setter changes
// what kvd does at once; an immutable row (set on the command line) is
// refused by CONFIG SET with Redis's error; a row kvd only reports (its
// fixed behaviour, such as the port it listens on) accepts its own value and refuses
// any other, saying kvd does not support it. A setting that is not here is
// unknown to CONFIG, as in Redis. Adding a setting is adding one row.
import Glibc

/// One setting of CONFIG's table.
struct ConfigParameter: Sendable {
    /// How a value is read, and the error when it cannot be.
    enum Kind: Sendable {
        /// yes or no.
        case bool
        /// An integer within its bounds.
        case integer(ClosedRange<Int>)
        /// A byte count (`1gb`, `512mb`, `100`) within its bounds.
        case memory(ClosedRange<Int>)
        /// Any text; the setter checks it.
        case text
    }

    /// A parsed value.
    enum Value {
        case bool(Bool)
        case integer(Int)
        case text([UInt8])

        var integer: Int {
            if case .integer(let value) = self { return value }
            return 0
        }
        var bool: Bool {
            if case .bool(let value) = self { return value }
            return false
        }
        var text: [UInt8] {
            if case .text(let value) = self { return value }
            return []
        }
    }

    /// How CONFIG SET treats it.
    enum Access: Sendable {
        /// Changes kvd at once: the setter returns Redis's error text, or nil.
        case settable(@Sendable (Dispatcher, Value) -> String?)
        /// Given at startup only: "can't set immutable config".
        case immutable
        /// kvd's behaviour, which it does not let change: SET accepts this
        /// same value only.
        case fixed
    }

    let name: String
    var aliases: [String] = []
    let kind: Kind
    /// CONFIG SET shows the value as "(redacted)" in SLOWLOG (requirepass).
    var sensitive = false
    let access: Access
    /// The value as CONFIG GET shows it.
    let get: @Sendable (Dispatcher) -> String

    /// The row called `name` or one of its aliases, in any case.
    static func named(_ name: UnsafeRawBufferPointer) -> ConfigParameter? {
        // No parameter's name is this long: a giant one is not copied.
        guard name.count <= 64 else { return nil }
        let lower = String(decoding: name.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        return ConfigParameter.table.first { $0.name == lower || $0.aliases.contains(lower) }
    }

    /// `text` read as this setting's kind, or Redis's error text.
    func parse(_ text: [UInt8]) -> Result<Value, ConfigError> {
        switch kind {
        case .bool:
            if equalsIgnoringCase(text, "yes") { return .success(.bool(true)) }
            if equalsIgnoringCase(text, "no") { return .success(.bool(false)) }
            return .failure(ConfigError("argument must be 'yes' or 'no'"))
        case .integer(let range):
            guard let value = parseInteger(text) else {
                return .failure(ConfigError("argument couldn't be parsed into an integer"))
            }
            return checked(value, range)
        case .memory(let range):
            guard let value = ConfigParameter.memory(text) else {
                return .failure(ConfigError("argument must be a memory value"))
            }
            return checked(value, range)
        case .text:
            return .success(.text(text))
        }
    }

    private func checked(_ value: Int, _ range: ClosedRange<Int>) -> Result<Value, ConfigError> {
        guard range.contains(value) else {
            return .failure(
                ConfigError("argument must be between \(range.lowerBound) and \(range.upperBound) inclusive"))
        }
        return .success(.integer(value))
    }

    /// Redis's memtoull: digits, then nothing, b, k, kb, m, mb, g or gb in any case.
    static func memory(_ text: [UInt8]) -> Int? {
        let digits = text.prefix { $0 >= 48 && $0 <= 57 }
        let unit = String(decoding: lowercased(Array(text.dropFirst(digits.count))), as: UTF8.self)
        let scales = [
            "": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1_000_000, "mb": 1 << 20, "g": 1_000_000_000, "gb": 1 << 30,
        ]
        guard let scale = scales[unit] else { return nil }
        guard !digits.isEmpty else { return 0 }
        guard let value = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        let (scaled, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow ? nil : scaled
    }
}

/// Why CONFIG SET refused a value: Redis's text after "- ".
struct ConfigError: Error {
    let text: String
    init(_ text: String) { self.text = text }
}

private func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }

/// An encoding threshold's row (EncodingLimits).
private func encodingLimit(
    _ name: String, alias: String?, _ value: ReferenceWritableKeyPath<EncodingLimits, Int> & Sendable,
    _ range: ClosedRange<Int>, memory: Bool = false
) -> ConfigParameter {
    ConfigParameter(
        name: name, aliases: alias.map { [$0] } ?? [], kind: memory ? .memory(range) : .integer(range),
        access: .settable { dispatcher, new in
            dispatcher.databases.limits[keyPath: value] = new.integer
            return nil
        },
        get: { String($0.databases.limits[keyPath: value]) })
}

/// An eviction setting's row (MemoryPolicy).
private func memorySetting(
    _ name: String, _ value: ReferenceWritableKeyPath<MemoryPolicy, Int> & Sendable, _ range: ClosedRange<Int>
) -> ConfigParameter {
    ConfigParameter(
        name: name, kind: .integer(range),
        access: .settable { dispatcher, new in
            dispatcher.databases.memory[keyPath: value] = new.integer
            return nil
        },
        get: { String($0.databases.memory[keyPath: value]) })
}

/// A row given on the command line only.
private func immutable(
    _ name: String, _ kind: ConfigParameter.Kind, _ value: @escaping @Sendable (LiveSettings) -> String
)
    -> ConfigParameter
{
    ConfigParameter(name: name, kind: kind, access: .immutable, get: { value($0.settings) })
}

private let longMax = Int.max
private let intMax = Int(Int32.max)

extension ConfigParameter {
    /// Every setting CONFIG knows, in the order CONFIG GET * lists them.
    static let table: [ConfigParameter] = settings + appendOnlyParameters

    private static let settings: [ConfigParameter] = [
        // Who is let in.
        ConfigParameter(
            name: "requirepass", kind: .text, sensitive: true,
            access: .settable { dispatcher, value in
                dispatcher.setPassword(value.text)
                return nil
            },
            get: { String(decoding: $0.sessions.password ?? [], as: UTF8.self) }),
        ConfigParameter(
            name: "protected-mode", kind: .bool,
            access: .settable { dispatcher, value in
                dispatcher.settings.protectedMode.store(value.bool, ordering: .relaxed)
                return nil
            },
            get: { yesNo($0.settings.protectedMode.load(ordering: .relaxed)) }),
        ConfigParameter(
            name: "maxclients", kind: .integer(1...Int(UInt32.max)),
            access: .settable { dispatcher, value in
                dispatcher.settings.maxClients.store(value.integer, ordering: .relaxed)
                return nil
            },
            get: { String($0.settings.maxClients.load(ordering: .relaxed)) }),
        ConfigParameter(
            name: "timeout", kind: .integer(0...intMax),
            access: .settable { dispatcher, value in
                dispatcher.setIdleTimeout(seconds: value.integer)
                return nil
            },
            get: { String($0.idleTimeout) }),
        // What a client may send and leave unread.
        ConfigParameter(
            name: "client-query-buffer-limit", kind: .memory((1024 * 1024)...longMax),
            access: .settable { dispatcher, value in
                dispatcher.settings.maxQueryBuffer.store(value.integer, ordering: .relaxed)
                return nil
            },
            get: { String($0.settings.maxQueryBuffer.load(ordering: .relaxed)) }),
        ConfigParameter(
            name: "proto-max-bulk-len", kind: .memory((1024 * 1024)...longMax),
            access: .settable { dispatcher, value in
                dispatcher.settings.maxBulk.store(value.integer, ordering: .relaxed)
                return nil
            },
            get: { String($0.settings.maxBulk.load(ordering: .relaxed)) }),
        ConfigParameter(
            name: "client-output-buffer-limit", kind: .text,
            access: .settable { dispatcher, value in dispatcher.setOutputBufferLimits(value.text) },
            get: { $0.outputBufferLimitsText }),
        // What kvd tells its operator.
        ConfigParameter(
            name: "slowlog-log-slower-than", kind: .integer(-1...longMax),
            access: .settable { dispatcher, value in
                dispatcher.stats.slowlog.threshold = value.integer
                return nil
            },
            get: { String($0.stats.slowlog.threshold) }),
        ConfigParameter(
            name: "slowlog-max-len", kind: .integer(0...longMax),
            access: .settable { dispatcher, value in
                dispatcher.stats.slowlog.maxLength = value.integer
                return nil
            },
            get: { String($0.stats.slowlog.maxLength) }),
        ConfigParameter(
            name: "latency-monitor-threshold", kind: .integer(0...longMax),
            access: .settable { dispatcher, value in
                dispatcher.stats.latencyMonitor.threshold = value.integer
                return nil
            },
            get: { String($0.stats.latencyMonitor.threshold) }),
        ConfigParameter(
            name: "latency-tracking", kind: .bool,
            access: .settable { dispatcher, value in
                dispatcher.stats.latencyTracking = value.bool
                return nil
            },
            get: { yesNo($0.stats.latencyTracking) }),
        ConfigParameter(
            name: "latency-tracking-info-percentiles", kind: .text,
            access: .settable { dispatcher, value in
                var percentiles: [Double] = []
                for word in value.text.split(separator: UInt8(ascii: " ")) {
                    guard let percentile = Double(String(decoding: word, as: UTF8.self)), !percentile.isNaN else {
                        return "Invalid latency-tracking-info-percentiles parameters"
                    }
                    guard percentile >= 0, percentile <= 100 else {
                        return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                    }
                    percentiles.append(percentile)
                }
                dispatcher.stats.latencyPercentiles = percentiles
                return nil
            },
            get: { $0.stats.latencyPercentiles.map(percentileLabel).joined(separator: " ") }),
        // The encoding thresholds (what OBJECT ENCODING reports).
        encodingLimit("hash-max-listpack-entries", alias: "hash-max-ziplist-entries", \.hashEntries, 0...longMax),
        encodingLimit(
            "hash-max-listpack-value", alias: "hash-max-ziplist-value", \.hashValue, 0...longMax, memory: true),
        encodingLimit("set-max-intset-entries", alias: nil, \.intsetEntries, 0...longMax),
        encodingLimit(
            "list-max-listpack-size", alias: "list-max-ziplist-size", \.listpackSize, Int(Int32.min)...intMax),
        encodingLimit("list-compress-depth", alias: nil, \.compressDepth, 0...intMax),
        encodingLimit("zset-max-listpack-entries", alias: "zset-max-ziplist-entries", \.zsetEntries, 0...longMax),
        encodingLimit(
            "zset-max-listpack-value", alias: "zset-max-ziplist-value", \.zsetValue, 0...longMax, memory: true),
        encodingLimit("hll-sparse-max-bytes", alias: nil, \.hllSparseBytes, 0...longMax, memory: true),
        // When a running script makes other clients' requests answer BUSY (ms).
        encodingLimit("busy-reply-threshold", alias: "lua-time-limit", \.busyReplyThreshold, 0...longMax),
        // Given on the command line.
        // Redis moves its listeners at run time; kvd's are set at start:
        // SET takes the value they have (the suite's CONFIG sanity sets
        // every parameter to itself), and refuses another.
        ConfigParameter(
            name: "port", kind: .integer(0...65535), access: .fixed,
            get: { String($0.settings.port.load(ordering: .relaxed)) }),
        ConfigParameter(
            name: "bind", kind: .text, access: .fixed, get: { $0.settings.options.bind.joined(separator: " ") }),
        immutable("unixsocket", .text) { $0.options.unixSocket ?? "" },
        immutable("unixsocketperm", .integer(0...0o777)) { String($0.options.unixSocketPermissions, radix: 8) },
        immutable("io-threads", .integer(1...128)) { String(max($0.options.ioThreads, 1)) },
        immutable("databases", .integer(1...intMax)) { _ in String(Databases.selectable) },
        immutable("daemonize", .bool) { _ in "no" },
        // Snapshots (Persistence/). dir and dbfilename are given on the
        // command line (Redis 7.0 protects them from CONFIG SET too).
        ConfigParameter(
            name: "save", kind: .text,
            access: .settable { dispatcher, value in
                guard let points = SavePoint.parse(String(decoding: value.text, as: UTF8.self)) else {
                    return "Invalid save parameters"
                }
                dispatcher.persistence.savePoints = points
                return nil
            },
            get: { SavePoint.text($0.persistence.savePoints) }),
        ConfigParameter(
            name: "stop-writes-on-bgsave-error", kind: .bool,
            access: .settable { dispatcher, value in
                dispatcher.persistence.stopWritesOnError = value.bool
                return nil
            },
            get: { yesNo($0.persistence.stopWritesOnError) }),
        ConfigParameter(name: "dir", kind: .text, access: .immutable, get: { $0.persistence.file?.directory ?? "" }),
        ConfigParameter(
            name: "dbfilename", kind: .text, access: .immutable, get: { $0.persistence.file?.name ?? "dump.rdb" }),
        // The memory limit and eviction (Storage/Eviction/). A lower limit
        // evicts at once, in bounded turns (Dispatcher+Memory.swift).
        ConfigParameter(
            name: "maxmemory", kind: .memory(0...longMax),
            access: .settable { dispatcher, value in
                dispatcher.databases.memory.maxmemory = value.integer
                if value.integer > 0 && !dispatcher.pause.active { dispatcher.evict() }
                return nil
            },
            get: { String($0.databases.memory.maxmemory) }),
        ConfigParameter(
            name: "maxmemory-policy", kind: .text,
            access: .settable { dispatcher, value in
                guard let policy = EvictionPolicy(name: value.text) else {
                    return "argument(s) must be one of the following: "
                        + [
                            EvictionPolicy.volatileLRU, .volatileLFU, .volatileRandom, .volatileTTL, .allKeysLRU,
                            .allKeysLFU, .allKeysRandom, .noEviction,
                        ].map(\.name).joined(separator: ", ")
                }
                dispatcher.databases.memory.policy = policy
                dispatcher.evictor.reset()
                return nil
            },
            get: { $0.databases.memory.policy.name }),
        // Keyspace notifications (Storage/KeyspaceEvents.swift).
        ConfigParameter(
            name: "notify-keyspace-events", kind: .text,
            access: .settable { dispatcher, value in
                guard let classes = KeyspaceEventClasses(letters: value.text) else {
                    return KeyspaceEventClasses.invalidLetterError
                }
                dispatcher.databases.events.classes = classes
                return nil
            },
            get: { $0.databases.events.classes.letters }),
        memorySetting("maxmemory-samples", \.samples, 1...intMax),
        memorySetting("maxmemory-eviction-tenacity", \.tenacity, 0...100),
        memorySetting("lfu-log-factor", \.lfuLogFactor, 0...intMax),
        memorySetting("lfu-decay-time", \.lfuDecayTime, 0...intMax),
    ]
}
