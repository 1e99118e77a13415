// AppendOnlyBase.swift: a rewrite's base in RESP, for
// `aof-use-rdb-preamble no` (Redis's rewriteAppendOnlyFileRio): a
// FUNCTION LOAD per function library, then per database a SELECT, then per key the commands that rebuild it (SET,
// RPUSH, SADD, HSET, ZADD, at most 64 elements per command as Redis
// writes them) and a PEXPIREAT for its deadline. Keys already past their
// deadline are left out, as Redis leaves them. Runs on the save thread,
// from the copy-on-write view.
import Glibc

enum AppendOnlyBase {
    /// Elements per command (Redis's AOF_REWRITE_ITEMS_PER_CMD).
    static let elementsPerCommand = 64

    /// Writes `snapshot` as RESP commands to `out`.
    static func write(_ snapshot: Snapshot, to out: RDBOutput, now: Int64) throws {
        // The function libraries first, as Redis's rewrite writes them.
        for code in snapshot.functionLibraries {
            try command(out, [Array("FUNCTION".utf8), Array("LOAD".utf8), code])
        }
        for (index, table) in snapshot.databases.enumerated() where !table.isEmpty {
            try command(out, [Array("SELECT".utf8), Array(String(index).utf8)])
            for (key, entry) in table {
                if let deadline = entry.expiresAt, deadline <= now { continue }
                let name = key.bytes
                if let collection = entry.collection {
                    try rebuild(out, name, collection)
                } else {
                    try command(out, [Array("SET".utf8), name, entry.value])
                }
                if let deadline = entry.expiresAt {
                    try command(out, [Array("PEXPIREAT".utf8), name, Array(String(deadline).utf8)])
                }
            }
        }
        try out.finishWithoutChecksum()
    }

    /// The commands that rebuild one collection, in chunks.
    private static func rebuild(_ out: RDBOutput, _ key: [UInt8], _ collection: Collection) throws {
        let verb: String
        var items: [[UInt8]] = []
        switch collection {
        case .list(let list):
            verb = "RPUSH"
            for index in 0..<list.count { items.append(list[index]) }
        case .set(let set):
            verb = "SADD"
            for index in 0..<set.count { items.append(set[index]) }
        case .hash(let hash):
            verb = "HSET"
            hash.forEachEntry { field, value in
                items += [Array(field), Array(value)]
                return true
            }
        case .sortedSet(let sortedSet):
            verb = "ZADD"
            var node = sortedSet.order.first
            while let current = node {
                items += [Array(scoreText(current.score).utf8), current.member]
                node = current.next
            }
        }
        let width = verb == "HSET" || verb == "ZADD" ? 2 : 1
        let chunk = elementsPerCommand * width
        var start = 0
        while start < items.count {
            let end = min(start + chunk, items.count)
            try command(out, [Array(verb.utf8), key] + items[start..<end])
            start = end
        }
    }

    /// A score as ZADD reads it back exactly: the shortest round-trip form, `inf` and `-inf`.
    private static func scoreText(_ score: Double) -> String {
        if score.isInfinite { return score > 0 ? "inf" : "-inf" }
        return "\(score)"
    }

    private static func command(_ out: RDBOutput, _ arguments: [[UInt8]]) throws {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.count)\r\n".utf8)
            bytes += argument
            bytes += [13, 10]
        }
        try out.bytes(bytes)
    }
}
