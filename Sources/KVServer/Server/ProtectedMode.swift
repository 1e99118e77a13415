// ProtectedMode.swift: Redis's protected mode. A server started with no
// password that ends up reachable from other hosts (bound to 0.0.0.0 by
// mistake, a container's port published) must not serve strangers: with
// `protected-mode yes` (the default) and no password, only clients on the
// loopback interface are served, and any other is told why and closed, as
// Redis 7.0 does (networking.c, clientAcceptHandler).
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

    /// True when a client at `peer` must be refused: protected mode is on,
    /// no password is set, and the peer is not on the loopback network
    /// (127.0.0.0/8).
    static func refuses(_ peer: sockaddr_in, settings: LiveSettings) -> Bool {
        guard settings.protectedMode.load(ordering: .relaxed), !settings.passwordSet.load(ordering: .relaxed) else {
            return false
        }
        return !isLoopback(peer)
    }

    /// 127.0.0.0/8, the IPv4 loopback network.
    static func isLoopback(_ address: sockaddr_in) -> Bool {
        UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
    }
}
