// ListenerTests.swift: where kvd listens, as Redis's `bind`, `unixsocket`
// and `unixsocketperm` say: several addresses, IPv6 among them, a `-` for
// one this host may lack, and a Unix socket whose clients count as local.
import Glibc
import TestKit
import Testing

@testable import KVServer

/// True when this host can listen on ::1 (a container may have no IPv6).
let hasIPv6Loopback: Bool = {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    _ = inet_pton(AF_INET6, "::1", &address.sin6_addr)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
        }
    }
}()

/// Connects to [::1]:`port` and exchanges `request` (see `exchange(on:_:)`).
func exchangeIPv6(port: Int, _ request: String) throws -> String {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_port = in_port_t(UInt16(port).bigEndian)
    _ = inet_pton(AF_INET6, "::1", &address.sin6_addr)
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    }
    guard rc == 0 else { throw ConnectFailed(errno: errno) }
    return exchange(on: fd, request)
}

/// Connects to the Unix socket at `path` and exchanges `request`.
func exchangeUnix(path: String, _ request: String) throws -> String {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard rc == 0 else { throw ConnectFailed(errno: errno) }
    return exchange(on: fd, request)
}

/// A socket path of this test's own (tests run side by side).
func temporarySocketPath(_ name: String) -> String {
    "/tmp/kvd-test-\(getpid())-\(name).sock"
}

@Suite(.timeLimit(.minutes(5))) struct ListenerTests {
    @Test func theBindFlagTakesRedisSyntax() throws {
        #expect(try ServerOptions.parse(["--bind", "127.0.0.1 -::1"])?.bind == ["127.0.0.1", "-::1"])
        let several = try ServerOptions.parse(["--bind", "127.0.0.1", "-::1", "::*", "--port", "7000"])
        #expect(several?.bind == ["127.0.0.1", "-::1", "::*"])
        #expect(several?.port == 7000)
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--bind", "127.0.0.1 localhost"]) }
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--bind", "::1::2"]) }
        let unix = try ServerOptions.parse(["--unixsocket", "/tmp/k.sock", "--unixsocketperm", "770"])
        #expect(unix?.unixSocket == "/tmp/k.sock")
        #expect(unix?.unixSocketPermissions == 0o770)
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--unixsocketperm", "800"]) }
    }

    @Test(.enabled(if: hasIPv6Loopback), arguments: [0, 2])
    func kvdServesEveryBoundAddressIPv6Included(ioThreads: Int) throws {
        try withServer({
            $0.ioThreads = ioThreads
            $0.bind = ["127.0.0.1", "-::1"]
        }) { server in
            #expect(try exchange(address: "127.0.0.1", port: server.port, "PING\r\n") == "+PONG\r\n")
            // ::1 is loopback: protected mode serves it; CLIENT INFO writes
            // an IPv6 peer as Redis does, in brackets.
            let info = try exchangeIPv6(port: server.port, "CLIENT INFO\r\n")
            #expect(info.contains("addr=[::1]:"))
            #expect(info.contains("laddr=[::1]:\(server.port) "))
        }
    }

    @Test func anOptionalAddressThisHostLacksIsSkippedAndAnotherFails() throws {
        // 192.0.2.1 is TEST-NET-1: no host has it.
        try withServer({ $0.bind = ["-192.0.2.1", "127.0.0.1"] }) { server in
            let reply = try exchange(address: "127.0.0.1", port: server.port, "PING\r\n")
            #expect(reply == "+PONG\r\n")
        }
        #expect(throws: (any Error).self) { try withServer({ $0.bind = ["192.0.2.1", "127.0.0.1"] }) { _ in } }
        #expect(throws: ServerOptions.UsageError.self) { try withServer({ $0.bind = ["-192.0.2.1"] }) { _ in } }
    }

    @Test(arguments: [0, 2])
    func unixSocketClientsAreServedAsLocalWithTheirPermissions(ioThreads: Int) throws {
        let path = temporarySocketPath("unix-\(ioThreads)")
        try withServer({
            $0.ioThreads = ioThreads
            $0.unixSocket = path
            $0.unixSocketPermissions = 0o700
        }) { server in
            var status = stat()
            #expect(stat(path, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o700)
            // Protected mode is on and no password is set: a peer that is
            // not counted as local would get DENIED.
            let info = try exchangeUnix(path: path, "CLIENT INFO\r\n")
            #expect(info.contains("addr=\(path):0 laddr=\(path):0 "))
            #expect(info.contains(" flags=U "))
            #expect(try exchange(address: "127.0.0.1", port: server.port, "PING\r\n") == "+PONG\r\n")
        }
        // The socket's file goes with the server, as Redis's does.
        #expect(access(path, F_OK) != 0)
    }

    @Test func aUnixSocketAloneIsEnough() throws {
        let path = temporarySocketPath("alone")
        try withServer({
            $0.bind = []
            $0.unixSocket = path
        }) { _ in
            let reply = try exchangeUnix(path: path, "PING\r\n")
            #expect(reply == "+PONG\r\n")
        }
    }
}
