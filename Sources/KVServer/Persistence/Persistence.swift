// Persistence.swift: what the core knows about snapshots: the settings,
// Redis's counters (INFO persistence, LASTSAVE), and the lifecycle of a
// BGSAVE. Core loop only, owned by the dispatcher.
//
// Threads: the core never writes to disk while serving. BGSAVE takes a
// point-in-time view (Snapshot.swift: copy-on-write tables, collections
// copied before a change while the view is open) and posts it to the save
// thread, a MainLoop loop of its own ("kvd-save"), which writes, fsyncs
// and renames the file, then posts the result back to the core through
// the dispatcher's LoopBound. Only then does the core close the fence and
// update its counters: one post each way per snapshot, no lock. SAVE and
// the snapshot at shutdown run on the save thread too, while the core
// waits (postAndWait): the save thread is serial, so they come after a
// BGSAVE still writing, and the newest snapshot is the one that stays.
import Glibc
import MainLoop
import Synchronization

/// Snapshot settings and state. Core loop only.
final class Persistence {
    /// Where snapshots go; nil: persistence is off (a server made without
    /// a directory, as the library's tests make them).
    var file: SnapshotFile?
    /// When a BGSAVE starts by itself (`save`).
    var savePoints: [SavePoint] = []
    /// Redis's `stop-writes-on-bgsave-error`.
    var stopWritesOnError = true

    /// Unix seconds of the last successful save (LASTSAVE); the start time at first.
    private(set) var lastSave = Int64(time(nil))
    /// Whether the last BGSAVE succeeded.
    private(set) var lastBackgroundSaveOK = true
    /// How long the last BGSAVE took, in seconds (-1: none yet).
    private(set) var lastBackgroundSaveSeconds = -1
    /// Successful saves since start (`rdb_saves`).
    private(set) var saves = 0
    /// The last load at start-up.
    var loaded = RDBLoader.Summary()
    /// When the BGSAVE in progress started (monotonic ms), and the change
    /// count then; nil when none is in progress.
    private var running: (started: Int64, changes: Int, unix: Int64)?
    /// FLUSHALL saved over the running BGSAVE: its result changes nothing.
    private var discardRunning = false
    /// BGSAVE SCHEDULE asked for one while another was running.
    private(set) var scheduled = false
    /// When the last BGSAVE attempt started (Unix s): after a failure,
    /// save points retry only 5 s later (Redis's CONFIG_BGSAVE_RETRY_DELAY).
    private var lastAttempt: Int64 = 0

    var inProgress: Bool { running != nil }

    /// SHUTDOWN saved already (or was told NOSAVE): the snapshot at exit is skipped.
    var savedForExit = false

    /// Write commands (and PING) are refused with MISCONF, as Redis does.
    var refusesWrites: Bool { stopWritesOnError && !savePoints.isEmpty && !lastBackgroundSaveOK }

    /// Redis's MISCONF error for `refusesWrites`.
    static let misconfError =
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

    /// The thread that writes snapshots, started on first use.
    private var saveLoop: EventLoop?

    /// The save thread (an append-only rewrite writes its base there too).
    func loop() throws -> EventLoop {
        if let saveLoop { return saveLoop }
        let loop = try EventLoop.spawn(name: "kvd-save", latencyStats: false)
        saveLoop = loop
        return loop
    }

    // MARK: - Saving

    /// SAVE, and the snapshot at shutdown: writes `databases` now, on the
    /// save thread, while the core waits. True on success.
    @discardableResult
    func saveNow(_ databases: Databases) -> Bool {
        guard let file else { return false }
        let snapshot = Snapshot(databases)
        let changes = databases.fence.changes
        let result: Result<Int, PersistenceError>
        do {
            result = try loop().postAndWait { Persistence.write(snapshot, to: file) }
        } catch {
            result = .failure(PersistenceError("the save thread is gone: \(error)"))
        }
        switch result {
        case .success:
            log("DB saved on disk")
            databases.fence.changes -= changes
            lastSave = Int64(time(nil))
            lastBackgroundSaveOK = true
            saves += 1
            return true
        case .failure(let error):
            log("Error saving DB on disk: \(error)")
            return false
        }
    }

    /// FLUSHALL, with save points set: the emptied dataset is saved now, as
    /// Redis's flushAllDataAndResetRDB does, so a restart does not bring
    /// the flushed keys back from the last file. A BGSAVE running is
    /// discarded (Redis kills its child): its file lands first (the save
    /// thread runs one write at a time), this one over it, and its result
    /// changes nothing when it comes back.
    func saveAfterFlush(_ databases: Databases) {
        guard file != nil, !savePoints.isEmpty else { return }
        if running != nil { discardRunning = true }
        _ = saveNow(databases)
    }

    /// BGSAVE: takes the view and hands it to the save thread; the result
    /// comes back through `owner` (nil: no loop to come back to; then it
    /// is written here and now). Fails when a save is running already.
    func startBackgroundSave(_ databases: Databases, owner: LoopBound<Dispatcher>?) -> Bool {
        guard let file, running == nil else { return false }
        let snapshot = Snapshot(databases)
        databases.fence.open()
        running = (monotonicMilliseconds(), databases.fence.changes, Int64(time(nil)))
        lastAttempt = Int64(time(nil))
        scheduled = false
        log("Background saving started")
        guard let owner else {
            finished(Persistence.write(snapshot, to: file), databases)
            return true
        }
        do {
            try loop().post {
                let result = Persistence.write(snapshot, to: file)
                try? owner.post { $0.persistence.finished(result, $0.databases) }
            }
        } catch {
            finished(.failure(PersistenceError("the save thread is gone: \(error)")), databases)
        }
        return true
    }

    /// Asks for a BGSAVE once the running one has finished (BGSAVE SCHEDULE).
    func schedule() { scheduled = true }

    /// Core loop: the save thread's result.
    private func finished(_ result: Result<Int, PersistenceError>, _ databases: Databases) {
        databases.fence.close()
        guard let run = running else { return }
        running = nil
        if discardRunning {
            discardRunning = false
            return log("Background saving terminated: discarded by FLUSHALL")
        }
        lastBackgroundSaveSeconds = Int((monotonicMilliseconds() - run.started + 500) / 1000)
        switch result {
        case .success:
            databases.fence.changes -= run.changes
            lastSave = run.unix
            lastBackgroundSaveOK = true
            saves += 1
            log("Background saving terminated with success")
        case .failure(let error):
            lastBackgroundSaveOK = false
            log("Background saving error: \(error)")
        }
    }

    /// Any thread: writes the snapshot and says how it went.
    private static func write(_ snapshot: Snapshot, to file: SnapshotFile) -> Result<Int, PersistenceError> {
        do {
            return .success(try file.write(snapshot, usedMemory: 0))
        } catch let error as PersistenceError {
            return .failure(error)
        } catch {
            return .failure(PersistenceError("\(error)"))
        }
    }

    /// Core loop, ten times a second: a scheduled BGSAVE, or one a save
    /// point calls for (Redis's serverCron rule, retry delay included).
    /// `rewriting`: an append-only rewrite runs, and a BGSAVE waits for it (one at a time, as in Redis).
    func tick(_ databases: Databases, owner: LoopBound<Dispatcher>?, rewriting: Bool) {
        guard file != nil, running == nil, !rewriting else { return }
        if scheduled {
            _ = startBackgroundSave(databases, owner: owner)
            return
        }
        let now = Int64(time(nil))
        let changes = databases.fence.changes
        for point in savePoints
        where changes >= point.changes && now - lastSave > Int64(point.seconds)
            && (lastBackgroundSaveOK || now - lastAttempt > 5)
        {
            log("\(point.changes) changes in \(point.seconds) seconds. Saving...")
            _ = startBackgroundSave(databases, owner: owner)
            return
        }
    }

    // MARK: - INFO

    /// INFO persistence, in Redis's field names (those kvd has a value for).
    func infoLines(_ databases: Databases) -> [String] {
        let current = running.map { Int((monotonicMilliseconds() - $0.started) / 1000) } ?? -1
        return [
            "loading:0", "async_loading:0",
            "rdb_changes_since_last_save:\(databases.fence.changes)",
            "rdb_bgsave_in_progress:\(running == nil ? 0 : 1)",
            "rdb_last_save_time:\(lastSave)",
            "rdb_last_bgsave_status:\(lastBackgroundSaveOK ? "ok" : "err")",
            "rdb_last_bgsave_time_sec:\(lastBackgroundSaveSeconds)",
            "rdb_current_bgsave_time_sec:\(current)",
            "rdb_saves:\(saves)",
            "rdb_last_load_keys_expired:\(loaded.expired)",
            "rdb_last_load_keys_loaded:\(loaded.keys)",
        ]
    }

    private func log(_ line: String) {
        var line = "kvd: " + line + "\n"
        line.withUTF8 { _ = Glibc.write(1, $0.baseAddress, $0.count) }
    }
}
