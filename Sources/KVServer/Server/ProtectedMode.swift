// ProtectedMode.swift: Redis's protected mode. A server started with no
// password that ends up reachable from other hosts (bound to 0.0.0.0 by
// mistake, a container's port published) must not serve strangers: with
// `protected-mode yes` (the default) and no password, only clients on the
// loopback interface (IPv4 or IPv6) or the Unix socket are served, and any
// other is told why and closed, as Redis 7.0 does (networking.c,
// clientAcceptHandler).
import Glibc

enum ProtectedMode {
    /// Redis 7.0's reply to a refused client, so that tools and people
    /// recognise it: the same opening sentences, kvd's name, and only the
    /// remedies kvd has (no CONFIG SET protected-mode, no config file).
    static let denial = Array(
        ("-DENIED kvd is running in protected mode because protected mode is enabled and no password is set for "
            + "the default user. In this mode connections are only accepted from the loopback interface. If you "
            + "want to connect from external computers to kvd you may adopt one of the following solutions: 1) "
            + "Restart kvd with the '--protected-mode no' option, however MAKE SURE kvd is not publicly accessible "
            + "from internet if you do so. 2) Setup an authentication password for the default user "
            + "('--requirepass'). NOTE: You only need to do one of the above things in order for the server to "
            + "start accepting connections from the outside.\r\n").utf8)

    /// True when a TCP client at `peer` must be refused: protected mode is
    /// on, no password is set, and the peer is not on the loopback network
    /// (127.0.0.0/8, or ::1). (A Unix socket's clients are never asked.)
    static func refuses(_ peer: sockaddr_storage, settings: LiveSettings) -> Bool {
        guard settings.protectedMode.load(ordering: .relaxed), !settings.passwordSet.load(ordering: .relaxed) else {
            return false
        }
        return !isLoopback(peer)
    }

    /// An IPv4 or IPv6 peer on the loopback network (::1, or 127.0.0.0/8
    /// mapped into IPv6).
    static func isLoopback(_ peer: sockaddr_storage) -> Bool {
        withUnsafeBytes(of: peer) { raw in
            switch Int32(raw.load(as: sockaddr.self).sa_family) {
            case AF_INET: return isLoopback(raw.load(as: sockaddr_in.self))
            case AF_INET6:
                let bytes = withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { Array($0) }
                let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
                return bytes == Array(repeating: 0, count: 15) + [1] || (mapped && bytes[12] == 127)
            default: return false
            }
        }
    }

    /// 127.0.0.0/8, the IPv4 loopback network.
    static func isLoopback(_ address: sockaddr_in) -> Bool {
        UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
    }
}
