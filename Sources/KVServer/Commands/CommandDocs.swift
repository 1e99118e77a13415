// CommandDocs.swift: Redis 7.0.15's COMMAND INFO and COMMAND DOCS entries
// (RedisCommandDocs.swift, generated from its command table), read once, on
// the first COMMAND: each entry's bytes in RESP3 and RESP2, its
// subcommands', its ACL categories and its key specs, which COMMAND LIST's
// filters and COMMAND GETKEYS use.

/// One command's (or subcommand's) entries.
struct CommandDocEntry {
    /// Its full name (`get`, `config|get`).
    let name: String
    /// COMMAND INFO's entry and COMMAND DOCS's, in RESP3 and RESP2.
    let info: (resp3: [UInt8], resp2: [UInt8])
    let docs: (resp3: [UInt8], resp2: [UInt8])
    let arity: Int
    let flags: [String]
    /// ACL categories without their `@`.
    let categories: [String]
    /// Its key specs, as Redis's COMMAND INFO gives them.
    let keySpecs: [KeySpecification]
    let subcommands: [CommandDocEntry]

    func bytes(_ which: (resp3: [UInt8], resp2: [UInt8]), _ out: ReplyWriter) -> [UInt8] {
        out.resp3 ? which.resp3 : which.resp2
    }
}

/// One key spec: where the search for keys begins (an argument's index,
/// or after a keyword), how the keys go on from there (a range, or a count
/// read from an argument), and the keys' flags.
struct KeySpecification {
    let flags: [String]
    let begin: (type: String, spec: [String: String])
    let find: (type: String, spec: [String: String])

    /// The positions of this spec's keys in `arguments` (the command name
    /// first), as Redis's getKeysUsingKeySpecs finds them; an empty list
    /// when its keyword is absent; nil when the arguments are invalid for it.
    func positions(in arguments: [[UInt8]]) -> [Int]? {
        func number(_ spec: [String: String], _ key: String) -> Int { Int(spec[key] ?? "") ?? 0 }
        let count = arguments.count
        var first = 0
        switch begin.type {
        case "index":
            first = number(begin.spec, "index")
        case "keyword":
            let keyword = Array((begin.spec["keyword"] ?? "").utf8)
            let from = number(begin.spec, "startfrom")
            let start = from > 0 ? from : count + from
            let end = from > 0 ? count - 1 : 0
            var index = start
            while index != end {
                if index >= count || index < 1 { break }
                if lowercased(arguments[index]) == lowercased(keyword) {
                    first = index + 1
                    break
                }
                index += start <= end ? 1 : -1
            }
            guard first > 0 else { return [] }
        default:
            return nil
        }
        var (last, step) = (0, 1)
        switch find.type {
        case "range":
            step = number(find.spec, "keystep")
            let lastKey = number(find.spec, "lastkey")
            let limit = number(find.spec, "limit")
            if lastKey >= 0 {
                last = first + lastKey
            } else if limit == 0 {
                last = count + lastKey
            } else {
                last = first + ((count - first) / limit + lastKey)
            }
        case "keynum":
            step = number(find.spec, "keystep")
            let numberIndex = number(find.spec, "keynumidx")
            guard numberIndex >= 0, first + numberIndex < count,
                let keys = parseInteger(arguments[first + numberIndex]), keys >= 0
            else { return nil }
            first += number(find.spec, "firstkey")
            // Redis takes the count as a C int, and a count past the
            // arguments (or none) makes the whole command keyless.
            let truncated = Int(Int32(truncatingIfNeeded: keys))
            guard truncated > 0, first + truncated <= count else { return nil }
            last = first + truncated - 1
        default:
            return nil
        }
        // Past the end: the command itself reports its arity (Redis returns no key for it).
        return stride(from: first, through: last, by: max(step, 1)).filter { $0 < count }
    }
}

/// Redis's command table, by command name. Any thread: a busy script's
/// gate reads it too.
enum CommandDocs {
    /// The entries, read on first use (not at startup), once: a static
    /// `let` is initialized lazily and thread-safely.
    static let byName: [String: CommandDocEntry] = {
        var table: [String: CommandDocEntry] = [:]
        for row in redisCommandDocs {
            let info = Array(row.info.utf8)
            let docs = Array(row.docs.utf8)
            table[row.name] = entry(info: info, infoRange: 0..<info.count, docs: docs, docsRange: 0..<docs.count)
        }
        return table
    }()

    /// The entry for `name` (any case), `container|sub` for a subcommand.
    static func entry(_ name: [UInt8]) -> CommandDocEntry? {
        let lower = String(decoding: lowercased(name), as: UTF8.self)
        let parts = lower.split(separator: "|", maxSplits: 1)
        guard let command = byName[String(parts.first ?? "")] else { return nil }
        guard parts.count == 2 else { return command }
        return command.subcommands.first { $0.name == lower }
    }

    /// Subcommands kvd runs that Redis 7.0.15's table lacks, with their
    /// arities (7.2's CLIENT SETINFO, as 7.2's table has it).
    static let kvdOwnSubcommands: [String: Int] = ["client|setinfo": 4]

    /// Why Redis refuses a container's subcommand before anything runs it.
    enum SubcommandRefusal: Equatable {
        /// Redis's table has no such subcommand (CLIENT NOSUCH).
        case unknown
        /// The count is wrong for it; its full name (`config|help`).
        case wrongArity(String)
    }

    /// Why Redis refuses `request` (`container sub ...`, a container of
    /// Redis's table) before running it, as its lookupCommand and arity
    /// check do; nil when it would run it.
    static func subcommandRefusal(_ request: Request) -> SubcommandRefusal? {
        // No subcommand's name is this long: a giant one is not copied.
        guard request.raw(1).count <= 64 else { return .unknown }
        let name = String(
            decoding: lowercased(request[0]) + [UInt8(ascii: "|")] + lowercased(request[1]), as: UTF8.self)
        guard let arity = entry(Array(name.utf8))?.arity ?? kvdOwnSubcommands[name] else { return .unknown }
        return (arity > 0 ? request.count == arity : request.count >= -arity) ? nil : .wrongArity(name)
    }

    private static func entry(info: [UInt8], infoRange: Range<Int>, docs: [UInt8], docsRange: Range<Int>?)
        -> CommandDocEntry
    {
        let fields = RESP3.elements(info, infoRange)
        let name = RESP3.text(info, fields[0])
        var subcommands: [CommandDocEntry] = []
        // The docs' "subcommands" map: name, docs, name, docs, ...
        var subcommandDocs: [String: Range<Int>] = [:]
        if let docsRange {
            let docFields = RESP3.elements(docs, docsRange)
            for key in stride(from: 0, to: docFields.count, by: 2)
            where RESP3.text(docs, docFields[key]) == "subcommands" {
                let inner = RESP3.elements(docs, docFields[key + 1])
                for position in stride(from: 0, to: inner.count, by: 2) {
                    subcommandDocs[RESP3.text(docs, inner[position])] = inner[position + 1]
                }
            }
        }
        for sub in RESP3.elements(info, fields[9]) {
            let subName = RESP3.text(info, RESP3.elements(info, sub)[0])
            subcommands.append(entry(info: info, infoRange: sub, docs: docs, docsRange: subcommandDocs[subName]))
        }
        let keySpecs = RESP3.elements(info, fields[8]).map { spec -> KeySpecification in
            let map = RESP3.map(info, spec)
            func part(_ name: String) -> (type: String, spec: [String: String]) {
                guard let range = map[name] else { return ("unknown", [:]) }
                let inner = RESP3.map(info, range)
                var values: [String: String] = [:]
                let spec: [String: Range<Int>] = inner["spec"].map { RESP3.map(info, $0) } ?? [:]
                for (key, value) in spec { values[key] = RESP3.text(info, value) }
                return (inner["type"].map { RESP3.text(info, $0) } ?? "unknown", values)
            }
            return KeySpecification(
                flags: map["flags"].map { RESP3.elements(info, $0).map { RESP3.text(info, $0) } } ?? [],
                begin: part("begin_search"), find: part("find_keys"))
        }
        let infoBytes = Array(info[infoRange])
        let docsBytes = docsRange.map { Array(docs[$0]) } ?? Array("%0\r\n".utf8)
        return CommandDocEntry(
            name: name, info: (infoBytes, RESP3.downgraded(infoBytes)), docs: (docsBytes, RESP3.downgraded(docsBytes)),
            arity: Int(RESP3.text(info, fields[1])) ?? 0,
            flags: RESP3.elements(info, fields[2]).map { RESP3.text(info, $0) },
            categories: RESP3.elements(info, fields[6]).map { String(RESP3.text(info, $0).dropFirst()) },
            keySpecs: keySpecs, subcommands: subcommands)
    }
}

/// Just enough RESP3 reading for Redis's own command table (trusted data).
enum RESP3 {
    /// The end of the value that starts at `start`.
    static func end(_ bytes: [UInt8], from start: Int) -> Int {
        let (count, body) = header(bytes, start)
        switch bytes[start] {
        case UInt8(ascii: "$"), UInt8(ascii: "="), UInt8(ascii: "!"): return body + count + 2
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: "%"):
            var position = body
            for _ in 0..<(bytes[start] == UInt8(ascii: "%") ? 2 * count : count) {
                position = end(bytes, from: position)
            }
            return position
        default: return body
        }
    }

    /// The number in the header line at `start`, and where the line ends.
    private static func header(_ bytes: [UInt8], _ start: Int) -> (Int, Int) {
        var position = start + 1
        var negative = false
        var value = 0
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        while bytes[position] != 13 {
            value = value &* 10 &+ Int(bytes[position] &- 48)
            position += 1
        }
        return (negative ? -value : value, position + 2)
    }

    /// The ranges of the elements of the aggregate in `range` (a map's keys and values alternate).
    static func elements(_ bytes: [UInt8], _ range: Range<Int>) -> [Range<Int>] {
        let start = range.lowerBound
        let (count, body) = header(bytes, start)
        var ranges: [Range<Int>] = []
        var position = body
        for _ in 0..<(bytes[start] == UInt8(ascii: "%") ? 2 * count : max(count, 0)) {
            let next = end(bytes, from: position)
            ranges.append(position..<next)
            position = next
        }
        return ranges
    }

    /// A map's values by their (text) keys.
    static func map(_ bytes: [UInt8], _ range: Range<Int>) -> [String: Range<Int>] {
        let fields = elements(bytes, range)
        var result: [String: Range<Int>] = [:]
        for key in stride(from: 0, to: fields.count - 1, by: 2) { result[text(bytes, fields[key])] = fields[key + 1] }
        return result
    }

    /// A bulk, simple string or integer's text.
    static func text(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        let (_, body) = header(bytes, range.lowerBound)
        switch bytes[range.lowerBound] {
        case UInt8(ascii: "$"): return String(decoding: bytes[body..<(range.upperBound - 2)], as: UTF8.self)
        default: return String(decoding: bytes[(range.lowerBound + 1)..<(range.upperBound - 2)], as: UTF8.self)
        }
    }

    /// The same value in RESP2: a map becomes an array of keys and values, a set an array.
    static func downgraded(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var position = 0
        while position < bytes.count {
            let kind = bytes[position]
            let (count, body) = header(bytes, position)
            switch kind {
            case UInt8(ascii: "%"):
                out += Array("*\(2 * count)\r\n".utf8)
                position = body
            case UInt8(ascii: "~"):
                out += Array("*\(count)\r\n".utf8)
                position = body
            case UInt8(ascii: "$"):
                let next = body + count + 2
                out += bytes[position..<next]
                position = next
            default:
                out += bytes[position..<body]
                position = body
            }
        }
        return out
    }
}
