// ServerSnapshots.swift: the server's side of snapshots: the settings
// from the command line and the load at start (before the core loop owns
// the dispatcher, so before any client), the save points' checks (on the
// core's ticks, ServerCron.swift), and the snapshot before exit (SIGTERM),
// which kvd's main.swift asks for.
import Glibc
import MainLoop

extension Persistence {
    /// Applies `options` to `dispatcher` and loads the snapshot, on the
    /// thread that makes the server; the error, if any, is what `start`
    /// throws (kvd refuses to start on a file it cannot load).
    static func prepare(_ dispatcher: Dispatcher, _ options: ServerOptions) -> PersistenceError? {
        guard let directory = options.directory else { return nil }
        guard let resolved = realpath(directory, nil) else {
            return PersistenceError("Can't chdir to '\(directory)': \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        let file = SnapshotFile(directory: String(cString: resolved), name: options.dbFilename)
        let persistence = dispatcher.persistence
        persistence.file = file
        persistence.savePoints = options.savePoints
        persistence.stopWritesOnError = options.stopWritesOnBgsaveError
        dispatcher.appendOnly.configure(options, directory: String(cString: resolved))
        if options.appendOnly { return AppendOnlyFile.prepare(dispatcher) }
        let started = monotonicNanoseconds()
        do {
            guard let summary = try file.load(into: dispatcher.databases) else { return nil }
            if let error = dispatcher.databases.functions.restore(
                summary.libraries, policy: .append, engine: dispatcher.scripts)
            {
                return PersistenceError(
                    "cannot load the snapshot: Failed loading library, \(String(decoding: error.message, as: UTF8.self))"
                )
            }
            persistence.loaded = summary
            dispatcher.databases.fence.changes = 0
            let seconds = Double(monotonicNanoseconds() - started) / 1e9
            let line =
                "kvd: DB loaded from disk: \(summary.keys) keys (\(summary.expired) expired, dropped) in \(seconds) seconds\n"
            var text = line
            text.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
            return nil
        } catch {
            return PersistenceError("cannot load the snapshot: \(error.description)")
        }
    }
}

extension AppendOnlyFile {
    /// The command line's settings, and the directory (`--dir`, resolved).
    func configure(_ options: ServerOptions, directory: String) {
        self.directory = directory
        fileName = options.appendFilename
        directoryName = options.appendDirname
        fsyncPolicy = options.appendFsync
        loadTruncated = options.aofLoadTruncated
        useRDBPreamble = options.aofUseRDBPreamble
    }

    /// Redis 7.0's upgrade of a single-file AOF (`<dir>/appendonly.aof`,
    /// from Redis before 7.0) with no manifest yet: the file moves into the
    /// directory and becomes its base (RESP, or an RDB preamble with
    /// commands after it); nothing happens otherwise.
    func upgradeSingleFile() throws(PersistenceError) {
        let old = "\(directory ?? ".")/\(fileName)"
        var status = stat()
        guard stat(old, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
            try AppendOnlyManifest.load(directory: folder, fileName: fileName) == nil
        else { return }
        guard rename(old, path(fileName)) == 0 else { throw PersistenceError.system("rename", old) }
        var upgraded = AppendOnlyManifest()
        upgraded.base = .init(name: fileName, sequence: 1)
        try upgraded.persist(directory: folder, fileName: fileName)
        try syncDirectory(directory ?? ".")
        persistenceLog("Successfully migrated an old-style AOF into the AOF directory")
    }

    /// Start-up with `appendonly yes`: the manifest's files are loaded (not
    /// dump.rdb, as with Redis), or, with none, an empty base is written;
    /// then the last incr file (a new one if none) is opened and the
    /// manifest written. The error, if any, stops kvd.
    static func prepare(_ dispatcher: Dispatcher) -> PersistenceError? {
        let aof = dispatcher.appendOnly
        let started = monotonicNanoseconds()
        do {
            if mkdir(aof.folder, 0o755) != 0 && errno != EEXIST {
                throw PersistenceError("Can't open or create append-only dir \(aof.folder): \(errorText(errno))")
            }
            try aof.upgradeSingleFile()
            if let manifest = try AppendOnlyManifest.load(directory: aof.folder, fileName: aof.fileName) {
                aof.manifest = manifest
                let keys = try dispatcher.loadAppendOnlyFiles()
                dispatcher.databases.fence.changes = 0
                let seconds = Double(monotonicNanoseconds() - started) / 1e9
                persistenceLog("DB loaded from append only file: \(keys) keys in \(seconds) seconds")
            } else {
                // An empty dataset gets a base file at once, as Redis does.
                let base = AppendOnlyManifest.Entry(
                    name: AppendOnlyManifest.baseName(aof.fileName, 1, rdb: aof.useRDBPreamble), sequence: 1)
                aof.baseSize = try AppendOnlyFile.writeBase(
                    Snapshot(dispatcher.databases), to: aof.path(base.name), rdb: aof.useRDBPreamble
                ).get()
                aof.manifest.base = base
                persistenceLog("Creating AOF base file \(base.name) on server start")
            }
            if aof.manifest.increments.isEmpty {
                aof.manifest.increments = [.init(name: AppendOnlyManifest.incrementName(aof.fileName, 1), sequence: 1)]
                persistenceLog("Creating AOF incr file \(aof.manifest.increments[0].name) on server start")
            }
            try aof.switchTo(
                aof.manifest.increments[aof.manifest.increments.count - 1], feed: dispatcher.databases.feed)
            try aof.manifest.persist(directory: aof.folder, fileName: aof.fileName)
            dispatcher.databases.feed.isOn = true
            return nil
        } catch {
            return PersistenceError("cannot start the append-only file: \(error)")
        }
    }
}

extension Server {
    /// Any thread: the save points and the append-only file checked ten
    /// times a second by the core's ticks (ServerCron.swift), as Redis's
    /// serverCron does.
    func startSavePoints() throws {
        guard options.directory != nil else { return }
        try hop.dispatcher.post { $0.cron.checksPersistence = true }
    }

    /// Core loop, once, as kvd stops (SIGTERM, SIGINT), after `shutdown`
    /// (which stops the save points' checks; this stops them too when
    /// called without it): a snapshot is saved when save points are set (as
    /// Redis does: `--save ""` exits without one). It waits for a BGSAVE
    /// still being written, then writes the newest data after it. Later
    /// calls do nothing. Returns false when the save failed.
    @discardableResult
    public func saveFinalSnapshot() -> Bool {
        hop.dispatcher.withValue { dispatcher in
            guard !finalSnapshotTaken else { return true }
            finalSnapshotTaken = true
            dispatcher.cron.checksPersistence = false
            // The log's last effects are written and fsynced (Redis does the same on exit).
            dispatcher.appendOnly.stop(dispatcher.databases.feed)
            let persistence = dispatcher.persistence
            guard persistence.file != nil, !persistence.savePoints.isEmpty, !persistence.savedForExit else {
                return true
            }
            savingFinalSnapshot.store(true, ordering: .releasing)
            defer { savingFinalSnapshot.store(false, ordering: .releasing) }
            log("kvd: saving the final RDB snapshot before exiting")
            return persistence.saveNow(dispatcher.databases)
        }
    }

    /// Any thread: the final snapshot is being written (an exit deadline waits for it).
    public var isSavingFinalSnapshot: Bool { savingFinalSnapshot.load(ordering: .acquiring) }
}
