// ServerOptions.swift: what kvd is told on its command line, and how the
// command line is read.
import Glibc

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
