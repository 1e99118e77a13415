// ConfigCommand.swift: CONFIG GET, SET, RESETSTAT, REWRITE and HELP over
// the settings table (ConfigParameters.swift), with Redis 7.0's matching,
// its all-or-nothing SET and its error texts.
import Glibc

let configCommands: [Command] = [
    Command("config", arity: -2, keys: .none) { $0.config($2, &$3) }
]

extension Dispatcher {
    fileprivate func config(_ r: Request, _ out: inout ReplyWriter) {
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "get":
            configGet(r, &out)
        case "set":
            configSet(r, &out)
        case "resetstat":
            stats.reset()
            for keyspace in databases { keyspace.expiredKeys = 0 }
            evictor.evictedKeys = 0
            (databases.reads.hits, databases.reads.misses) = (0, 0)
            resetServerStats()
            out.ok()
        case "rewrite":
            // kvd reads no configuration file: there is none to rewrite.
            out.error("ERR The server is running without a config file")
        case "help":
            out.help(
                "CONFIG",
                [
                    "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
                    "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
                    "RESETSTAT", "    Reset statistics reported by the INFO command.",
                    "REWRITE", "    Rewrite the configuration file.",
                ])
        default:
            out.unknownSubcommand(r, of: "CONFIG")
        }
    }

    /// CONFIG GET pattern [pattern ...]: a name without glob characters is
    /// looked up (and answered under the name as given); a pattern matches
    /// every name and alias, in any case. Each setting once.
    private func configGet(_ r: Request, _ out: inout ReplyWriter) {
        var found: [(name: [UInt8], row: Int)] = []
        func add(_ name: [UInt8], _ row: Int) {
            if !found.contains(where: { $0.row == row || $0.name == name }) { found.append((name, row)) }
        }
        for pattern in r.dropFirst(2) {
            if !pattern.contains(where: {
                $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[")
            }) {
                let row = pattern.withUnsafeBytes { name in
                    ConfigParameter.table.firstIndex { $0.name == ConfigParameter.named(name)?.name }
                }
                if let row { add(pattern, row) }
                continue
            }
            let lower = lowercased(pattern)
            for (row, parameter) in ConfigParameter.table.enumerated() {
                for name in [parameter.name] + parameter.aliases where globMatch(lower, Array(name.utf8)) {
                    add(Array(name.utf8), row)
                }
            }
        }
        out.mapHeader(found.count)
        for (name, row) in found {
            out.bulk(name)
            out.bulk(ConfigParameter.table[row].get(self))
        }
    }

    /// CONFIG SET name value [name value ...]: every pair is checked
    /// before any is applied; a value refused while applying puts back the
    /// ones applied before it, as in Redis.
    private func configSet(_ r: Request, _ out: inout ReplyWriter) {
        guard r.count % 2 == 0 else { return out.error("ERR syntax error") }
        var chosen: [(row: ConfigParameter, value: [UInt8])] = []
        var failure: (name: [UInt8], text: String?)?
        for index in stride(from: 2, to: r.count, by: 2) {
            guard let row = ConfigParameter.named(r.raw(index)) else {
                // The first unknown name is the error, unless another was found first.
                guard failure == nil else { continue }
                return out.error(
                    bytes: Array("ERR Unknown option or number of arguments for CONFIG SET - '".utf8)
                        + ReplyWriter.quoted(r[index])
                        + [UInt8(ascii: "'")])
            }
            guard failure == nil else { continue }
            if case .immutable = row.access {
                failure = (r[index], "can't set immutable config")
            } else if chosen.contains(where: { $0.row.name == row.name }) {
                failure = (r[index], "duplicate parameter")
            }
            chosen.append((row, r[index + 1]))
        }
        if let failure { return configSetFailed(failure.name, failure.text, &out) }
        var applied: [(row: ConfigParameter, old: String)] = []
        for (row, text) in chosen {
            let old = row.get(self)
            var refusal: String?
            switch (row.access, row.parse(text)) {
            case (_, .failure(let error)): refusal = error.text
            case (.settable(let set), .success(let value)): refusal = set(self, value)
            case (.fixed, .success):
                if String(decoding: text, as: UTF8.self) != old {
                    refusal = "kvd does not support changing it (it is '\(old)')"
                }
            case (.immutable, _): refusal = "can't set immutable config"
            }
            if let refusal {
                for (done, previous) in applied.reversed() {
                    if case .settable(let set) = done.access,
                        case .success(let value) = done.parse(Array(previous.utf8))
                    {
                        _ = set(self, value)
                    }
                }
                return configSetFailed(Array(row.name.utf8), refusal.isEmpty ? nil : refusal, &out)
            }
            applied.append((row, old))
        }
        out.ok()
    }

    private func configSetFailed(_ name: [UInt8], _ text: String?, _ out: inout ReplyWriter) {
        out.error(
            bytes: Array("ERR CONFIG SET failed (possibly related to argument '".utf8) + name
                + Array(("')" + (text.map { " - " + $0 } ?? "")).utf8))
    }

    // MARK: - Settings kept by the dispatcher

    /// requirepass: the password new sessions must give ("" for none).
    /// Sessions already authenticated stay so, as in Redis.
    func setPassword(_ password: [UInt8]) {
        sessions.password = password.isEmpty ? nil : password
        settings.passwordSet.store(!password.isEmpty, ordering: .relaxed)
    }

    /// client-output-buffer-limit as Redis shows it: normal, replica, pubsub.
    var outputBufferLimitsText: String {
        let normal = settings.outputBufferLimit
        let pubsub = settings.pubsubOutputBufferLimit
        return "normal \(normal.hard) \(normal.soft) \(normal.softSeconds) slave \(replicaOutputLimit.hard) "
            + "\(replicaOutputLimit.soft) \(replicaOutputLimit.softSeconds) pubsub \(pubsub.hard) \(pubsub.soft) \(pubsub.softSeconds)"
    }

    /// A buffer limit's soft seconds as Redis reads them: strtoll (leading
    /// spaces and a sign allowed), then stored in a C int, which must not be
    /// negative (so 2^31 is refused and 2^32 is 0 seconds, as in Redis).
    private func softSeconds(_ word: [UInt8]) -> Int? {
        guard !word.contains(0) else { return nil }
        return (word + [0]).withUnsafeBufferPointer { buffer -> Int? in
            buffer.withMemoryRebound(to: CChar.self) { text -> Int? in
                var end: UnsafeMutablePointer<CChar>?
                let value = strtoll(text.baseAddress!, &end, 10)
                guard end == UnsafeMutablePointer(mutating: text.baseAddress!) + word.count else { return nil }
                let seconds = Int32(truncatingIfNeeded: value)
                return seconds >= 0 ? Int(seconds) : nil
            }
        }
    }

    /// client-output-buffer-limit's value: groups of class, hard, soft,
    /// seconds; all checked before any is taken.
    func setOutputBufferLimits(_ text: [UInt8]) -> String? {
        let words = text.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { Array($0) }
        guard words.count % 4 == 0 else { return "Wrong number of arguments in buffer limit configuration." }
        var limits: [(class: String, limit: ServerOptions.OutputBufferLimit)] = []
        for start in stride(from: 0, to: words.count, by: 4) {
            let name = String(decoding: lowercased(words[start]), as: UTF8.self)
            guard ["normal", "slave", "replica", "pubsub"].contains(name) else {
                return "Invalid client class specified in buffer limit configuration."
            }
            guard let hard = ConfigParameter.memory(words[start + 1]),
                let soft = ConfigParameter.memory(words[start + 2]),
                let seconds = softSeconds(words[start + 3])
            else { return "Error in hard, soft or soft_seconds setting in buffer limit configuration." }
            limits.append((name, .init(hard: hard, soft: soft, softSeconds: seconds)))
        }
        for (name, limit) in limits {
            switch name {
            case "normal": settings.setOutputBufferLimit(limit)
            case "pubsub": settings.setPubsubOutputBufferLimit(limit)
            default: replicaOutputLimit = limit
            }
        }
        return nil
    }
}
