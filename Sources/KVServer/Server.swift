// Server.swift: kvd's wiring: the core loop that owns the keyspace, the I/O
// worker loops, the listening sockets, active expiry and graceful shutdown.
import Glibc
import MainLoop

/// A value that is only ever dereferenced on the core loop's thread.
/// `@unchecked Sendable`: it travels to other threads inside closures that
/// run on the core, never to be used there.
struct CoreBound<Value>: @unchecked Sendable {
    let value: Value
}

/// What kvd is told on its command line.
public struct ServerOptions: Sendable {
    /// The IPv4 address to listen on.
    public var bind = "127.0.0.1"
    /// The TCP port; 0 lets the kernel choose (see ``Server/port``).
    public var port = 6380
    /// I/O worker loops: the number of cores minus one, at least one. One
    /// core stays with the keyspace's loop: on 2 cores, 1 I/O loop
    /// served redis-benchmark 1.3-1.5x faster than 2 (which make three busy
    /// threads compete for two cores).
    public var ioThreads = max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) - 1, 1)
    /// Connections served at once; more are refused.
    public var maxClients = 10_000
    /// What one request may announce.
    public var limits = RESPLimits()

    /// The defaults.
    public init() {}

    /// `kvd --help`.
    public static let usage = """
        usage: kvd [options]
          --bind ADDRESS     IPv4 address to listen on (default 127.0.0.1)
          --port PORT        TCP port (default 6380; 0 picks a free one)
          --io-threads N     I/O worker loops (default: number of cores - 1, at least 1)
          --max-clients N    connections served at once; more are refused (default 10000)
          --max-bulk BYTES   largest bulk argument accepted (default 536870912, as Redis)
          --help             this text
        Signals: SIGTERM and SIGINT stop gracefully (stop accepting, answer what
        was read, close, exit 0); SIGHUP prints the stats line.
        """

    /// A command line that cannot be honoured; the description says why.
    public struct UsageError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    /// Parses `arguments` (without the program name). Returns nil for --help.
    public static func parse(_ arguments: [String]) throws(UsageError) -> ServerOptions? {
        var options = ServerOptions()
        var index = 0
        func value(_ flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[index]
        }
        func number(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let text = try value(flag)
            guard let n = Int(text), range.contains(n) else {
                throw UsageError(
                    description: "\(flag) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
            }
            return n
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--help", "-h": return nil
            case "--bind": options.bind = try value("--bind")
            case "--port": options.port = try number("--port", 0...65535)
            case "--io-threads": options.ioThreads = try number("--io-threads", 1...256)
            case "--max-clients": options.maxClients = try number("--max-clients", 1...1_000_000)
            case "--max-bulk": options.limits.maxBulk = try number("--max-bulk", 1...(512 * 1024 * 1024))
            default: throw UsageError(description: "unknown option '\(arguments[index])'")
            }
            index += 1
        }
        return options
    }
}

/// kvd's server: a keyspace on a core loop, served by I/O worker loops.
public final class Server: @unchecked Sendable {
    // `@unchecked Sendable`: `options`, `core`, `keyspace` and `workers` are
    // set before `start` returns and never change; `keyspace` is used on the
    // core only; the counters are guarded by `lock`.
    /// What the server was started with.
    public let options: ServerOptions
    /// The loop that owns the keyspace.
    public let core: EventLoop
    let keyspace = CoreBound(value: Keyspace())
    private var workers: [Worker] = []
    private var expiryTimer: Scheduled?
    /// The port actually bound (differs from options.port when that is 0).
    public private(set) var port = 0
    private let startedAt = monotonicMilliseconds()

    private let lock = Lock()
    // Guarded by `lock`.
    private var clients = 0
    private var totalConnections = 0
    private var rejectedConnections = 0
    private var finishedWorkers = 0
    private var onShutdownComplete: (@Sendable () -> Void)?

    /// A server whose keyspace lives on `core` (EventLoop.main in kvd).
    public init(options: ServerOptions, core: EventLoop) {
        self.options = options
        self.core = core
    }

    /// Binds, starts the worker loops and the expiry timer. Returns once
    /// every worker accepts connections.
    public func start() throws {
        keyspace.value.info = { [unowned self] in self.infoSections() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, options.bind, &address.sin_addr) == 1 else {
            throw ServerOptions.UsageError(description: "--bind needs an IPv4 address, got '\(options.bind)'")
        }
        var chosenPort = options.port
        for index in 0..<options.ioThreads {
            let worker = try Worker(index: index, server: self)
            workers.append(worker)
            address.sin_port = in_port_t(UInt16(chosenPort).bigEndian)
            let fd = try Server.listeningSocket(&address)
            if chosenPort == 0 {
                // Every worker binds the same port: take the one the kernel chose.
                var bound = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                withUnsafeMutablePointer(to: &bound) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
                }
                chosenPort = Int(UInt16(bigEndian: bound.sin_port))
            }
            try worker.loop.postAndWait { try worker.listen(on: fd) }
        }
        port = chosenPort
        let keyspace = self.keyspace
        expiryTimer = try core.schedule(every: .milliseconds(100)) { keyspace.value.expireCycle() }
    }

    private static func listeningSocket(_ address: inout sockaddr_in) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw EventLoopError.system(call: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 511) == 0 else {
            let code = errno
            close(fd)
            throw EventLoopError.system(call: bound == 0 ? "listen" : "bind", errno: code)
        }
        return fd
    }

    // MARK: - Clients

    func admitClient() -> Bool {
        lock.withLock {
            guard clients < options.maxClients else {
                rejectedConnections += 1
                return false
            }
            clients += 1
            totalConnections += 1
            return true
        }
    }

    func clientClosed() {
        lock.withLock { clients -= 1 }
    }

    /// Connections open now.
    public var connectedClients: Int { lock.withLock { clients } }

    // MARK: - Shutdown

    /// Graceful stop: every worker stops accepting, answers what its
    /// connections have read, and closes them; then `completion` runs (on
    /// the core loop). Call once.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        lock.withLock { onShutdownComplete = completion }
        expiryTimer?.cancel()
        for worker in workers {
            do {
                try worker.loop.post { worker.beginShutdown() }
            } catch {
                workerFinished()  // that loop has stopped already: nothing left to drain
            }
        }
    }

    func workerFinished() {
        let completion = lock.withLock { () -> (@Sendable () -> Void)? in
            finishedWorkers += 1
            return finishedWorkers == workers.count ? onShutdownComplete : nil
        }
        guard let completion else { return }
        do { try core.post(completion) } catch { completion() }
    }

    /// Stops the worker loops (after `shutdown`, or to abandon them) and
    /// waits, at most about a second, until each has finished its final drain.
    public func stopWorkers() {
        for worker in workers { worker.loop.stop() }
        for _ in 0..<1_000 where !workers.allSatisfy({ $0.loop.hasStopped }) {
            var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&nap, nil)
        }
    }

    // MARK: - Stats

    /// One line: clients, commands and every loop's counters. Core loop
    /// only (it reads the keyspace's counters).
    public func statsLine() -> String {
        let (clients, total) = lock.withLock { (self.clients, totalConnections) }
        var line =
            "kvd clients=\(clients) connections_total=\(total) commands=\(keyspace.value.commandsProcessed) keys=\(keyspace.value.count) core[\(core.stats)]"
        for worker in workers { line += " \(worker.loop.name)[\(worker.loop.stats)]" }
        return line
    }

    /// Core loop: INFO's sections other than Keyspace.
    private func infoSections() -> [(section: String, lines: [String])] {
        let (clients, total, rejected) = lock.withLock { (self.clients, totalConnections, rejectedConnections) }
        let uptime = (monotonicMilliseconds() - startedAt) / 1000
        var loops = ["loop_core:\(core.stats.description.replacingSpaces())"]
        for worker in workers {
            loops.append("loop_\(worker.loop.name):\(worker.loop.stats.description.replacingSpaces())")
        }
        return [
            (
                "Server",
                [
                    "redis_version:7.0.15", "kvd_version:1.0.0", "redis_mode:standalone", "process_id:\(getpid())",
                    "tcp_port:\(port)", "uptime_in_seconds:\(uptime)", "uptime_in_days:\(uptime / 86400)",
                    "io_threads:\(workers.count)",
                ]
            ),
            ("Clients", ["connected_clients:\(clients)", "maxclients:\(options.maxClients)"]),
            (
                "Stats",
                [
                    "total_connections_received:\(total)",
                    "total_commands_processed:\(keyspace.value.commandsProcessed)",
                    "rejected_connections:\(rejected)", "expired_keys:\(keyspace.value.expiredKeys)",
                ]
            ),
            ("MainLoop", loops),
        ]
    }
}

private extension String {
    /// `a=1 b=2` -> `a=1,b=2`: one INFO field per line.
    func replacingSpaces() -> String { split(separator: " ").joined(separator: ",") }
}

/// A pthread mutex for the server's counters.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
