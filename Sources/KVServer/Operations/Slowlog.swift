// Slowlog.swift: SLOWLOG's entries. The dispatcher times every command on
// its own (one clock read between two commands, see Dispatcher.execute),
// and a command that took at least slowlog-log-slower-than is logged here
// with its own arguments, client and duration, as Redis logs it: a cheap
// command that shared a batch with a slow one is never blamed, whichever
// loop served the client. EXEC is not logged (the commands it ran are), a
// parked blocking command is logged when it is served, and passwords are
// redacted as Redis redacts them.
import Glibc

/// SLOWLOG's settings and entries. Core loop only (the dispatcher's statistics).
struct Slowlog {
    struct Entry {
        let id: Int
        let unixSeconds: Int
        let microseconds: Int
        let arguments: [[UInt8]]
        let client: String
        let name: [UInt8]
    }

    /// Redis's `slowlog-log-slower-than`, in microseconds: log a command
    /// that took at least this long (negative: the log is off).
    var threshold = 10_000 {
        didSet { thresholdNanoseconds = threshold < 0 ? UInt64.max : UInt64(threshold) &* 1000 }
    }
    /// Redis's `slowlog-max-len`: most entries kept (older ones go when a
    /// new one comes, as in Redis).
    var maxLength = 128
    /// `threshold` in nanoseconds, what every command is compared with.
    private var thresholdNanoseconds: UInt64 = 10_000_000
    /// The entries, oldest first, from `first` on: a new one is appended
    /// and an old one dropped without moving the others.
    private var storage: [Entry] = []
    private var first = 0
    private var nextID = 0

    /// How many entries there are.
    var count: Int { storage.count - first }

    /// The newest `limit` entries, newest first.
    func newest(_ limit: Int) -> some Sequence<Entry> {
        storage[(storage.count - Swift.min(limit, count))...].reversed()
    }

    /// Core loop: `request` of `session` ran in `nanoseconds`; logged when
    /// that reaches the threshold. Arguments are copied only then, at most
    /// 32 of them, 128 bytes each, as Redis keeps them.
    @inline(__always)
    mutating func note(_ request: Request, took nanoseconds: UInt64, by session: ClientSession) {
        guard nanoseconds >= thresholdNanoseconds, nanoseconds / 1000 >= threshold else { return }
        append(request, microseconds: Int(nanoseconds / 1000), by: session)
    }

    private mutating func append(_ request: Request, microseconds: Int, by session: ClientSession) {
        let redacted = Slowlog.redactedArguments(request)
        let kept = Swift.min(request.count, 32)
        var arguments: [[UInt8]] = []
        arguments.reserveCapacity(kept)
        for index in 0..<kept {
            if index == 31 && request.count > 32 {
                arguments.append(Array("... (\(request.count - 31) more arguments)".utf8))
            } else if redacted.contains(index) {
                arguments.append(Array("(redacted)".utf8))
            } else {
                let argument = request.raw(index)
                arguments.append(
                    argument.count > 128
                        ? Array(argument.prefix(128)) + Array("... (\(argument.count - 128) more bytes)".utf8)
                        : Array(argument))
            }
        }
        storage.append(
            Entry(
                id: nextID, unixSeconds: time(nil), microseconds: microseconds, arguments: arguments,
                client: session.info.address, name: session.name))
        nextID += 1
        if count > maxLength { first += count - maxLength }
        // Dropped entries are let go once they are half the storage.
        if first > 0 && first >= storage.count / 2 {
            storage.removeFirst(first)
            first = 0
        }
    }

    /// The positions of the arguments Redis shows as "(redacted)": AUTH's,
    /// HELLO's after AUTH, and the values of CONFIG SET's sensitive settings.
    private static func redactedArguments(_ request: Request) -> [Int] {
        let name = request.raw(0)
        if equalsIgnoringCase(name, "auth") { return Array(1..<request.count) }
        if equalsIgnoringCase(name, "hello") {
            var index = 2
            while index < request.count {
                if equalsIgnoringCase(request.raw(index), "auth") && index + 2 < request.count {
                    return [index + 1, index + 2]
                }
                index += equalsIgnoringCase(request.raw(index), "setname") ? 2 : 1
            }
            return []
        }
        if equalsIgnoringCase(name, "config") && request.count > 2 && equalsIgnoringCase(request.raw(1), "set") {
            return stride(from: 2, to: request.count - 1, by: 2).filter {
                ConfigParameter.named(request.raw($0))?.sensitive == true
            }.map { $0 + 1 }
        }
        return []
    }

    mutating func reset() {
        storage = []
        first = 0
    }
}
