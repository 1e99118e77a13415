// AppendOnlyRewrite.swift: BGREWRITEAOF (and CONFIG SET appendonly yes,
// which starts with one, as Redis does) in Redis 7.0's multi-part way,
// without fork. On the core, at one instant: the effects gathered so far
// go to the old incr file, a copy-on-write view of the data is taken
// (Snapshot.swift), and a new incr file starts, which the manifest lists
// at once (so a crash from here on loses nothing: old base + old incr
// files + new incr file replay to the data). The save thread writes the
// view as the new base (an RDB file, `aof-base` 1), fsyncs it and posts
// back; the core then renames it into place and writes the manifest that
// names only the new base and the new incr file, and deletes the old
// files. A failure at any step leaves the old manifest's files in place.
import Glibc
import MainLoop

extension Dispatcher {
    /// Starts a rewrite; nil when it started, else Redis's error.
    func startAppendOnlyRewrite() -> String? {
        let aof = appendOnly
        guard aof.rewriteStarted == nil else {
            return "ERR Background append only file rewriting already in progress"
        }
        guard let directory = aof.directory else { return "ERR the append-only file needs a directory (--dir)" }
        let folder = aof.folder
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            aof.lastRewriteOK = false
            return "ERR Can't open or create append-only dir \(folder): \(errorText(errno))"
        }
        // Effects so far belong to the old files.
        aof.flush(databases.feed)
        let snapshot = Snapshot(databases)
        let next = (aof.manifest.increments.last?.sequence ?? 0) + 1
        let increment = AppendOnlyManifest.Entry(
            name: AppendOnlyManifest.incrementName(aof.fileName, next), sequence: next)
        do {
            try aof.switchTo(increment, feed: databases.feed)
            if aof.turningOn {
                databases.feed.isOn = true
            } else {
                var manifest = aof.manifest
                manifest.increments.append(increment)
                try manifest.persist(directory: folder, fileName: aof.fileName)
                aof.manifest = manifest
            }
        } catch {
            aof.lastRewriteOK = false
            persistenceLog("Can't open new incr AOF: \(error)")
            return "ERR Can't open new incr AOF: \(error)"
        }
        databases.fence.open()
        aof.rewriteStarted = monotonicMilliseconds()
        aof.rewriteScheduled = false
        persistenceLog("Background append only file rewriting started")
        let baseSequence = (aof.manifest.base?.sequence ?? 0) + 1
        let base = AppendOnlyManifest.Entry(
            name: AppendOnlyManifest.baseName(aof.fileName, baseSequence, rdb: aof.useRDBPreamble),
            sequence: baseSequence)
        let temporary = "\(directory)/temp-rewriteaof-bg-\(getpid()).aof"
        let rdb = aof.useRDBPreamble
        guard let owner else {
            finishAppendOnlyRewrite(
                AppendOnlyFile.writeBase(snapshot, to: temporary, rdb: rdb), base, increment, temporary)
            return nil
        }
        do {
            try persistence.loop().post {
                let result = AppendOnlyFile.writeBase(snapshot, to: temporary, rdb: rdb)
                try? owner.post { $0.finishAppendOnlyRewrite(result, base, increment, temporary) }
            }
        } catch {
            finishAppendOnlyRewrite(
                .failure(PersistenceError("the save thread is gone: \(error)")), base, increment, temporary)
        }
        return nil
    }

    /// Core loop: the base was written (or not); the manifest moves to it.
    private func finishAppendOnlyRewrite(
        _ result: Result<Int, PersistenceError>, _ base: AppendOnlyManifest.Entry,
        _ increment: AppendOnlyManifest.Entry, _ temporary: String
    ) {
        let aof = appendOnly
        databases.fence.close()
        let started = aof.rewriteStarted ?? monotonicMilliseconds()
        aof.rewriteStarted = nil
        aof.lastRewriteSeconds = Int((monotonicMilliseconds() - started + 500) / 1000)
        do {
            let size = try result.get()
            // The AOF was turned off meanwhile: the new files are not the AOF.
            guard aof.isOn else { throw PersistenceError("the append-only file was turned off") }
            let path = aof.path(base.name)
            guard rename(temporary, path) == 0 else {
                throw PersistenceError.system("rename", "\(temporary) to \(path)")
            }
            let old = aof.manifest
            var manifest = AppendOnlyManifest()
            manifest.base = base
            manifest.increments = [increment]
            try manifest.persist(directory: aof.folder, fileName: aof.fileName)
            aof.manifest = manifest
            aof.turningOn = false
            aof.baseSize = size
            aof.rewrites += 1
            aof.rewriteFailures = 0
            aof.lastRewriteOK = true
            for entry in [old.base].compactMap({ $0 }) + old.history + old.increments
            where entry != base && entry != increment {
                unlink(aof.path(entry.name))
            }
            persistenceLog("Background AOF rewrite finished successfully")
        } catch {
            unlink(temporary)
            aof.lastRewriteOK = false
            aof.rewriteFailures += 1
            persistenceLog("Background AOF rewrite failed: \(error)")
            if aof.turningOn {
                aof.turningOn = false
                aof.stop(databases.feed)
            }
        }
    }

    /// Core loop, ten times a second: a rewrite BGREWRITEAOF scheduled
    /// behind a BGSAVE, or one the AOF's growth calls for
    /// (`auto-aof-rewrite-percentage` over `auto-aof-rewrite-min-size`).
    func appendOnlyTick() {
        let aof = appendOnly
        aof.tick(databases.feed)
        guard aof.rewriteStarted == nil, !persistence.inProgress else { return }
        if aof.rewriteScheduled {
            _ = startAppendOnlyRewrite()
            return
        }
        // Redis compares the whole AOF with its size after the last
        // rewrite; here that is the base plus what was logged since.
        guard aof.isOn, aof.autoRewritePercentage > 0, aof.baseSize + aof.currentSize > aof.autoRewriteMinimumSize
        else { return }
        let growth = aof.currentSize * 100 / max(aof.baseSize, 1)
        if growth >= aof.autoRewritePercentage {
            persistenceLog("Starting automatic rewriting of AOF on \(growth)% growth")
            _ = startAppendOnlyRewrite()
        }
    }
}

extension AppendOnlyFile {
    /// Any thread: writes `snapshot` as a base to `path`, an RDB file
    /// (`rdb`) or RESP commands, and fsyncs it; the size written.
    static func writeBase(_ snapshot: Snapshot, to path: String, rdb: Bool) -> Result<Int, PersistenceError> {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return .failure(PersistenceError.system("open", path)) }
        defer { close(fd) }
        do {
            let out = RDBOutput(fd: fd, path: path)
            if rdb {
                try RDBWriter.write(snapshot, to: out, aofBase: true)
            } else {
                try AppendOnlyBase.write(snapshot, to: out, now: unixMilliseconds())
            }
            guard fsync(fd) == 0 else { throw PersistenceError.system("fsync", path) }
            return .success(out.count)
        } catch let error as PersistenceError {
            unlink(path)
            return .failure(error)
        } catch {
            unlink(path)
            return .failure(PersistenceError("\(error)"))
        }
    }
}
