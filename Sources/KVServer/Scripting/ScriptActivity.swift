// ScriptActivity.swift: what every thread may know of the script the core
// runs, in one atomic word, and the answers given while it is busy.
//
// A script runs as one job on the core loop. Past `busy-reply-threshold`
// it is "busy", as Redis says: the Lua count hook (ScriptEngine) marks the
// word, and from then on a batch that a connection submits is not sent to
// the core (where it would run late, after the script) but answered by the
// connection's own thread through `answer(_:)`: BUSY for every command but
// SCRIPT KILL / FUNCTION KILL (which set the word's kill bit, for the hook
// to act on) and SHUTDOWN NOSAVE (which ends the process). With I/O
// loops, the workers do this while the core is held; with `--io-threads 0`
// the hook itself polls the core's connections (Worker.serveWhileScriptBusy),
// and they answer the same way. The word's compare-and-swap makes SCRIPT
// KILL and the script's first write exclude each other: either the kill
// wins (OK, and the script stops before writing) or the write does
// (UNKILLABLE), as in Redis, where both happen on one thread.
import Glibc
import Synchronization

/// The running script as the other threads see it. Written by the core
/// (begin, busy, write, end) and by the threads that answer SCRIPT KILL.
public final class ScriptActivity: Sendable {
    /// phase (bits 0-1) | function (bit 2) | wrote (bit 3) | killed (bit 4)
    /// | generation (bits 8 and up, one more per script, so that a kill
    /// meant for a script that ended cannot land on the next).
    private let word = Atomic<UInt64>(0)
    /// When the running script started, and its busy threshold (monotonic
    /// ms): an I/O thread sees a script busy once it is past its threshold
    /// even before the hook marked it (the script may be inside one long C
    /// call, `string.rep` say, where no hook runs).
    private let startedAt = Atomic<Int64>(0)
    private let threshold = Atomic<Int64>(0)
    /// What FUNCTION STATS shows of a running function: set by the core
    /// before the function starts, read by the threads that answer while
    /// it is busy.
    private let stats = FunctionStatsBox()

    private static let running: UInt64 = 1
    private static let busy: UInt64 = 2
    private static let phaseMask: UInt64 = 3
    private static let function: UInt64 = 4
    private static let wrote: UInt64 = 8
    private static let killed: UInt64 = 16

    // MARK: The core's side

    /// Core: a script (or a function, with `function`: FUNCTION STATS's
    /// view of it) starts.
    func begin(function: RunningFunction?, threshold: Int64) {
        stats.set(function)
        startedAt.store(monotonicMilliseconds(), ordering: .relaxed)
        self.threshold.store(threshold, ordering: .relaxed)
        let generation = (word.load(ordering: .relaxed) >> 8) &+ 1
        let kind = function != nil ? ScriptActivity.function : 0
        word.store(generation << 8 | ScriptActivity.running | kind, ordering: .releasing)
    }

    /// Core: the script passed the busy threshold; answers come from `answer` now.
    func becomeBusy() {
        word.bitwiseOr(ScriptActivity.busy, ordering: .acquiringAndReleasing)
    }

    /// Core: the running script has run a write command (its effects can
    /// no longer be refused as a whole: Redis's SCRIPT_WRITE_DIRTY).
    var hasWritten: Bool { word.load(ordering: .relaxed) & ScriptActivity.wrote != 0 }

    /// Core: the script is about to run a write command. False when a kill
    /// was accepted first: the script must stop instead of writing.
    func beginWrite() -> Bool {
        var current = word.load(ordering: .acquiring)
        while current & ScriptActivity.killed == 0 {
            if current & ScriptActivity.wrote != 0 { return true }
            let (exchanged, seen) = word.compareExchange(
                expected: current, desired: current | ScriptActivity.wrote, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = seen
        }
        return false
    }

    /// Core: the running script is a function (FCALL), not an EVAL.
    var runsFunction: Bool { word.load(ordering: .relaxed) & ScriptActivity.function != 0 }

    /// Core: SCRIPT KILL (or FUNCTION KILL) was accepted for this script.
    var killRequested: Bool { word.load(ordering: .acquiring) & ScriptActivity.killed != 0 }

    /// Core: the script returned or was stopped.
    func end() {
        stats.set(nil)
        word.store(word.load(ordering: .relaxed) & ~0xFF, ordering: .releasing)
    }

    // MARK: Any thread

    /// True while a script is past its busy threshold.
    public var isBusy: Bool {
        let current = word.load(ordering: .acquiring)
        guard current & ScriptActivity.phaseMask != 0 else { return false }  // the common case: one load
        return current & ScriptActivity.busy != 0
            || monotonicMilliseconds() - startedAt.load(ordering: .relaxed) >= threshold.load(ordering: .relaxed)
    }

    /// The replies to `batch` while a script is busy, or nil when none is
    /// (the batch then goes to the core as usual). Any thread.
    /// `transaction`: the client's MULTI, which MULTI, EXEC and DISCARD
    /// change here as Redis lets them while a script is busy.
    func answer(_ batch: RequestBatch, transaction: inout TransactionShadow) -> Replies? {
        guard isBusy else { return nil }
        var out = ReplyWriter()
        batch.forEach { request in
            let errors = out.errorCount
            let passed = answer(request, &transaction, &out)
            // Redis's rejectCommand: a refused command marks the
            // transaction it was sent in (EXEC then aborts).
            if out.errorCount > errors && !passed && transaction.open { transaction.changes.refused = true }
            return true
        }
        var replies = out.finish()
        replies.inTransaction = transaction.open
        return replies
    }

    /// Answers one request; true when the command ran as Redis runs it
    /// while busy (its error, if any, is its own, not a refusal).
    private func answer(_ r: Request, _ transaction: inout TransactionShadow, _ out: inout ReplyWriter) -> Bool {
        guard !r.isEmpty else { return true }
        let function = word.load(ordering: .acquiring) & ScriptActivity.function != 0
        let busyError =
            function
            ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
            : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."

        // SHUTDOWN while busy: only NOSAVE ends kvd (SAVE would wait for the
        // script, which holds the core), as in Redis.
        if equalsIgnoringCase(r.raw(0), "shutdown") {
            guard r.indices.dropFirst().contains(where: { equalsIgnoringCase(r.raw($0), "nosave") }) else {
                out.error(busyError)
                return false
            }
            let line = "kvd: SHUTDOWN NOSAVE while a script was busy: exiting now\n"
            _ = line.withCString { write(1, $0, strlen($0)) }
            _exit(0)
        }
        // What Redis checks before the busy gate: the command exists, its
        // arity (and a container's subcommand and its arity).
        guard let command = Dispatcher.command(named: r.raw(0)) else {
            out.error(bytes: unknownCommandMessage(r))
            return false
        }
        let subcommandRefusal =
            Dispatcher.containerRows[command.id] && r.count > 1 ? CommandDocs.subcommandRefusal(r) : nil
        if subcommandRefusal == .unknown {
            out.unknownSubcommand(r, of: command.name.uppercased())
            return false
        }
        guard command.accepts(r.count) else {
            out.error("ERR wrong number of arguments for '\(command.name)' command")
            return false
        }
        if case .wrongArity(let name) = subcommandRefusal {
            out.error("ERR wrong number of arguments for '\(name)' command")
            return false
        }
        switch command.name {
        case "quit":
            out.ok()
        // The transaction commands Redis lets through (MULTI, DISCARD), and
        // EXEC, which it refuses by aborting the transaction.
        case "multi":
            guard !transaction.open else {
                out.error("ERR MULTI calls can not be nested")
                return true
            }
            transaction.open = true
            transaction.changes.opened = true
            transaction.changes.refused = false
            out.ok()
        case "discard":
            guard transaction.open else {
                out.error("ERR DISCARD without MULTI")
                return true
            }
            transaction.discard()
            out.ok()
        case "exec":
            transaction.discard()
            out.error("EXECABORT Transaction discarded because of: \(busyError)")
            return true
        case "function" where equalsIgnoringCase(r.raw(1), "stats"):
            guard let running = stats.get() else {
                out.error(busyError)
                return false
            }
            running.write(durationMilliseconds: monotonicMilliseconds() - startedAt.load(ordering: .relaxed), &out)
        case "script" where equalsIgnoringCase(r.raw(1), "kill"), "function" where equalsIgnoringCase(r.raw(1), "kill"):
            kill(function: command.name == "function", &out)
        default:
            out.error(busyError)
            return false
        }
        return true
    }

    /// SCRIPT KILL / FUNCTION KILL (`function`): Redis's answers, in its order.
    private func kill(function: Bool, _ out: inout ReplyWriter) {
        var current = word.load(ordering: .acquiring)
        while true {
            guard current & ScriptActivity.phaseMask != 0 else {
                return out.error("NOTBUSY No scripts in execution right now.")
            }
            if current & ScriptActivity.wrote != 0 {
                return out.error(
                    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
                )
            }
            let runsFunction = current & ScriptActivity.function != 0
            if runsFunction != function {
                // Killing a function with SCRIPT KILL, or an eval with FUNCTION KILL.
                return out.error(
                    runsFunction
                        ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                        : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
            }
            let (exchanged, seen) = word.compareExchange(
                expected: current, desired: current | ScriptActivity.killed, ordering: .acquiringAndReleasing)
            if exchanged { return out.ok() }
            current = seen
        }
    }
}

/// A running function as FUNCTION STATS shows it.
struct RunningFunction: Sendable {
    let name: [UInt8]
    /// The FCALL that runs it.
    let command: [[UInt8]]
    /// The libraries and functions there are (they cannot change while it runs).
    let libraries: Int
    let functions: Int

    /// FUNCTION STATS's reply (in RESP2's shapes: a connection's own
    /// thread does not know its protocol).
    func write(durationMilliseconds: Int64, _ out: inout ReplyWriter) {
        out.mapHeader(2)
        out.bulk("running_script")
        out.mapHeader(3)
        out.bulk("name")
        out.bulk(name)
        out.bulk("command")
        out.arrayHeader(command.count)
        for argument in command { out.bulk(argument) }
        out.bulk("duration_ms")
        out.integer(Int(durationMilliseconds))
        out.bulk("engines")
        out.mapHeader(1)
        out.bulk("LUA")
        out.mapHeader(2)
        out.bulk("libraries_count")
        out.integer(libraries)
        out.bulk("functions_count")
        out.integer(functions)
    }
}

/// One `RunningFunction?` behind a mutex (pthread's: Synchronization's
/// Mutex draws false reports from the thread sanitizer, Guarantees.md).
private final class FunctionStatsBox: @unchecked Sendable {
    /// Guarded by `mutex`.
    private var value: RunningFunction?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        return mutex
    }()

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func set(_ new: RunningFunction?) {
        pthread_mutex_lock(mutex)
        value = new
        pthread_mutex_unlock(mutex)
    }

    func get() -> RunningFunction? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }
}
