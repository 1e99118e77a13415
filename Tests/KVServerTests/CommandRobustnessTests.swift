// CommandRobustnessTests.swift: every command, fed arguments chosen to hit
// edge cases (extreme integers, empty strings, options in the wrong place,
// offsets past the limits), answers each request with exactly one well-formed reply and
// never traps. A trap here (an overflow, an index out of range) would kill
// the test process, so a regression cannot pass silently.
import Testing

@testable import KVServer

@Suite struct CommandRobustnessTests {
    /// Values that sit on the edges of Redis's argument rules.
    static let vocabulary = [
        "0", "1", "-1", "2", "7", "16", "100", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "99999999999999999999", "4294967296", "1.5", "-0.0", "inf", "nan",
        "1e400", "", "abc", " 1", "k", "k2", "*", "EX", "PX", "EXAT", "PXAT", "NX", "XX", "GT", "LT", "KEEPTTL",
        "GET", "PERSIST", "IDX", "LEN", "WITHMATCHLEN", "MINMATCHLEN", "BIT", "BYTE", "DB", "REPLACE", "MATCH",
        "COUNT", "TYPE", "ID", "ADDR", "SKIPME", "yes", "AUTH", "SETNAME", "default", "FLUSH", "ASYNC",
        "SETINFO", "LIB-NAME", "KILL", "LIST", "ENCODING", "FREQ",
        // SORT's, the ranges', the pops' and the moves' words, which the
        // words above never reached (PartialQuickSortTests holds the trap
        // of SORT nokey BY x*, which random words are unlikely to spell).
        "BY", "x*", "nosort", "#", "k*->f", "LIMIT", "ALPHA", "DESC", "STORE", "WITHSCORES", "REV", "BYSCORE",
        "BYLEX", "[a", "(1", "-", "+", "-inf", "+inf", "LEFT", "RIGHT", "MIN", "MAX", "BEFORE", "AFTER", "RANK",
        "MAXLEN", "CH", "INCR", "WITHVALUES", "STOREDIST", "WEIGHTS", "AGGREGATE", "FROMLONLAT", "BYRADIUS", "km",
    ].map { Array($0.utf8) }

    @Test func everyCommandAnswersEveryRequestOnceWithoutTrapping() {
        let dispatcher = Dispatcher()
        var random = SeededGenerator(seed: 0x5EED)  // the same requests on every run
        // Commands whose effect would end the session's usefulness are kept:
        // QUIT only answers +OK here, RESET and FLUSHALL are fine to repeat.
        let names = Dispatcher.rows.map { Array($0.name.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        for name in names {
            var monitoring = false
            // PFSELFTEST adds ten million elements (seconds on a debug
            // build) and takes no arguments: a few requests are enough.
            let requests = name == Array("pfselftest".utf8) ? 8 : 300
            for _ in 0..<requests {
                var batch = RequestBatch()
                // Seed a string the command can work on, then the command.
                for argument in ["set", "k", "12"] { batch.appendArgument(Array(argument.utf8)) }
                batch.endRequest()
                batch.appendArgument(name)
                let arguments = Int.random(in: 0...6, using: &random)
                for _ in 0..<arguments {
                    batch.appendArgument(Self.vocabulary.randomElement(using: &random)!)
                }
                batch.endRequest()
                let (replies, rest) = dispatcher.execute(batch, client: 1)
                #expect(rest == nil)
                // A blocking command that parked the client answers later
                // (here never: the timeout is ended at once, its reply dropped).
                let parked = dispatcher.unblock(1, withError: false)
                let bytes = replies.chunks.flatMap { $0 }
                let count = countReplies(bytes)
                // Redis's exceptions: a subscription command answers one
                // push per name (one when it has none to give), and a
                // second MONITOR is ignored, with no reply.
                let expected: Int
                switch String(decoding: name, as: UTF8.self) {
                case "subscribe", "ssubscribe", "psubscribe", "unsubscribe", "sunsubscribe", "punsubscribe":
                    expected = 1 + max(1, arguments)
                case "monitor" where arguments == 0:
                    expected = monitoring ? 1 : 2
                    monitoring = true
                default:
                    expected = parked ? 1 : 2
                }
                #expect(
                    count == expected,
                    "\(String(decoding: name, as: UTF8.self)): \(count) replies in \(String(decoding: bytes, as: UTF8.self).debugDescription)"
                )
            }
            // Leave MULTI and WATCH between commands, as a client would.
            var reset = RequestBatch()
            reset.appendArgument(Array("reset".utf8))
            reset.endRequest()
            _ = dispatcher.execute(reset, client: 1)
        }
    }

    /// The number of complete RESP2/RESP3 replies in `bytes`; -1 when they
    /// do not parse exactly.
    private func countReplies(_ bytes: [UInt8]) -> Int {
        var index = 0
        var count = 0
        func line() -> [UInt8]? {
            guard let end = bytes[index...].firstIndex(of: 13), end + 1 < bytes.count, bytes[end + 1] == 10 else {
                return nil
            }
            defer { index = end + 2 }
            return Array(bytes[index..<end])
        }
        func reply() -> Bool {
            guard index < bytes.count, let header = line(), let type = header.first else { return false }
            let number = Int(String(decoding: header.dropFirst(), as: UTF8.self))
            switch type {
            case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "_"), UInt8(ascii: ","),
                UInt8(ascii: "#"):
                return true
            case UInt8(ascii: "$"), UInt8(ascii: "="):
                guard let length = number else { return false }
                if length < 0 { return true }
                guard index + length + 2 <= bytes.count else { return false }
                index += length + 2
                return bytes[index - 2] == 13 && bytes[index - 1] == 10
            case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: "%"):
                guard let elements = number else { return false }
                for _ in 0..<max(elements, 0) * (type == UInt8(ascii: "%") ? 2 : 1) where !reply() { return false }
                return true
            default:
                return false
            }
        }
        while index < bytes.count {
            guard reply() else { return -1 }
            count += 1
        }
        return count
    }
}

/// xorshift64*: a reproducible stream of requests (a failure names a seed
/// that replays it, not a chance).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
