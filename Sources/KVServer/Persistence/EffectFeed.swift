// EffectFeed.swift: what the append-only file is fed: each write in the
// form that replays to the same data (Redis's propagation), in RESP, on
// the core. The dispatcher adds the command it ran (or its rewrite,
// EffectRewrites.swift), the keyspace adds a DEL for each key that
// expires, and the handlers whose effect is not their request (SPOP, the
// blocking pops) add what they did themselves. Core loop only, shared by
// a dispatcher's databases like their clock.
//
// One top-level command's effects are committed when it ends, wrapped in
// MULTI/EXEC when they are more than one (a script, a transaction, a lazy
// expiry before a write), so a replay applies all of them or, for a torn
// tail, none. What is committed is what the next write(2) sends
// (AppendOnlyFile.flush), once per core job.

private let multi = Array("*1\r\n$5\r\nMULTI\r\n".utf8)
private let exec = Array("*1\r\n$4\r\nEXEC\r\n".utf8)

/// The effects of writes, as RESP commands for the append-only file.
final class EffectFeed {
    /// Effects are gathered (an append-only file is open); off, nothing here costs more than this test.
    var isOn = false
    /// The effects not written yet: those of finished commands (up to
    /// `pendingStart`), then those of the top-level command under way.
    /// One buffer, so a lone command's effect is never copied on commit.
    private var buffer: [UInt8] = []
    /// Where the command under way's effects start in `buffer`.
    private var pendingStart = 0
    /// How many commands the command under way logged (SELECTs not counted).
    private var pendingCount = 0
    /// The database the stream (finished, then pending effects) last selected (-1: none yet).
    private var selected = -1
    /// Set by a handler that added its effects itself: the dispatcher then
    /// adds nothing for it.
    var handled = false
    /// A script called `redis.set_repl` without `REPL_AOF`: its commands'
    /// effects are left out (expirations are still logged), as Redis leaves
    /// them out of its AOF. Reset when the script ends.
    var scriptLeavesOut = false

    /// Adds one effect: `arguments` run in database `database`.
    func add(_ database: Int, _ arguments: [[UInt8]]) {
        guard !scriptLeavesOut else { return }
        selectIfNeeded(database)
        appendHeader(arguments.count)
        for argument in arguments { argument.withUnsafeBytes { appendBulk($0) } }
        pendingCount += 1
    }

    /// Adds one effect: `request` itself, run in database `database`.
    func add(_ database: Int, _ request: Request) {
        guard !scriptLeavesOut else { return }
        selectIfNeeded(database)
        appendHeader(request.count)
        for index in request.indices { appendBulk(request.raw(index)) }
        pendingCount += 1
    }

    /// A key of database `database` expired and is gone: a DEL (Redis propagates the same).
    func expired(_ database: Int, _ key: UnsafeRawBufferPointer) {
        selectIfNeeded(database)
        appendHeader(2)
        "DEL".utf8.withContiguousStorageIfAvailable { appendBulk(UnsafeRawBufferPointer($0)) }
        appendBulk(key)
        pendingCount += 1
    }

    /// The top-level command ended: its effects join the finished ones,
    /// in a MULTI/EXEC when there is more than one (or `transaction`: an
    /// EXEC with at least one).
    /// With `separately`, each effect stands on its own, however many
    /// (evictions, which Redis propagates without MULTI).
    func commit(transaction: Bool = false, separately: Bool = false) {
        if !separately && (pendingCount > 1 || (transaction && pendingCount > 0)) {
            buffer.insert(contentsOf: multi, at: pendingStart)
            buffer.append(contentsOf: exec)
        }
        pendingStart = buffer.count
        pendingCount = 0
    }

    /// Hands over the finished effects (the file writes them); call after
    /// `commit`, with nothing pending. Leaves `into`'s old buffer, emptied, in its place.
    func take(into destination: inout [UInt8]) {
        precondition(pendingStart == buffer.count, "EffectFeed.take: a command's effects are still pending")
        if destination.isEmpty {
            swap(&destination, &buffer)
        } else {
            destination.append(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        pendingStart = 0
    }

    /// A new file starts (a rewrite's new incr file): its first effect selects its database again.
    func forgetSelection() { selected = -1 }

    /// Whether finished effects wait to be written.
    var hasReady: Bool { pendingStart > 0 }

    private func selectIfNeeded(_ database: Int) {
        guard database != selected else { return }
        selected = database
        let digits = Array(String(database).utf8)
        appendHeader(2)
        "SELECT".utf8.withContiguousStorageIfAvailable { appendBulk(UnsafeRawBufferPointer($0)) }
        digits.withUnsafeBytes { appendBulk($0) }
    }

    private func appendHeader(_ count: Int) {
        buffer.append(UInt8(ascii: "*"))
        appendDecimal(count, to: &buffer)
        buffer.append(13)
        buffer.append(10)
    }

    private func appendBulk(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(UInt8(ascii: "$"))
        appendDecimal(bytes.count, to: &buffer)
        buffer.append(13)
        buffer.append(10)
        buffer.append(bytes: bytes)
        buffer.append(13)
        buffer.append(10)
    }
}
