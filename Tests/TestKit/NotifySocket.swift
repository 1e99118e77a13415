// NotifySocket.swift: a datagram socket of our own, passed as NOTIFY_SOCKET
// to what is under test, the way systemd's own tests check sd_notify.
// Shared by both test targets.
import Glibc

/// Binding the socket failed.
public struct NotifySocketError: Error {
    public let errno: Int32
}

/// A bound AF_UNIX datagram socket that collects what is sent to it.
public final class NotifySocket {
    public let fd: Int32
    /// The name to pass as NOTIFY_SOCKET.
    public let name: String

    public init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        let unique = "mainloop-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = abstract ? "@\(unique)" : "/tmp/\(unique).sock"
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard rc == 0 else { throw NotifySocketError(errno: errno) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        if name.hasPrefix("/") { unlink(name) }
    }

    /// The next datagram (nil after the 5 s timeout).
    public func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
