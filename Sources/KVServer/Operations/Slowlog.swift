// Slowlog.swift: SLOWLOG's entries, fed by the core loop's onSlowJob (see
// Server.start): a batch that held the core longer than
// --slowlog-log-slower-than is logged with the slowest command in it (its
// arguments and client), as Redis logs the command; a slow job that ran no
// command (an expiry slice) is logged with the job's label.
import Glibc
import MainLoop

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

    /// Log what held the core longer than this (nil: the log is off).
    var threshold: UInt64? = 10_000_000
    /// Most entries kept.
    var maxLength = 128
    private(set) var entries: [Entry] = []
    private var nextID = 0
    /// The slowest command of the current job above the threshold, if any.
    private var slowest: (arguments: [[UInt8]], nanoseconds: UInt64, client: String, name: [UInt8])?

    /// Core loop: a command ran for `nanoseconds`: remembered if it is the
    /// slowest of its job above the threshold (its arguments are copied
    /// only then, as Redis keeps at most 32 of them, 128 bytes each).
    @inline(__always)
    mutating func note(_ request: Request, took nanoseconds: UInt64, by session: ClientSession) {
        guard let threshold, nanoseconds > threshold, nanoseconds > (slowest?.nanoseconds ?? 0) else { return }
        var arguments = request.prefix(32).map { argument -> [UInt8] in
            argument.count > 128
                ? Array(argument.prefix(128)) + Array("... (\(argument.count - 128) more bytes)".utf8) : argument
        }
        if request.count > 32 { arguments[31] = Array("... (\(request.count - 31) more arguments)".utf8) }
        slowest = (arguments, nanoseconds, session.info.address, session.name)
    }

    /// Core loop, from onSlowJob: a job ran `report.runTime`; logs it with
    /// the slowest command it ran, or with its label.
    mutating func record(_ report: SlowJobReport) {
        let (seconds, attoseconds) = report.runTime.components
        let micros = Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000)
        let command = slowest
        slowest = nil
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        entries.insert(
            Entry(
                id: nextID, unixSeconds: now.tv_sec, microseconds: micros,
                arguments: command?.arguments ?? [Array(report.label.utf8)], client: command?.client ?? "",
                name: command?.name ?? []), at: 0)
        nextID += 1
        if entries.count > maxLength { entries.removeLast(entries.count - maxLength) }
    }

    mutating func reset() {
        entries = []
    }

    /// Log jobs slower than `threshold` (nil: the log is off), keep
    /// `maxLength` entries.
    mutating func configure(threshold: Duration?, maxLength: Int) {
        self.threshold = threshold.map {
            UInt64(max($0.components.seconds, 0)) * 1_000_000_000
                + UInt64(max($0.components.attoseconds, 0) / 1_000_000_000)
        }
        self.maxLength = maxLength
    }
}
