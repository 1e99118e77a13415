// CrossProtocolGuard.swift: Redis's answer to cross-protocol scripting. A
// web page can make a browser send an HTTP request to kvd's port; its lines
// (`POST / HTTP/1.1`, `Host: ...`) read as commands, and what follows them
// could be commands an attacker wrote. Redis closes such a connection
// without a reply and logs it, at most once a minute; kvd does the same.
import Glibc
import Synchronization

enum CrossProtocolGuard {
    /// When the warning was last written (seconds since the epoch).
    private static let lastWarning = Atomic<Int>(0)

    /// A connection is being closed for a cross-protocol request: says so on
    /// standard error, unless it already did in the last 60 seconds.
    static func report() {
        let now = time(nil)
        let last = lastWarning.load(ordering: .relaxed)
        guard now - last > 60, lastWarning.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return }
        let line =
            "kvd: Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to kvd. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your kvd instance. Connection aborted.\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
