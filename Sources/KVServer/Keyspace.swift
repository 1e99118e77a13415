// Keyspace.swift: the single-threaded core: a dictionary of byte strings
// with expiry. Owned by one loop (EventLoop.main in kvd); no lock anywhere:
// every method runs on that loop's thread.
import Glibc

/// Milliseconds on the monotonic clock: expiry must not jump with the wall clock.
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// The key-value store: byte-string keys and values with optional expiry.
/// Not thread-safe by design: one loop owns it (EventLoop.main in kvd), and
/// every call runs on that loop's thread.
public final class Keyspace {
    struct Entry {
        var value: [UInt8]
        /// Monotonic milliseconds at which the key expires, if it does.
        var expiresAt: Int64?
    }

    // Owner loop's thread only.
    var entries: [[UInt8]: Entry] = [:]
    /// Keys that were given an expiry, for the active expiry cycle to sample
    /// (may hold keys that no longer expire; the cycle drops them).
    private var expiring: [[UInt8]] = []
    private var expiryCursor = 0
    /// How many keys expired (lazily or actively).
    public private(set) var expiredKeys = 0
    /// How many requests have been executed.
    public private(set) var commandsProcessed = 0
    /// Server facts for INFO, supplied by the server.
    var info: () -> [(section: String, lines: [String])] = { [] }

    /// An empty keyspace.
    public init() {}

    /// The number of keys, counting expired ones not yet removed.
    public var count: Int { entries.count }

    /// The live entry for `key`, deleting it first if it has expired (lazy expiry).
    func lookup(_ key: [UInt8], now: Int64) -> Entry? {
        guard let entry = entries[key] else { return nil }
        if let deadline = entry.expiresAt, deadline <= now {
            entries[key] = nil
            expiredKeys += 1
            return nil
        }
        return entry
    }

    func set(_ key: [UInt8], _ value: [UInt8], expiresAt: Int64?) {
        entries[key] = Entry(value: value, expiresAt: expiresAt)
        if expiresAt != nil { expiring.append(key) }
    }

    func setExpiry(_ key: [UInt8], _ deadline: Int64?) {
        entries[key]?.expiresAt = deadline
        if deadline != nil { expiring.append(key) }
    }

    func removeAll() {
        entries.removeAll()
        expiring.removeAll()
        expiryCursor = 0
    }

    /// Active expiry: examines up to `budget` keys that were given an expiry,
    /// deleting the expired ones and forgetting those that no longer expire.
    public func expireCycle(budget: Int = 200) {
        let now = monotonicMilliseconds()
        var examined = 0
        while examined < budget && !expiring.isEmpty {
            if expiryCursor >= expiring.count { expiryCursor = 0 }
            let key = expiring[expiryCursor]
            examined += 1
            let keep: Bool
            if let entry = entries[key], let deadline = entry.expiresAt {
                if deadline <= now {
                    entries[key] = nil
                    expiredKeys += 1
                    keep = false
                } else {
                    keep = true
                }
            } else {
                keep = false
            }
            if keep {
                expiryCursor += 1
            } else {
                expiring.swapAt(expiryCursor, expiring.count - 1)
                expiring.removeLast()
            }
        }
    }

    /// Keys with an expiry (for INFO's keyspace line).
    var expiresCount: Int { entries.values.reduce(0) { $0 + ($1.expiresAt == nil ? 0 : 1) } }

    /// Runs each request in order and returns the concatenated replies.
    public func execute(_ batch: RequestBatch) -> [UInt8] {
        var out = ReplyWriter(expectedRequests: batch.count)
        batch.forEach { execute($0, into: &out) }
        return out.bytes
    }

    func execute(_ request: Request, into out: inout ReplyWriter) {
        guard let first = request.first else { return }
        commandsProcessed += 1
        // Clients send names in upper or lower case: both spellings are in
        // the table, so the common case costs no allocation.
        guard let command = commandTable[first] ?? commandTable[lowercased(first)] else {
            out.error(bytes: unknownCommandMessage(request))
            return
        }
        let arity = command.arity
        if (arity > 0 && request.count != arity) || (arity < 0 && request.count < -arity) {
            out.error("ERR wrong number of arguments for '\(command.name)' command")
            return
        }
        command.handler(self, request, &out)
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
