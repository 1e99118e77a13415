// ServerInfo.swift: what the server says about itself: INFO's sections
// about clients, connections and loops (the dispatcher adds the keyspace's
// and the commands'), and the one-line stats kvd prints on SIGHUP and at exit.
import Glibc
import MainLoop

extension Server {
    /// One line: clients, commands and every loop's counters. Any thread
    /// (the figures are those published after the core's last batch).
    public func statsLine() -> String {
        let (commands, keys) = (hop.counters.commandsProcessed, hop.counters.keyCount)
        var line =
            "kvd clients=\(connectedClients) connections_total=\(totalConnections.load(ordering: .relaxed)) commands=\(commands) keys=\(keys) core[\(coreLoop.stats)]"
        for loop in ioLoops { line += " \(loop.name)[\(loop.stats)]" }
        return line
    }

    /// Core loop: INFO's sections about the server (the dispatcher adds its own).
    func infoSections() -> [(section: String, lines: [String])] {
        let clients = connectedClients
        let total = totalConnections.load(ordering: .relaxed)
        let rejected = rejectedConnections.load(ordering: .relaxed)
        let uptime = (monotonicMilliseconds() - startedAt) / 1000
        var loops = ["loop_core:\(coreLoop.stats.description.replacingSpaces())"]
        for loop in ioLoops { loops.append("loop_\(loop.name):\(loop.stats.description.replacingSpaces())") }
        // Each loop's queue delay and run time (sampled: see EventLoopStats).
        var latencyLines: [String] = []
        for (name, loop) in [("core", coreLoop)] + ioLoops.map({ ($0.name, $0) }) {
            let stats = loop.stats
            func micros(_ duration: Duration) -> String {
                let (seconds, attoseconds) = duration.components
                let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
                return "\(nanoseconds / 1000).\(String(nanoseconds % 1000 / 100))"
            }
            latencyLines.append(
                "loop_\(name):queue_delay_p50_usec=\(micros(stats.queueDelay.p50)),queue_delay_p99_usec=\(micros(stats.queueDelay.p99)),queue_delay_p999_usec=\(micros(stats.queueDelay.p999)),queue_delay_samples=\(stats.queueDelay.count),run_time_p50_usec=\(micros(stats.runTime.p50)),run_time_p99_usec=\(micros(stats.runTime.p99)),run_time_p999_usec=\(micros(stats.runTime.p999)),run_time_samples=\(stats.runTime.count)"
            )
        }
        return [
            (
                "Server",
                [
                    "redis_version:7.0.15", "kvd_version:1.0.0", "redis_git_sha1:00000000", "redis_git_dirty:0",
                    "redis_mode:standalone", "os:\(operatingSystem)", "arch_bits:\(Int.bitWidth)",
                    "multiplexing_api:epoll", "process_id:\(getpid())", "process_supervised:no",
                    "tcp_port:\(port)", "server_time_usec:\(unixMicroseconds())", "uptime_in_seconds:\(uptime)",
                    "uptime_in_days:\(uptime / 86400)", "executable:\(executablePath)", "config_file:",
                    "io_threads:\(options.ioThreads)",
                ]
            ),
            ("Clients", ["connected_clients:\(clients)"]),
            (
                "Stats",
                [
                    "total_connections_received:\(total)", "rejected_connections:\(rejected)",
                    "client_output_buffer_limit_disconnections:\(outputLimitDisconnections.load(ordering: .relaxed))",
                ]
            ),
            ("MainLoop", loops),
            ("Loops", latencyLines),
        ]
    }
}

/// `uname -srm`, as Redis's `os` field.
private let operatingSystem: String = {
    var names = utsname()
    uname(&names)
    func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    return "\(text(names.sysname)) \(text(names.release)) \(text(names.machine))"
}()

/// The running executable's absolute path (Redis's `executable`).
private let executablePath: String = {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count)
    return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
}()

private func unixMicroseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
}

private extension String {
    /// `a=1 b=2` -> `a=1,b=2`: one INFO field per line.
    func replacingSpaces() -> String { split(separator: " ").joined(separator: ",") }
}
