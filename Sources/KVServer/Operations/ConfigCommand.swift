// ConfigCommand.swift: CONFIG GET and CONFIG SET. GET answers the settings
// that redis-benchmark and redis-cli ask for, from constants, and the
// encoding thresholds (EncodingLimits), which SET changes at run time, as
// Redis's own test suite does. Any other setting is refused by SET with
// Redis's error rather than accepted and ignored.

let configCommands: [Command] = [
    Command("config", arity: -2, keys: .none) { dispatcher, _, r, out in config(dispatcher, r, &out) }
]

/// The settings CONFIG GET answers that never change (what redis-benchmark and redis-cli ask for).
private let fixedParameters: [(String, String)] = [
    ("appendonly", "no"), ("databases", String(Databases.selectable)), ("maxmemory", "0"),
]

/// A setting CONFIG SET changes: its names (Redis's, then its aliases)
/// and where it lives. `@unchecked Sendable`: a key path is an immutable
/// value (the standard library does not declare it Sendable yet).
private struct LimitParameter: @unchecked Sendable {
    let names: [String]
    let value: ReferenceWritableKeyPath<EncodingLimits, Int>
    let range: ClosedRange<Int>
}

private let limitParameters: [LimitParameter] = [
    .init(names: ["hash-max-listpack-entries", "hash-max-ziplist-entries"], value: \.hashEntries, range: 0...Int.max),
    .init(names: ["hash-max-listpack-value", "hash-max-ziplist-value"], value: \.hashValue, range: 0...Int.max),
    .init(names: ["set-max-intset-entries"], value: \.intsetEntries, range: 0...Int.max),
    .init(names: ["list-max-listpack-size", "list-max-ziplist-size"], value: \.listpackSize, range: Int.min...Int.max),
    .init(names: ["list-compress-depth"], value: \.compressDepth, range: 0...Int(Int32.max)),
    .init(names: ["zset-max-listpack-entries", "zset-max-ziplist-entries"], value: \.zsetEntries, range: 0...Int.max),
    .init(names: ["zset-max-listpack-value", "zset-max-ziplist-value"], value: \.zsetValue, range: 0...Int.max),
]

private func config(_ dispatcher: Dispatcher, _ r: Request, _ out: inout ReplyWriter) {
    let limits = dispatcher.databases.limits
    let persistence = dispatcher.persistence
    if equalsIgnoringCase(r[1], "set") { return configSet(limits, persistence, r, &out) }
    guard equalsIgnoringCase(r[1], "get") else {
        return out.error(bytes: Array("ERR unknown subcommand '".utf8) + r[1] + Array("'. Try CONFIG HELP.".utf8))
    }
    guard r.count >= 3 else { return out.error("ERR wrong number of arguments for 'config|get' command") }
    var parameters = fixedParameters
    parameters.append(("save", SavePoint.text(persistence.savePoints)))
    parameters.append(("stop-writes-on-bgsave-error", persistence.stopWritesOnError ? "yes" : "no"))
    if let file = persistence.file {
        parameters.append(("dir", file.directory))
        parameters.append(("dbfilename", file.name))
    }
    for parameter in limitParameters {
        for name in parameter.names { parameters.append((name, String(limits[keyPath: parameter.value]))) }
    }
    var found: [(String, String)] = []
    for pattern in r.dropFirst(2) {
        for (name, value) in parameters
        where globMatch(lowercased(pattern), Array(name.utf8)) && !found.contains(where: { $0.0 == name }) {
            found.append((name, value))
        }
    }
    out.mapHeader(found.count)
    for (name, value) in found {
        out.bulk(name)
        out.bulk(value)
    }
}

/// CONFIG SET name value [name value ...]: every pair is checked before
/// any is applied, as in Redis.
private func configSet(_ limits: EncodingLimits, _ persistence: Persistence, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count >= 4, r.count % 2 == 0 else {
        return out.error("ERR wrong number of arguments for 'config|set' command")
    }
    var changes: [(ReferenceWritableKeyPath<EncodingLimits, Int>, Int)] = []
    var savePoints: [SavePoint]?
    var stopWrites: Bool?
    for index in stride(from: 2, to: r.count, by: 2) {
        let name = String(decoding: lowercased(r[index]), as: UTF8.self)
        let text = String(decoding: r[index + 1], as: UTF8.self)
        if name == "save" {
            guard let points = SavePoint.parse(text) else {
                return out.error(
                    "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters")
            }
            savePoints = points
            continue
        }
        if name == "stop-writes-on-bgsave-error" {
            guard ["yes", "no"].contains(text.lowercased()) else {
                return out.error(
                    "ERR CONFIG SET failed (possibly related to argument '\(name)') - argument must be 'yes' or 'no'")
            }
            stopWrites = text.lowercased() == "yes"
            continue
        }
        guard let parameter = limitParameters.first(where: { $0.names.contains(name) }) else {
            return out.error(
                bytes: Array("ERR Unknown option or number of arguments for CONFIG SET - '".utf8) + r[index] + [39])
        }
        guard let value = parseInteger(r.raw(index + 1)), parameter.range.contains(value) else {
            return out.error(
                "ERR CONFIG SET failed (possibly related to argument '\(name)') - argument couldn't be parsed into an integer"
            )
        }
        changes.append((parameter.value, value))
    }
    for (path, value) in changes { limits[keyPath: path] = value }
    if let savePoints { persistence.savePoints = savePoints }
    if let stopWrites { persistence.stopWritesOnError = stopWrites }
    out.ok()
}
