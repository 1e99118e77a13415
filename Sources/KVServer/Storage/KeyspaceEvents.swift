// KeyspaceEvents.swift: Redis's keyspace notifications
// (`notify-keyspace-events`). A command that changes a key names the
// change (`set`, `lpush`, `del`, `expired`...) with the event's class, and
// the change is published on two channels, as Redis 7.0's notify.c
// publishes it: `__keyspace@<db>__:<key>` with the event's name as the
// message (class K), and `__keyevent@<db>__:<event>` with the key as the
// message (class E). Which classes are published is the setting's letters.
//
// Off by default, as in Redis. Off, a notification costs its caller two
// loads (this object, then its mask) and a test (`notify` is inlined), so
// every write command can name its events at no measurable cost; on, one
// publication per channel, through the server's pub/sub (its subscribers
// and patterns), with every message queued for its subscribers' loops.
//
// One difference from redis-server 7.0: a RESP3 client that listens to
// the notifications of its own commands gets them after the command's
// reply, not before it: they leave through the push outbox with every
// other client's, so no event lands inside a reply (an EXEC's array).

/// The classes of keyspace events: the letters of `notify-keyspace-events`.
struct KeyspaceEventClasses: OptionSet, Sendable {
    let rawValue: UInt16

    /// K: publish on `__keyspace@<db>__:<key>`.
    static let keyspace = KeyspaceEventClasses(rawValue: 1 << 0)
    /// E: publish on `__keyevent@<db>__:<event>`.
    static let keyevent = KeyspaceEventClasses(rawValue: 1 << 1)
    /// g: commands of any type (DEL, EXPIRE, RENAME...).
    static let generic = KeyspaceEventClasses(rawValue: 1 << 2)
    /// $: string commands.
    static let string = KeyspaceEventClasses(rawValue: 1 << 3)
    /// l: list commands.
    static let list = KeyspaceEventClasses(rawValue: 1 << 4)
    /// s: set commands.
    static let set = KeyspaceEventClasses(rawValue: 1 << 5)
    /// h: hash commands.
    static let hash = KeyspaceEventClasses(rawValue: 1 << 6)
    /// z: sorted set commands.
    static let sortedSet = KeyspaceEventClasses(rawValue: 1 << 7)
    /// x: a key deleted because its deadline passed.
    static let expired = KeyspaceEventClasses(rawValue: 1 << 8)
    /// e: a key deleted by eviction (maxmemory).
    static let evicted = KeyspaceEventClasses(rawValue: 1 << 9)
    /// t: stream commands (kvd has no streams: none is ever published).
    static let stream = KeyspaceEventClasses(rawValue: 1 << 10)
    /// m: a read of a key that is not there (Storage/KeyReads.swift).
    static let keyMiss = KeyspaceEventClasses(rawValue: 1 << 11)
    /// d: module events (kvd has no modules: none is ever published).
    static let module = KeyspaceEventClasses(rawValue: 1 << 13)
    /// n: a key created.
    static let newKey = KeyspaceEventClasses(rawValue: 1 << 14)
    /// A: every class of change but `m` and `n`, as Redis's NOTIFY_ALL.
    static let all: KeyspaceEventClasses = [
        .generic, .string, .list, .set, .hash, .sortedSet, .expired, .evicted, .stream, .module,
    ]

    /// The classes `letters` names (Redis's keyspaceEventsStringToFlags);
    /// nil when a letter names none.
    init?(letters: [UInt8]) {
        var classes: KeyspaceEventClasses = []
        for letter in letters {
            guard let named = KeyspaceEventClasses.byLetter[letter] else { return nil }
            classes.formUnion(named)
        }
        self = classes
    }

    init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The letters CONFIG GET shows, in Redis's order
    /// (keyspaceEventsFlagsToString): `A` for all the change classes.
    var letters: String {
        var text = ""
        if isSuperset(of: .all) {
            text = "A"
        } else {
            for (letter, named) in KeyspaceEventClasses.changeLetters where isSuperset(of: named) {
                text.append(letter)
            }
        }
        if contains(.keyspace) { text += "K" }
        if contains(.keyevent) { text += "E" }
        if contains(.keyMiss) { text += "m" }
        return text
    }

    private static let changeLetters: [(Character, KeyspaceEventClasses)] = [
        ("g", .generic), ("$", .string), ("l", .list), ("s", .set), ("h", .hash), ("z", .sortedSet),
        ("x", .expired), ("e", .evicted), ("t", .stream), ("d", .module), ("n", .newKey),
    ]

    private static let byLetter: [UInt8: KeyspaceEventClasses] = {
        var table: [UInt8: KeyspaceEventClasses] = [
            UInt8(ascii: "A"): .all, UInt8(ascii: "K"): .keyspace, UInt8(ascii: "E"): .keyevent,
            UInt8(ascii: "m"): .keyMiss,
        ]
        for (letter, named) in changeLetters { table[UInt8(letter.asciiValue!)] = named }
        return table
    }()

    /// CONFIG SET's error for a letter that names no class (Redis's words).
    static let invalidLetterError = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
}

/// What is published, and where: shared by a dispatcher's databases, on
/// the core loop only.
final class KeyspaceEvents {
    /// The setting, as given (CONFIG GET shows it back).
    var classes: KeyspaceEventClasses = [] {
        didSet {
            // Without K or E nothing is published, whatever the classes
            // (Redis checks the class first, then each channel's letter).
            published =
                classes.isDisjoint(with: [.keyspace, .keyevent]) ? [] : classes
        }
    }
    /// The classes a notification is published for: empty while neither
    /// channel is on. Unchecked: every write command reads it (core loop
    /// only); the runtime's exclusivity check would be a call per event.
    @exclusivity(unchecked) private(set) var published: KeyspaceEventClasses = []
    /// Publishes a message on a channel (the server's pub/sub: the
    /// dispatcher sets it). Nil for a keyspace no server runs: nothing is
    /// published.
    var publish: ((_ channel: [UInt8], _ message: [UInt8]) -> Void)?

    /// True when a notification of `type` is published (a caller that
    /// would compute something for its notification asks first).
    @inline(__always)
    func wants(_ type: KeyspaceEventClasses) -> Bool {
        published.rawValue & type.rawValue != 0
    }

    /// `event` happened to `key` in database `database`: published when
    /// the setting asks for its class.
    @inline(__always)
    func notify(_ type: KeyspaceEventClasses, _ event: StaticString, _ key: UnsafeRawBufferPointer, database: Int) {
        guard published.rawValue & type.rawValue != 0 else { return }
        announce(event, key, database: database)
    }

    private func announce(_ event: StaticString, _ key: UnsafeRawBufferPointer, database: Int) {
        guard let publish else { return }
        let name = event.withUTF8Buffer { Array($0) }
        let prefix = Array("@\(database)__:".utf8)
        if published.contains(.keyspace) {
            publish(KeyspaceEvents.keyspacePrefix + prefix + key, name)
        }
        if published.contains(.keyevent) {
            publish(KeyspaceEvents.keyeventPrefix + prefix + name, Array(key))
        }
    }

    private static let keyspacePrefix = Array("__keyspace".utf8)
    private static let keyeventPrefix = Array("__keyevent".utf8)
}
