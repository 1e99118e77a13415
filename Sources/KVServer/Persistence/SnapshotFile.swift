// SnapshotFile.swift: dump.rdb on disk. Writing never damages the file
// already there: the snapshot goes to temp-<pid>.rdb in the same
// directory, is fsynced, renamed over the old name (atomic), and the
// directory is fsynced so the rename itself survives a crash. A failure
// at any step removes the temporary file and leaves the old one as it was.
import Glibc

/// The snapshot file of a directory.
struct SnapshotFile: Sendable {
    /// The directory (`--dir`).
    let directory: String
    /// The file's name in it (`--dbfilename`).
    let name: String

    var path: String { directory + "/" + name }

    /// Writes `snapshot` in place of the file; returns its size in bytes.
    /// Any thread (the save thread for BGSAVE, the core for SAVE).
    func write(_ snapshot: Snapshot, usedMemory: Int) throws -> Int {
        let temporary = "\(directory)/temp-\(getpid()).rdb"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw PersistenceError(
                "Failed opening the temp RDB file temp-\(getpid()).rdb (in server root dir \(directory)) for saving: \(String(cString: strerror(errno)))"
            )
        }
        var closed = false
        defer {
            if !closed {
                close(fd)
                unlink(temporary)
            }
        }
        let out = RDBOutput(fd: fd, path: temporary)
        try RDBWriter.write(snapshot, to: out, usedMemory: usedMemory)
        guard fsync(fd) == 0 else { throw PersistenceError.system("fsync", temporary) }
        closed = true
        guard close(fd) == 0 else {
            unlink(temporary)
            throw PersistenceError.system("close", temporary)
        }
        guard rename(temporary, path) == 0 else {
            let error = PersistenceError.system("rename", "\(temporary) to \(path)")
            unlink(temporary)
            throw error
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            defer { close(directoryFD) }
            guard fsync(directoryFD) == 0 else { throw PersistenceError.system("fsync", directory) }
        }
        return out.count
    }

    /// Loads the file into `databases`; nil when there is no file (a
    /// first start). Core loop, before serving.
    func load(into databases: Databases) throws(PersistenceError) -> RDBLoader.Summary? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw PersistenceError.system("open", path)
        }
        defer { close(fd) }
        do {
            return try RDBLoader.load(RDBInput(fd: fd), into: databases, now: unixMilliseconds())
        } catch {
            throw PersistenceError("\(path): \(error.description)")
        }
    }
}
