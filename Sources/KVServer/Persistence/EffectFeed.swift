// EffectFeed.swift: what the append-only file is fed: each write in the
// form that replays to the same data (Redis's propagation), in RESP, on
// the core. The dispatcher adds the command it ran (or its rewrite,
// EffectRewrites.swift), the keyspace adds a DEL for each key that
// expires, and the handlers whose effect is not their request (SPOP, the
// blocking pops) add what they did themselves. Core loop only, shared by
// a dispatcher's databases like their clock.
//
// One top-level command's effects are gathered in `pending` and moved to
// `ready` when it ends, wrapped in MULTI/EXEC when they are more than one
// (a script, a transaction, a lazy expiry before a write), so a replay
// applies all of them or, for a torn tail, none. `ready` is what the next
// write(2) sends (AppendOnlyFile.flush), once per core job.

/// The effects of writes, as RESP commands for the append-only file.
final class EffectFeed {
    /// Effects are gathered (an append-only file is open); off, nothing here costs more than this test.
    var isOn = false
    /// The effects of every finished command not written yet.
    private(set) var ready: [UInt8] = []
    /// The effects of the top-level command under way.
    private var pending: [UInt8] = []
    /// How many commands `pending` holds (SELECTs not counted).
    private var pendingCount = 0
    /// The database the stream (`ready` then `pending`) last selected (-1: none yet).
    private var selected = -1
    /// Keys deleted because they expired, ever: a command's own changes are
    /// those of `SnapshotFence.changes` less these.
    private(set) var expirations = 0
    /// Set by a handler that added its effects itself: the dispatcher then
    /// adds nothing for it.
    var handled = false

    /// Adds one effect: `arguments` run in database `database`.
    func add(_ database: Int, _ arguments: [[UInt8]]) {
        selectIfNeeded(database)
        appendHeader(arguments.count)
        for argument in arguments { argument.withUnsafeBytes { appendBulk($0) } }
        pendingCount += 1
    }

    /// Adds one effect: `request` itself, run in database `database`.
    func add(_ database: Int, _ request: Request) {
        selectIfNeeded(database)
        appendHeader(request.count)
        for index in request.indices { appendBulk(request.raw(index)) }
        pendingCount += 1
    }

    /// A key of database `database` expired and is gone: a DEL (Redis propagates the same).
    func expired(_ database: Int, _ key: UnsafeRawBufferPointer) {
        expirations += 1
        selectIfNeeded(database)
        appendHeader(2)
        "DEL".utf8.withContiguousStorageIfAvailable { appendBulk(UnsafeRawBufferPointer($0)) }
        appendBulk(key)
        pendingCount += 1
    }

    /// The top-level command ended: its effects join `ready`, in a
    /// MULTI/EXEC when there is more than one (or `transaction`: an EXEC
    /// with at least one).
    func commit(transaction: Bool = false) {
        guard pendingCount > 0 else {
            ready.append(contentsOf: pending)  // a lone SELECT is harmless
            pending.removeAll(keepingCapacity: true)
            return
        }
        if pendingCount > 1 || transaction {
            ready.append(contentsOf: Array("*1\r\n$5\r\nMULTI\r\n".utf8))
            ready.append(contentsOf: pending)
            ready.append(contentsOf: Array("*1\r\n$4\r\nEXEC\r\n".utf8))
        } else {
            ready.append(contentsOf: pending)
        }
        pending.removeAll(keepingCapacity: true)
        pendingCount = 0
    }

    /// Hands over what is ready (the file writes it), leaving an empty buffer.
    func take(into buffer: inout [UInt8]) {
        if buffer.isEmpty {
            swap(&buffer, &ready)
        } else {
            buffer.append(contentsOf: ready)
            ready.removeAll(keepingCapacity: true)
        }
    }

    /// A new file starts (a rewrite's new incr file): its first effect selects its database again.
    func forgetSelection() { selected = -1 }

    /// Whether anything waits to be written.
    var hasReady: Bool { !ready.isEmpty }

    private func selectIfNeeded(_ database: Int) {
        guard database != selected else { return }
        selected = database
        let digits = Array(String(database).utf8)
        appendHeader(2)
        "SELECT".utf8.withContiguousStorageIfAvailable { appendBulk(UnsafeRawBufferPointer($0)) }
        digits.withUnsafeBytes { appendBulk($0) }
    }

    private func appendHeader(_ count: Int) {
        pending.append(UInt8(ascii: "*"))
        appendDecimal(count, to: &pending)
        pending.append(contentsOf: [13, 10])
    }

    private func appendBulk(_ bytes: UnsafeRawBufferPointer) {
        pending.append(UInt8(ascii: "$"))
        appendDecimal(bytes.count, to: &pending)
        pending.append(contentsOf: [13, 10])
        pending.append(bytes: bytes)
        pending.append(contentsOf: [13, 10])
    }
}
