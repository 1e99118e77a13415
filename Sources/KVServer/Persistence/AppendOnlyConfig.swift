// AppendOnlyConfig.swift: the append-only file's rows of CONFIG GET/SET,
// with Redis 7.0's names. `appendonly yes` at run time starts the AOF
// with a rewrite, as Redis does (the files become the AOF when it is
// done); `no` stops logging at once. The file and directory names are
// given on the command line only (Redis protects them too).

extension ConfigParameter {
    /// The append-only rows (ConfigParameter.table ends with them).
    static let appendOnlyParameters: [ConfigParameter] = [
        ConfigParameter(
            name: "appendonly", kind: .bool,
            access: .settable { dispatcher, value in dispatcher.setAppendOnly(value.bool) },
            get: { $0.appendOnly.isOn || $0.appendOnly.turningOn ? "yes" : "no" }),
        ConfigParameter(
            name: "appendfsync", kind: .text,
            access: .settable { dispatcher, value in
                guard let policy = AppendFsync(rawValue: String(decoding: lowercased(value.text), as: UTF8.self))
                else { return "argument(s) must be one of the following: always, everysec, no" }
                dispatcher.appendOnly.fsyncPolicy = policy
                return nil
            },
            get: { $0.appendOnly.fsyncPolicy.rawValue }),
        ConfigParameter(
            name: "aof-load-truncated", kind: .bool,
            access: .settable { dispatcher, value in
                dispatcher.appendOnly.loadTruncated = value.bool
                return nil
            },
            get: { $0.appendOnly.loadTruncated ? "yes" : "no" }),
        ConfigParameter(
            name: "aof-use-rdb-preamble", kind: .bool,
            access: .settable { dispatcher, value in
                dispatcher.appendOnly.useRDBPreamble = value.bool
                return nil
            },
            get: { $0.appendOnly.useRDBPreamble ? "yes" : "no" }),
        ConfigParameter(
            name: "auto-aof-rewrite-percentage", kind: .integer(0...Int(Int32.max)),
            access: .settable { dispatcher, value in
                dispatcher.appendOnly.autoRewritePercentage = value.integer
                return nil
            },
            get: { String($0.appendOnly.autoRewritePercentage) }),
        ConfigParameter(
            name: "auto-aof-rewrite-min-size", kind: .memory(0...Int.max),
            access: .settable { dispatcher, value in
                dispatcher.appendOnly.autoRewriteMinimumSize = value.integer
                return nil
            },
            get: { String($0.appendOnly.autoRewriteMinimumSize) }),
        ConfigParameter(name: "appendfilename", kind: .text, access: .immutable, get: { $0.appendOnly.fileName }),
        ConfigParameter(name: "appenddirname", kind: .text, access: .immutable, get: { $0.appendOnly.directoryName }),
    ]
}

extension Dispatcher {
    /// CONFIG SET appendonly: on starts a rewrite whose base and new incr
    /// file become the AOF; off writes what is gathered, fsyncs and stops.
    func setAppendOnly(_ on: Bool) -> String? {
        let aof = appendOnly
        guard on else {
            aof.turningOn = false
            aof.stop(databases.feed)
            return nil
        }
        guard !aof.isOn else { return nil }
        guard aof.directory != nil else { return "the append-only file needs a directory (--dir)" }
        // Sequence numbers go on from the files a previous run left.
        if let manifest = try? AppendOnlyManifest.load(directory: aof.folder, fileName: aof.fileName) {
            aof.manifest = manifest
        }
        aof.turningOn = true
        if let error = startAppendOnlyRewrite() {
            aof.turningOn = false
            return "Failed to start the append-only file: \(error)"
        }
        return nil
    }
}
