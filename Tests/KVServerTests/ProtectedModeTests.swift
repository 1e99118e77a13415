// ProtectedModeTests.swift: Redis's protected mode. With no password, a
// client that is not on the loopback network is refused with the DENIED
// message and closed; a password, or --protected-mode no, lets it in.
import Glibc
import TestKit
import Testing

@testable import KVServer

/// An IPv4 address of this host that is not loopback, if it has one.
let nonLoopbackAddress: String? = {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return nil }
    defer { freeifaddrs(list) }
    for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
        guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
        let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
        if ProtectedMode.isLoopback(ipv4) { continue }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var raw = ipv4.sin_addr
        guard inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil else { continue }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return nil
}()

/// Connects to `address`:`port`, sends `request`, and returns every byte
/// the server sends until it closes (or 10 s of silence: a server bug fails
/// the test instead of hanging it).
func exchange(address: String, port: Int, _ request: String) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var target = ipv4(address)
    target.sin_port = in_port_t(UInt16(port).bigEndian)
    let rc = withUnsafePointer(to: &target) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard rc == 0 else { throw ConnectFailed(errno: errno) }
    return exchange(on: fd, request)
}

/// Sends `request` on the connected socket `fd`, then returns every byte
/// the server sends until it closes (or 10 s of silence).
func exchange(on fd: Int32, _ request: String) -> String {
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = request.utf8CString.withUnsafeBytes { send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
    shutdown(fd, Int32(SHUT_WR))
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = recv(fd, &chunk, chunk.count, 0)
        if n <= 0 { break }
        received += chunk[0..<n]
    }
    return String(decoding: received, as: UTF8.self)
}

/// A connection that could not be made, with its errno.
struct ConnectFailed: Error { let errno: Int32 }

func ipv4(_ text: String) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    _ = inet_pton(AF_INET, text, &address.sin_addr)
    return address
}

/// A peer's address as `accept` fills it in.
func peer(ipv4 text: String) -> sockaddr_storage {
    var storage = sockaddr_storage()
    withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv4(text), as: sockaddr_in.self) }
    return storage
}

func peer(ipv6 text: String) -> sockaddr_storage {
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    _ = inet_pton(AF_INET6, text, &address.sin6_addr)
    var storage = sockaddr_storage()
    withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
    return storage
}

@Suite(.timeLimit(.minutes(5))) struct ProtectedModeTests {
    @Test func onlyLoopbackPeersAreServedWithoutAPassword() {
        let options = ServerOptions()
        #expect(!ProtectedMode.refuses(peer(ipv4: "127.0.0.1"), settings: LiveSettings(options)))
        #expect(!ProtectedMode.refuses(peer(ipv4: "127.200.1.9"), settings: LiveSettings(options)))
        #expect(ProtectedMode.refuses(peer(ipv4: "10.1.2.3"), settings: LiveSettings(options)))
        #expect(ProtectedMode.refuses(peer(ipv4: "192.168.0.7"), settings: LiveSettings(options)))
        var withPassword = options
        withPassword.requirePassword = "s3cret"
        #expect(!ProtectedMode.refuses(peer(ipv4: "10.1.2.3"), settings: LiveSettings(withPassword)))
        var unprotected = options
        unprotected.protectedMode = false
        #expect(!ProtectedMode.refuses(peer(ipv4: "10.1.2.3"), settings: LiveSettings(unprotected)))
    }

    @Test func ipv6LoopbackIsLocalAndOtherIPv6PeersAreNot() {
        let settings = LiveSettings(ServerOptions())
        #expect(!ProtectedMode.refuses(peer(ipv6: "::1"), settings: settings))
        #expect(!ProtectedMode.refuses(peer(ipv6: "::ffff:127.0.0.1"), settings: settings))
        #expect(ProtectedMode.refuses(peer(ipv6: "2001:db8::1"), settings: settings))
        #expect(ProtectedMode.refuses(peer(ipv6: "::ffff:10.1.2.3"), settings: settings))
        #expect(ProtectedMode.refuses(peer(ipv6: "fe80::1"), settings: settings))
    }

    @Test func theFlagIsReadAndExplained() throws {
        let off = try ServerOptions.parse(["--protected-mode", "no"])
        let on = try ServerOptions.parse(["--protected-mode", "YES"])
        #expect(off?.protectedMode == false)
        #expect(on?.protectedMode == true)
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--protected-mode", "maybe"]) }
        #expect(ServerOptions.usage.contains("--protected-mode"))
    }

    // Over a real socket, from this host's own non-loopback address: the
    // only test of the accept path's refusal, so a host without one (a
    // machine with no network) fails it rather than skipping it silently.
    @Test(arguments: [0, 2])
    func aClientFromAnotherInterfaceIsDeniedAndClosed(ioThreads: Int) throws {
        let address = try #require(
            nonLoopbackAddress, "this host has no non-loopback IPv4 address to connect from: the refusal is untested")
        try withServer({
            $0.ioThreads = ioThreads
            $0.bind = ["0.0.0.0"]
        }) { server in
            let reply = try exchange(address: address, port: server.port, "PING\r\n")
            #expect(reply == String(decoding: ProtectedMode.denial, as: UTF8.self))
            let local = try exchange(address: "127.0.0.1", port: server.port, "PING\r\n")
            #expect(local == "+PONG\r\n")
        }
        try withServer({
            $0.ioThreads = ioThreads
            $0.bind = ["0.0.0.0"]
            $0.protectedMode = false
        }) { server in
            let served = try exchange(address: address, port: server.port, "PING\r\n")
            #expect(served == "+PONG\r\n")
        }
    }
}
