// Server.swift: kvd's wiring: the core that owns the keyspace, the I/O
// worker loops, the listening sockets, starting the core's ticks
// (ServerCron.swift) and graceful shutdown.
// The command line is ServerOptions.swift; the hop to the core is CoreHop.swift.
import Glibc
import MainLoop
import Synchronization

/// kvd's server: a keyspace on a core loop, served by I/O worker loops.
public final class Server: @unchecked Sendable {
    // `@unchecked Sendable`: `workers` and `port` are set by
    // `start` before any worker runs and never change after; `onShutdownComplete`
    // is written once by `shutdown` before it tells any worker, and read only
    // by workers after they were told (the mailbox orders the two). The
    // counters are atomic; the keyspace is reached through `hop` only.
    /// What the server was started with.
    public let options: ServerOptions
    /// The settings CONFIG SET changes, shared with the core.
    let settings: LiveSettings
    /// The core loop: the one that owns the keyspace.
    public let coreLoop: EventLoop
    /// The hop that gets batches to the core loop's dispatcher.
    let hop: CoreHop
    private var workers: [Worker] = []
    /// The loops of the workers that have one of their own (none with
    /// `--io-threads 0`).
    var ioLoops: [EventLoop] { workers.filter { !$0.servesOnCore }.map(\.loop) }
    /// The port actually bound (differs from options.port when that is 0).
    public private(set) var port = 0
    let startedAt = monotonicMilliseconds()

    private let clients = Atomic<Int>(0)
    let totalConnections = Atomic<Int>(0)
    let rejectedConnections = Atomic<Int>(0)
    private let finishedWorkers = Atomic<Int>(0)
    let outputLimitDisconnections = Atomic<Int>(0)
    private let lastClientID = Atomic<Int>(0)
    private var onShutdownComplete: (@Sendable () -> Void)?
    /// What the SHUTDOWN command does once it has saved: kvd sends itself
    /// SIGTERM, so the stop is the signal's (nil: SHUTDOWN answers an
    /// error). Set before `start`.
    public var shutdownCommand: (@Sendable () -> Void)?
    /// Why the snapshot could not be loaded (`start` throws it).
    private let loadError: PersistenceError?
    /// The final snapshot is being written (set on the core, read by the
    /// signal thread's exit timer, which waits for it).
    let savingFinalSnapshot = Atomic<Bool>(false)
    /// The final snapshot was taken (core loop only: it runs once).
    var finalSnapshotTaken = false

    /// A server whose keyspace lives on the loop `core` (EventLoop.main in kvd).
    public init(options: ServerOptions, core coreLoop: EventLoop) {
        self.options = options
        self.coreLoop = coreLoop
        let settings = LiveSettings(options)
        self.settings = settings
        let facts = ServerFacts()
        var loadError: PersistenceError?
        self.hop = CoreHop(
            on: coreLoop, password: options.requirePassword, settings: settings,
            prepare: { dispatcher in
                loadError = Persistence.prepare(dispatcher, options)
                dispatcher.shutdownRequested = { facts.server?.shutdownCommand?() }
            },
            serverInfo: { facts.server?.infoSections() ?? [] }, resetServerStats: { facts.server?.resetStats() })
        self.loadError = loadError
        facts.server = self
    }

    /// Binds, starts the worker loops and the expiry timer. Returns once
    /// every worker accepts connections.
    public func start() throws {
        if let loadError { throw loadError }
        let addresses = try ListenAddress.parse(options.bind)
        var chosenPort = options.port
        if chosenPort != 0 {
            // The workers share the port through SO_REUSEPORT, which would
            // also let a second kvd (or another server of this user) join
            // the group and take half the clients silently. A socket bound
            // without it fails if anybody listens there already.
            for address in addresses {
                if let fd = try address.listen(port: chosenPort, sharingPort: false) { Glibc.close(fd) }
            }
        }
        for index in 0..<max(options.ioThreads, 1) {
            // The sockets first: an address that cannot be bound leaves no
            // worker loop behind.
            var fds: [Int32] = []
            var unix: (fd: Int32, path: String)?
            do {
                for address in addresses {
                    guard let fd = try address.listen(port: chosenPort, sharingPort: true) else { continue }
                    // Every address and worker binds the same port: the one
                    // the kernel chose for the first, when asked for any.
                    if chosenPort == 0 { chosenPort = ListenAddress.boundPort(fd) }
                    fds.append(fd)
                }
                // The Unix socket is accepted on by the first worker only:
                // one listener needs no spreading.
                if index == 0, let path = options.unixSocket {
                    let fd = try listenOnUnixSocket(path: path, permissions: options.unixSocketPermissions)
                    unix = (fd, path)
                    fds.append(fd)
                }
                // (A later worker may have none: no TCP, only the Unix socket.)
                guard !fds.isEmpty || index > 0 else {
                    throw ServerOptions.UsageError(
                        description: "none of the --bind addresses is on this host, and there is no --unixsocket")
                }
                workers.append(
                    options.ioThreads == 0 ? Worker(onCoreOf: self) : try Worker(index: index, server: self))
            } catch {
                for fd in fds { Glibc.close(fd) }
                throw error
            }
            let (worker, listening, unixSocket) = (workers[index], fds, unix)
            if worker.servesOnCore && EventLoop.isMainThread && coreLoop === EventLoop.main {
                try worker.listen(on: listening, unixPath: unixSocket)  // kvd starts the main loop after this returns
            } else {
                try worker.loop.postAndWait { try worker.listen(on: listening, unixPath: unixSocket) }
            }
        }
        port = chosenPort
        // A job that held the core with a busy script is named by the script
        // too (its label is where the batch was posted): SLOWLOG names the
        // command, the log line the script.
        if options.slowlogSlowerThan >= 0 {
            let dispatcher = hop.dispatcher
            try coreLoop.onSlowJob(threshold: .microseconds(options.slowlogSlowerThan)) { [weak self] report in
                let script = dispatcher.withValue { $0.scripts.takeSlowScript(within: report.runTime) }
                if let script {
                    self?.log("kvd: slow job \(report.label) held the core \(report.runTime) running script \(script)")
                }
            }
        }
        settings.port.store(chosenPort, ordering: .relaxed)
        try hop.startCron()
        try startSavePoints()
    }

    // MARK: - Clients

    /// Any worker: takes a client slot, or counts a refusal.
    func admitClient() -> Bool {
        var current = clients.load(ordering: .relaxed)
        while current < settings.maxClients.load(ordering: .relaxed) {
            let (taken, seen) = clients.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if taken {
                totalConnections.add(1, ordering: .relaxed)
                return true
            }
            current = seen
        }
        rejectedConnections.add(1, ordering: .relaxed)
        return false
    }

    /// Any worker: the id of a new client (1, 2, 3, …; never reused).
    func nextClientID() -> Int {
        lastClientID.add(1, ordering: .relaxed).newValue
    }

    /// Any worker: a client was closed for its unsent replies; `line` says why.
    func outputLimitDisconnected(_ line: String) {
        outputLimitDisconnections.add(1, ordering: .relaxed)
        log(line)
    }

    /// Any thread: writes `line` to standard output at once.
    func log(_ line: String) {
        var line = line + "\n"
        line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
    }

    /// Any worker: a client refused because the process had no descriptor left.
    func refusedAtFdLimit() {
        rejectedConnections.add(1, ordering: .relaxed)
    }

    /// Core loop (CONFIG RESETSTAT): the connection counts start again.
    func resetStats() {
        totalConnections.store(0, ordering: .relaxed)
        rejectedConnections.store(0, ordering: .relaxed)
        outputLimitDisconnections.store(0, ordering: .relaxed)
    }

    func clientClosed() {
        clients.subtract(1, ordering: .relaxed)
    }

    /// Connections open now.
    public var connectedClients: Int { clients.load(ordering: .relaxed) }

    /// Requests executed, as of the core's last batch.
    public var commandsProcessed: Int { hop.counters.commandsProcessed }

    // MARK: - Shutdown

    /// Graceful stop: the core's ticks stop (active expiry, the save
    /// points' and the append-only file's checks: no background save
    /// starts while the server drains, and every core job still writes the
    /// log), every worker stops accepting, answers what its connections
    /// have read, and closes them; then `completion` runs (on the core
    /// loop; not at all if the core loop has stopped by then, as kvd's
    /// shutdown budget stops it). Call once.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        onShutdownComplete = completion
        hop.stopCron()
        for worker in workers {
            do {
                try worker.loop.post { worker.beginShutdown() }
            } catch {
                workerFinished()  // that loop has stopped already: nothing left to drain
            }
        }
    }

    func workerFinished() {
        guard finishedWorkers.add(1, ordering: .acquiringAndReleasing).newValue == workers.count,
            let completion = onShutdownComplete
        else { return }
        // Never on this worker's thread: the completion reaches the core's
        // state (kvd's saves the final snapshot), which only the core's
        // thread may. A core that has stopped already was stopped by
        // whoever ran that work there (kvd's budget timer).
        try? coreLoop.post(completion)
    }

    /// Stops the worker loops (after `shutdown`, or to abandon them) and
    /// waits, at most about a second in all, until each has finished its
    /// final drain and its thread has ended.
    public func stopWorkers() {
        let ioLoops = self.ioLoops
        for loop in ioLoops { loop.stop() }
        // One budget for all of them: a worker stuck in a job must not hold
        // kvd's exit for a second per worker.
        let deadline = ContinuousClock.now + .seconds(1)
        for loop in ioLoops {
            try? loop.join(timeout: max(deadline - ContinuousClock.now, .zero))
        }
    }
}

/// The server as INFO's source, handed to the dispatcher before the server
/// exists. Weak: the server owns the dispatcher.
/// `@unchecked Sendable`: `server` is set once, in the server's initializer,
/// before the dispatcher can run.
private final class ServerFacts: @unchecked Sendable {
    weak var server: Server?
}
