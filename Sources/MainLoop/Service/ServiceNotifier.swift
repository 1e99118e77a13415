// ServiceNotifier.swift: systemd's notify protocol, spoken directly: one
// datagram of newline-separated `KEY=value` lines to the AF_UNIX socket
// named by $NOTIFY_SOCKET (a path, or `@name` in the abstract namespace).
// No libsystemd: the protocol is one sendto, and a daemon should not need
// another library for it. Without $NOTIFY_SOCKET (not started by systemd
// with Type=notify) every call does nothing.
import CLibevent
import Glibc

/// A state a service reports to systemd (sd_notify's assignments).
public enum ServiceState: Sendable, Equatable {
    /// Start-up is complete: `READY=1` (Type=notify units wait for it).
    case ready
    /// The service is reloading its configuration: `RELOADING=1`, with the
    /// `MONOTONIC_USEC=` systemd asks for; send ``ready`` when done.
    case reloading
    /// The service is shutting down: `STOPPING=1`.
    case stopping
    /// A line for `systemctl status`: `STATUS=…` (newlines become spaces).
    case status(String)
    /// The service is alive: `WATCHDOG=1` (see ``EventLoop/keepServiceWatchdogAlive()``).
    case watchdog

    var assignment: String {
        switch self {
        case .ready: "READY=1"
        case .reloading: "RELOADING=1\nMONOTONIC_USEC=\(mainloop_monotonic_ns() / 1000)"
        case .stopping: "STOPPING=1"
        case .status(let text):
            // By scalar: "\r\n" is one Character, and no CR or LF may split the line.
            "STATUS="
                + String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
        case .watchdog: "WATCHDOG=1"
        }
    }
}

/// Tells systemd how the service is doing (the `sd_notify` protocol).
public enum ServiceNotifier {
    /// The socket systemd listens on for this service (`$NOTIFY_SOCKET`),
    /// or nil when it was not started that way.
    public static var socket: String? {
        guard let value = getenv("NOTIFY_SOCKET"), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// Sends `states` to systemd in one datagram, when `$NOTIFY_SOCKET` is
    /// set; does nothing otherwise.
    /// - Throws: ``EventLoopError/invalidArgument(_:)`` for a socket name
    ///   that is neither an absolute path nor `@abstract`, or too long;
    ///   ``EventLoopError/system(call:errno:)`` when the datagram cannot be sent.
    public static func notify(_ states: ServiceState...) throws {
        guard let socket else { return }
        try notify(states, to: socket)
    }

    /// Sends `states` in one datagram to the notify socket `socket` (a path,
    /// or `@name` for the abstract namespace).
    /// - Throws: as ``notify(_:)``.
    public static func notify(_ states: [ServiceState], to socket: String) throws {
        guard !states.isEmpty else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socket.utf8)
        guard let first = name.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else {
            throw EventLoopError.invalidArgument(
                "NOTIFY_SOCKET must be an absolute path or @abstract name, got '\(socket)'")
        }
        if first == UInt8(ascii: "@") { name[0] = 0 }  // the abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count < capacity else {
            throw EventLoopError.invalidArgument("NOTIFY_SOCKET is longer than \(capacity - 1) bytes: '\(socket)'")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in name.enumerated() { path[index] = byte }
        }
        // An abstract name's length is exact; a path's includes its NUL.
        let length = MemoryLayout<sa_family_t>.size + name.count + (first == UInt8(ascii: "@") ? 0 : 1)
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw EventLoopError.system(call: "socket", errno: errno) }
        defer { close(fd) }
        let message = Array(states.map(\.assignment).joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes {
                    sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, socklen_t(length))
                }
            }
        }
        guard sent == message.count else {
            throw EventLoopError.system(call: "sendto", errno: sent < 0 ? errno : EMSGSIZE)
        }
    }

    /// The interval at which systemd expects `WATCHDOG=1`: `$WATCHDOG_USEC`,
    /// when `$WATCHDOG_PID` is unset or names this process; nil otherwise.
    public static var watchdogInterval: Duration? {
        guard let usec = getenv("WATCHDOG_USEC").flatMap({ Int64(String(cString: $0)) }), usec > 0 else { return nil }
        if let pid = getenv("WATCHDOG_PID").flatMap({ Int32(String(cString: $0)) }), pid != getpid() { return nil }
        return .microseconds(usec)
    }
}

extension EventLoop {
    /// Pets systemd's watchdog from a timer on this loop, at half of
    /// `$WATCHDOG_USEC`: while the loop turns, systemd hears `WATCHDOG=1` in
    /// time; a loop that is stuck stops petting, and systemd restarts the
    /// service (`WatchdogSec=` in the unit).
    ///
    /// A failed send goes to ``errorHandler`` (or standard error).
    /// - Returns: the timer, or nil when systemd's watchdog is off for this
    ///   process (no `$WATCHDOG_USEC`, or `$WATCHDOG_PID` names another one)
    ///   or there is no `$NOTIFY_SOCKET`.
    /// - Throws: ``EventLoopError/shutDown`` once the loop has stopped.
    @discardableResult
    public func keepServiceWatchdogAlive() throws -> Scheduled? {
        guard let interval = ServiceNotifier.watchdogInterval, let socket = ServiceNotifier.socket else { return nil }
        return try schedule(every: interval / 2) { () throws in
            try ServiceNotifier.notify([.watchdog], to: socket)
        }
    }
}
