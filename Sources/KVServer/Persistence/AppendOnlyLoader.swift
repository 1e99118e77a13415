// AppendOnlyLoader.swift: start-up with `appendonly yes`: the manifest's
// files are replayed in order (the base, an RDB or RESP file, then each
// incr file) through the dispatcher, as a client with no connection would
// send them, before any client connects. As Redis 7.0 does: a torn tail
// (a command cut short by a crash) of the last file is cut off and the
// rest loaded when `aof-load-truncated` is yes, with Redis's log lines; a
// MULTI without its EXEC at the end is undone the same way; anything else
// (a torn file that is not the last, bytes that are not RESP) stops kvd
// with a message that names the file.
import Glibc

extension Dispatcher {
    /// Replays the files of `appendOnly.manifest`; the keys loaded.
    func loadAppendOnlyFiles() throws(PersistenceError) -> Int {
        let aof = appendOnly
        let files = [aof.manifest.base].compactMap { $0 } + aof.manifest.increments
        for (position, entry) in files.enumerated() {
            let started = monotonicNanoseconds()
            let last = position == files.count - 1
            let path = aof.path(entry.name)
            guard let bytes = try readWholeFile(path) else {
                throw PersistenceError("The append log file \(entry.name) doesn't exist")
            }
            let isBase = entry == aof.manifest.base
            var start = 0
            if bytes.starts(with: Array("REDIS".utf8)) {
                persistenceLog("Reading RDB base file on AOF loading...")
                let input = RDBInput(bytes: bytes)
                let summary: RDBLoader.Summary
                do {
                    summary = try RDBLoader.load(input, into: databases, now: unixMilliseconds())
                } catch {
                    throw PersistenceError(
                        "Error reading the RDB base file \(entry.name), AOF loading aborted: \(error)")
                }
                // A base written by BGREWRITEAOF holds the function libraries too.
                if let error = databases.functions.restore(summary.libraries, policy: .append, engine: scripts) {
                    throw PersistenceError(
                        "Error reading the RDB base file \(entry.name), AOF loading aborted: Failed loading library, \(String(decoding: error.message, as: UTF8.self))"
                    )
                }
                // An old-style AOF (RDB preamble, then commands) goes on after the RDB part.
                start = input.offset
                if start < bytes.count { persistenceLog("Reading the remaining AOF tail...") }
            }
            try replay(bytes, from: start, file: entry.name, path: path, last: last)
            let seconds = Double(monotonicNanoseconds() - started) / 1e9
            persistenceLog("DB loaded from \(isBase ? "base" : "incr") file \(entry.name): \(seconds) seconds")
        }
        return databases.keyCount
    }

    /// The client a file's commands run as: no connection has this id. The
    /// maxmemory gate lets it through, as Redis's loading does: what the
    /// file holds was accepted once.
    static let replayingClient = Int.min

    /// Runs the RESP commands of one file.
    private func replay(
        _ bytes: [UInt8], from start: Int, file: String, path: String, last: Bool
    ) throws(PersistenceError) {
        let session = sessions.session(Dispatcher.replayingClient)
        session.authenticated = true
        defer { _ = sessions.close(id: Dispatcher.replayingClient) }
        var reader = RESPCommandReader(bytes: bytes, from: start)
        var validUpTo = start
        var validBeforeMulti = start
        var out = ReplyWriter()
        // One batch, refilled for each command (its buffers are kept).
        var batch = RequestBatch()
        var truncated = false
        while true {
            let start = reader.position
            let more: Bool
            batch.removeAll()
            do throws(RESPCommandReader.Failure) {
                more = try reader.next(into: &batch)
            } catch {
                guard error == .format else {
                    truncated = true
                    break
                }
                throw PersistenceError(
                    "Bad file format reading the append only file \(file): make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>"
                )
            }
            guard more else { break }
            var unknown: [UInt8]?
            batch.forEach { request in
                // A command kvd does not have (PFADD, XADD from redis-server's
                // file) stops the load, as Redis stops on one it does not know:
                // loading the rest would silently drop those keys.
                guard Dispatcher.command(named: request.raw(0)) != nil else {
                    unknown = Array(request.raw(0))
                    return false
                }
                if equalsIgnoringCase(request.raw(0), "multi") { validBeforeMulti = start }
                execute(request, for: session, into: &out)
                return true
            }
            if let unknown {
                throw PersistenceError(
                    "Unknown command '\(String(decoding: unknown, as: UTF8.self))' reading the append only file \(file)"
                )
            }
            if out.byteCount > 1 << 16 { out = ReplyWriter() }
            validUpTo = reader.position
        }
        if !truncated && session.transaction != nil {
            persistenceLog("Revert incomplete MULTI/EXEC transaction in AOF file \(file)")
            validUpTo = validBeforeMulti
            truncated = true
        }
        guard truncated else { return }
        session.transaction = nil
        if appendOnly.loadTruncated {
            guard last else { throw PersistenceError("Fatal error: the truncated file is not the last file") }
            persistenceLog("!!! Warning: short read while loading the AOF file \(file)!!!")
            persistenceLog("!!! Truncating the AOF \(file) at offset \(validUpTo) !!!")
            guard truncate(path, off_t(validUpTo)) == 0 else {
                throw PersistenceError("Error truncating the AOF file \(file): \(errorText(errno))")
            }
            persistenceLog("AOF \(file) loaded anyway because aof-load-truncated is enabled")
            return
        }
        throw PersistenceError(
            "Unexpected end of file reading the append only file \(file). You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
        )
    }
}

/// Reads RESP commands (`*<n>` then `$<len>` bulks, as an AOF holds them)
/// one at a time from a file's bytes; `#` lines (Redis's annotations) are skipped.
struct RESPCommandReader {
    enum Failure: Error {
        /// The file ends inside a command.
        case truncated
        /// Bytes that are not a command.
        case format
    }

    let bytes: [UInt8]
    private(set) var position = 0

    /// Reads `bytes` from `start` on.
    init(bytes: [UInt8], from start: Int = 0) {
        self.bytes = bytes
        position = start
    }

    /// Appends the next command to `batch` as a request; false at the end of the file.
    mutating func next(into batch: inout RequestBatch) throws(Failure) -> Bool {
        while position < bytes.count && bytes[position] == UInt8(ascii: "#") {
            guard let end = lineEnd(from: position) else { throw .truncated }
            position = end
        }
        guard position < bytes.count else { return false }
        guard bytes[position] == UInt8(ascii: "*") else { throw .format }
        let count = try number(after: UInt8(ascii: "*"))
        guard count >= 1 else { throw .format }
        for _ in 0..<count {
            guard position < bytes.count else { throw .truncated }
            guard bytes[position] == UInt8(ascii: "$") else { throw .format }
            let length = try number(after: UInt8(ascii: "$"))
            guard length >= 0 else { throw .format }
            guard bytes.count - position >= length + 2 else { throw .truncated }
            bytes.withUnsafeBytes {
                batch.appendArgument(UnsafeRawBufferPointer(rebasing: $0[position..<position + length]))
            }
            position += length + 2
        }
        batch.endRequest()
        return true
    }

    /// The position after the `\n` that ends the line at `start`.
    private func lineEnd(from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == 10 { return index + 1 }
            index += 1
        }
        return nil
    }

    /// The number of a `*<n>\r\n` or `$<n>\r\n` line; moves past it.
    private mutating func number(after marker: UInt8) throws(Failure) -> Int {
        guard let end = lineEnd(from: position) else { throw .truncated }
        var digits = bytes[(position + 1)..<(end - 1)]
        if digits.last == 13 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.count <= 18, let value = Int(String(decoding: digits, as: UTF8.self)) else {
            throw .format
        }
        position = end
        return value
    }
}
