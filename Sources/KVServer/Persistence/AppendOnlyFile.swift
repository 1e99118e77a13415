// AppendOnlyFile.swift: the append-only file on the core: its settings,
// the incr file writes go to, the write of each core job's effects before
// their replies leave, and INFO's AOF fields. Core loop only, owned by the
// dispatcher.
//
// Threads, as Redis does them without fork:
// - The core writes: EffectFeed gathers the effects of a core job (every
//   client's batch in it), and `flush` sends them in one write(2) before
//   the job's replies are posted (CoreHop). With `appendfsync always` the
//   core also fdatasyncs before the replies leave.
// - With `everysec`, the fsync thread (`kvd-aof-fsync`, a MainLoop loop)
//   runs a one-second timer that fdatasyncs the incr file; it knows the
//   descriptor only through posts from the core (a new file after a
//   rewrite: the old one is fsynced and closed there), and a failure comes
//   back to the core through the dispatcher's LoopBound. No lock.
// - A rewrite (BGREWRITEAOF, AppendOnlyRewrite.swift) writes the new base
//   on the save thread from a copy-on-write view, like BGSAVE.
import Glibc
import MainLoop

/// Redis's `appendfsync`.
public enum AppendFsync: String, Sendable {
    case always, everysec, no
}

/// The append-only file's settings and state. Core loop only.
final class AppendOnlyFile {
    /// The directory the manifest's directory lives in (`--dir`); nil: no persistence at all.
    var directory: String?
    /// `appendfilename`: the files' common prefix.
    var fileName = "appendonly.aof"
    /// `appenddirname`.
    var directoryName = "appendonlydir"
    /// `appendfsync`.
    var fsyncPolicy = AppendFsync.everysec {
        didSet { tellFsyncThread() }
    }
    /// `aof-load-truncated`.
    var loadTruncated = true
    /// `aof-use-rdb-preamble`: the base a rewrite writes is an RDB file (else RESP).
    var useRDBPreamble = true
    /// `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size`.
    var autoRewritePercentage = 100
    var autoRewriteMinimumSize = 64 << 20

    /// The files, as the manifest on disk lists them.
    var manifest = AppendOnlyManifest()
    /// The incr file writes go to (-1: the AOF is off).
    private(set) var fd: Int32 = -1
    /// Its size, and the size of the data after the last rewrite (auto-rewrite compares them).
    private(set) var currentSize = 0
    var baseSize = 0
    /// Bytes gathered but not written yet (after a failed write, kept for the retry).
    private var unwritten: [UInt8] = []

    /// Whether the last write succeeded, and the errno when it did not.
    private(set) var lastWriteOK = true
    private var lastWriteError: Int32 = 0
    /// Rewrites: the one running (its start, monotonic ms), the last one's outcome and length.
    var rewriteStarted: Int64?
    var lastRewriteOK = true
    var lastRewriteSeconds = -1
    /// BGREWRITEAOF asked for one while a BGSAVE ran: it starts when that ends.
    var rewriteScheduled = false
    /// Rewrites done (`aof_rewrites`), and failed since the last that succeeded.
    var rewrites = 0
    var rewriteFailures = 0
    /// A rewrite that CONFIG SET appendonly yes started: the files become the AOF only when it is done.
    var turningOn = false

    /// The fsync thread (everysec), started with the first file.
    private var fsyncThread: LoopBound<FsyncState>?

    /// The AOF is on (writes are logged).
    var isOn: Bool { fd >= 0 }

    /// The path of `name` in the append-only directory.
    func path(_ name: String) -> String { "\(directory ?? ".")/\(directoryName)/\(name)" }
    var folder: String { "\(directory ?? ".")/\(directoryName)" }

    // MARK: - Writing

    /// Core loop, at the end of each core job and before its replies are
    /// posted: the job's effects go to the file in one write(2) (and,
    /// with `always`, are fdatasynced before this returns).
    func flush(_ feed: EffectFeed) {
        guard fd >= 0 else { return }
        feed.commit()
        guard feed.hasReady || !unwritten.isEmpty else { return }
        feed.take(into: &unwritten)
        writeUnwritten()
        if fsyncPolicy == .always && lastWriteOK && fdatasync(fd) != 0 {
            // Redis exits too: an acknowledged write could otherwise be lost.
            persistenceLog(
                "Can't persist AOF for fsync error when the AOF fsync policy is 'always': \(errorText(errno)). Exiting..."
            )
            exit(1)
        }
    }

    private func writeUnwritten() {
        var done = 0
        while done < unwritten.count {
            let count = unwritten.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            done += count
        }
        guard done < unwritten.count else {
            currentSize += done
            unwritten.removeAll(keepingCapacity: unwritten.capacity <= 1 << 20)
            if !lastWriteOK {
                persistenceLog("AOF write error looks solved, Redis can write again.")
                lastWriteOK = true
            }
            return
        }
        let error = done == 0 && errno != 0 ? errno : ENOSPC
        if fsyncPolicy == .always {
            persistenceLog("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
            exit(1)
        }
        // A short write: the file goes back to its old end and the whole
        // buffer is tried again later; if it cannot, the part written stays.
        if done > 0 {
            if ftruncate(fd, off_t(currentSize)) != 0 {
                currentSize += done
                unwritten.removeFirst(done)
            }
        }
        if lastWriteOK { persistenceLog("Error writing to the AOF file: \(errorText(error))") }
        lastWriteOK = false
        lastWriteError = error
    }

    /// Core loop, ten times a second: a failed write is tried again, and
    /// what active expiry logged is written.
    func tick(_ feed: EffectFeed) {
        guard fd >= 0, feed.hasReady || !unwritten.isEmpty else { return }
        flush(feed)
    }

    /// Core loop: the fsync thread could not fsync.
    func fsyncFailed(_ error: Int32) {
        if lastWriteOK { persistenceLog("Error fsyncing the AOF file: \(errorText(error))") }
        lastWriteOK = false
        lastWriteError = error
    }

    /// Write commands are refused (MISCONF) while the AOF cannot be written.
    var refusesWrites: Bool { fd >= 0 && !lastWriteOK }

    /// Redis's MISCONF error for `refusesWrites`.
    var misconfError: String { "MISCONF Errors writing to the AOF file: \(errorText(lastWriteError))" }

    // MARK: - Files

    /// Opens incr file `entry` for appending and makes it the one writes
    /// go to; the previous one is fsynced and closed on the fsync thread.
    func switchTo(_ entry: AppendOnlyManifest.Entry, feed: EffectFeed) throws(PersistenceError) {
        let name = path(entry.name)
        let newFD = open(name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard newFD >= 0 else { throw PersistenceError.system("open", name) }
        var status = stat()
        currentSize = fstat(newFD, &status) == 0 ? Int(status.st_size) : 0
        let old = fd
        fd = newFD
        feed.forgetSelection()
        handOver(old)
    }

    /// The AOF stops (CONFIG SET appendonly no, exit): what is gathered is
    /// written, the file fsynced and closed.
    func stop(_ feed: EffectFeed) {
        guard fd >= 0 else { return }
        flush(feed)
        _ = fdatasync(fd)
        feed.isOn = false
        let old = fd
        fd = -1
        // The fsync thread keeps its timer, idle with no descriptor, for a
        // later CONFIG SET appendonly yes.
        handOver(old)
    }

    /// Gives `old` (if any) to the fsync thread, which fsyncs and closes it,
    /// and tells it the current descriptor and policy.
    private func handOver(_ old: Int32) {
        guard owner != nil, let thread = try? fsyncLoop() else {
            if old >= 0 {
                _ = fdatasync(old)
                close(old)
            }
            return
        }
        let (current, everysec) = (fd, fsyncPolicy == .everysec)
        try? thread.post { state in
            if old >= 0 {
                _ = fdatasync(old)
                close(old)
            }
            state.fd = current
            state.everysec = everysec
        }
    }

    private func tellFsyncThread() {
        guard fd >= 0 else { return }
        handOver(-1)
    }

    /// Where the fsync thread reports failures (nil until the core loop owns the dispatcher).
    private var owner: LoopBound<Dispatcher>?

    /// Core loop, once it owns the dispatcher: the fsync thread can start.
    func attach(_ owner: LoopBound<Dispatcher>) {
        self.owner = owner
        tellFsyncThread()
    }

    /// The fsync thread and its one-second timer, started on first use.

    private func fsyncLoop() throws -> LoopBound<FsyncState> {
        if let fsyncThread { return fsyncThread }
        let loop = try EventLoop.spawn(name: "kvd-aof-fsync", latencyStats: false)
        let thread = LoopBound(FsyncState(owner: owner), on: loop)
        // Runs as long as the loop: with no descriptor a tick does nothing.
        _ = try loop.schedule(every: .seconds(1)) { thread.withValue { $0.sync() } }
        fsyncThread = thread
        return thread
    }

    // MARK: - INFO

    /// INFO persistence's AOF lines.
    /// Bytes logged but not written yet (INFO's aof_buffer_length, MEMORY STATS's aof.buffer).
    var bufferedBytes: Int { unwritten.count }

    func infoLines() -> [String] {
        let current = rewriteStarted.map { Int((monotonicMilliseconds() - $0) / 1000) } ?? -1
        var lines = [
            "aof_enabled:\(fd >= 0 || turningOn ? 1 : 0)",
            "aof_rewrite_in_progress:\(rewriteStarted == nil ? 0 : 1)",
            "aof_rewrite_scheduled:\(rewriteScheduled ? 1 : 0)",
            "aof_last_rewrite_time_sec:\(lastRewriteSeconds)",
            "aof_current_rewrite_time_sec:\(current)",
            "aof_last_bgrewrite_status:\(lastRewriteOK ? "ok" : "err")",
            "aof_rewrites:\(rewrites)",
            "aof_rewrites_consecutive_failures:\(rewriteFailures)",
            "aof_last_write_status:\(lastWriteOK ? "ok" : "err")",
        ]
        if fd >= 0 {
            lines += [
                "aof_current_size:\(currentSize)", "aof_base_size:\(baseSize)",
                "aof_pending_rewrite:\(rewriteScheduled ? 1 : 0)", "aof_buffer_length:\(bufferedBytes)",
            ]
        }
        return lines
    }
}

/// What the fsync thread knows: the incr file's descriptor, and whether to sync it each second.
final class FsyncState {
    var fd: Int32 = -1
    var everysec = false
    let owner: LoopBound<Dispatcher>?

    init(owner: LoopBound<Dispatcher>?) { self.owner = owner }

    /// The fsync thread, once a second.
    func sync() {
        guard everysec, fd >= 0, fdatasync(fd) != 0 else { return }
        let error = errno
        try? owner?.post { $0.appendOnly.fsyncFailed(error) }
    }
}

func errorText(_ error: Int32) -> String { String(cString: strerror(error)) }

/// kvd's log line, on standard output (as the rest of Persistence/ logs).
func persistenceLog(_ line: String) {
    var line = "kvd: " + line + "\n"
    line.withUTF8 { _ = Glibc.write(1, $0.baseAddress, $0.count) }
}
