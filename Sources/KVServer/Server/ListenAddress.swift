// ListenAddress.swift: where kvd listens, in Redis's `bind` syntax: IPv4
// or IPv6 addresses (`*` and `::*` for any), each optionally prefixed with
// `-` ("skip it if this host does not have it", so a config written for a
// machine with IPv6 still starts on one without); and a Unix socket. The
// sockets are made here; the workers accept on them (Worker.swift).
import Glibc
import MainLoop

/// One TCP address kvd listens on.
struct ListenAddress {
    /// The address as written, without its `-`.
    let text: String
    /// Written with a leading `-`: an address this host lacks is skipped.
    let optional: Bool
    /// IPv6 (the text has a colon, as Redis decides).
    let isIPv6: Bool
    private var storage = sockaddr_storage()

    /// Parses one word of a `bind` line; nil when it is no numeric address.
    init?(_ word: String) {
        optional = word.hasPrefix("-")
        text = optional ? String(word.dropFirst()) : word
        isIPv6 = text.contains(":")
        let parsed = withUnsafeMutableBytes(of: &storage) { raw -> Bool in
            if isIPv6 {
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                return text == "::*" || inet_pton(AF_INET6, text, &address.pointee.sin6_addr) == 1
            }
            let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
            address.pointee.sin_family = sa_family_t(AF_INET)
            return text == "*" || inet_pton(AF_INET, text, &address.pointee.sin_addr) == 1
        }
        guard parsed else { return nil }
    }

    /// The words of Redis's `bind` (`127.0.0.1 -::1`), or the first that is
    /// not an address.
    static func parse(_ words: [String]) throws(ServerOptions.UsageError) -> [ListenAddress] {
        var addresses: [ListenAddress] = []
        for word in words {
            guard let address = ListenAddress(word) else {
                throw ServerOptions.UsageError(
                    description: "--bind takes IPv4 or IPv6 addresses (* and ::* for any, - before an optional one), "
                        + "got '\(word)'")
            }
            addresses.append(address)
        }
        return addresses
    }

    /// A listening socket on `port` (0: the kernel picks), shared with the
    /// other workers through SO_REUSEPORT when `sharingPort`; nil when the
    /// address is one Redis skips: optional and not on this host, or of a
    /// family the kernel lacks.
    func listen(port: Int, sharingPort: Bool) throws -> Int32? {
        let family = isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            if errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT { return nil }
            throw EventLoopError.system(call: "socket", errno: errno)
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if sharingPort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        // As Redis: an IPv6 socket takes IPv6 only, so `* ::*` can both bind.
        if isIPv6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        var address = storage
        let length = socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutableBytes(of: &address) { raw in
            if isIPv6 {
                raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_port = in_port_t(
                    UInt16(port).bigEndian)
            } else {
                raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self).pointee.sin_port = in_port_t(
                    UInt16(port).bigEndian)
            }
            return bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
        guard bound == 0, Glibc.listen(fd, 511) == 0 else {
            let code = errno
            close(fd)
            if bound != 0 && code == EADDRNOTAVAIL && optional { return nil }
            throw EventLoopError.system(call: bound == 0 ? "listen" : "bind \(text)", errno: code)
        }
        return fd
    }

    /// The port a listening socket was bound to.
    static func boundPort(_ fd: Int32) -> Int {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &address) {
            _ = getsockname(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        return withUnsafeBytes(of: &address) { raw in
            if raw.load(as: sockaddr.self).sa_family == sa_family_t(AF_INET6) {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }
}

/// Redis's `unixsocket` and `unixsocketperm`: a Unix-domain socket at
/// `path` (a stale one from an earlier run is removed first, as Redis
/// does), with the given permissions (0: what the umask leaves).
func listenOnUnixSocket(path: String, permissions: UInt32) throws -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        throw ServerOptions.UsageError(description: "--unixsocket path is empty or too long: '\(path)'")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw EventLoopError.system(call: "socket", errno: errno) }
    unlink(path)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0, permissions == 0 || chmod(path, mode_t(permissions)) == 0, Glibc.listen(fd, 511) == 0 else {
        let code = errno
        close(fd)
        throw EventLoopError.system(call: "unix socket \(path)", errno: code)
    }
    return fd
}
