// ServerSnapshots.swift: the server's side of snapshots: the settings
// from the command line and the load at start (before the core loop owns
// the dispatcher, so before any client), the save-point timer on the core,
// and the snapshot before exit (SIGTERM), which kvd's main.swift asks for.
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

extension Server {
    /// Core loop: save points checked ten times a second, as Redis's serverCron does.
    func startSavePoints() throws {
        guard options.directory != nil else { return }
        let dispatcher = hop.dispatcher
        let timer = try coreLoop.schedule(every: .milliseconds(100)) {
            dispatcher.withValue { $0.persistence.tick($0.databases, owner: dispatcher) }
        }
        try coreLoop.post { self.savePointTimer = timer }
    }

    /// Core loop, once, as kvd stops (SIGTERM, SIGINT): the save-point
    /// timer stops, and a snapshot is saved when save points are set (as
    /// Redis does: `--save ""` exits without one). It waits for a BGSAVE
    /// still being written, then writes the newest data after it. Later
    /// calls do nothing. Returns false when the save failed.
    @discardableResult
    public func saveFinalSnapshot() -> Bool {
        hop.dispatcher.withValue { dispatcher in
            guard !finalSnapshotTaken else { return true }
            finalSnapshotTaken = true
            savePointTimer?.cancel()
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
