// TestClient.swift: a blocking loopback client with bounded waits, and
// helpers to run a Server in-process or kvd as a child process.
import Glibc
import MainLoop
import TestKit

@testable import KVServer

/// One Unicode scalar per byte (how GoldenReplies.swift spells bytes).
func bytes(_ text: String) -> [UInt8] { text.unicodeScalars.map { UInt8($0.value) } }

final class TestClient {
    let fd: Int32

    init(port: Int) throws {
        // CLOEXEC: a kvd the tests start must not inherit other tests' clients
        // (they would count against its descriptor limit).
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw EventLoopError.system(call: "connect", errno: errno) }
        // Every read and every write is bounded: a server bug (one that stops
        // reading a 64 MB payload, say) fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes all of `data` (blocking, each write at most 10 s); returns how
    /// many bytes were written, fewer when the connection failed or the
    /// peer took nothing for 10 s.
    @discardableResult
    func send(_ data: [UInt8]) -> Int {
        var offset = 0
        while offset < data.count {
            let n = data.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, data.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 { return offset }
            offset += n
        }
        return offset
    }

    func send(_ text: String) { send(bytes(text)) }

    /// Waits (at most `seconds`) until the peer has acknowledged every byte
    /// written (SIOCOUTQ is 0): on loopback, it is then in the server's socket.
    func waitUntilSendQueueIsEmpty(within seconds: Int = 10) -> Bool {
        eventually(within: seconds) {
            var unacknowledged: Int32 = 0
            return ioctl(fd, UInt(TIOCOUTQ), &unacknowledged) == 0 && unacknowledged == 0
        }
    }

    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until EOF (or the 10 s timeout).
    func readAll() -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n <= 0 { return result }
            result += buffer[0..<n]
        }
    }

    /// Reads until `count` bytes arrived (or EOF, or the timeout).
    func read(count: Int) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while result.count < count {
            let n = Glibc.read(fd, &buffer, min(buffer.count, count - result.count))
            if n <= 0 { return result }
            result += buffer[0..<n]
        }
        return result
    }

    /// Reads one line, CRLF included (or what came before EOF or the timeout).
    func readLine() -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(fd, &byte, 1) == 1 {
            line.append(byte)
            if line.count >= 2 && line[line.count - 2] == 13 && byte == 10 { break }
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// One request, one reply that ends with CRLF (a simple/integer/error/short bulk reply).
    func roundTrip(_ request: String, replyBytes: Int) -> String {
        send(request)
        return String(decoding: read(count: replyBytes), as: UTF8.self)
    }
}

/// A server on its own core loop and a free port, stopped at the end.
func withServer<R>(_ configure: (inout ServerOptions) -> Void = { _ in }, _ body: (Server) throws -> R) throws -> R {
    var options = ServerOptions()
    options.port = 0
    options.ioThreads = 2
    configure(&options)
    let core = try EventLoop.spawn(name: "kvd-core")
    let server = Server(options: options, core: core)
    try server.start()
    defer {
        let done = Locked(false)
        server.shutdown { done.set(true) }
        _ = eventually { done.get() }
        server.stopWorkers()
        core.stop()
    }
    return try body(server)
}

func eventually(within seconds: Int = 20, _ condition: () -> Bool) -> Bool {
    for _ in 0..<(seconds * 1000) {
        if condition() { return true }
        var nap = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&nap, nil)
    }
    return condition()
}
