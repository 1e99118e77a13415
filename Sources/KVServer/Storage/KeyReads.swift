// KeyReads.swift: which lookups of a key are reads, as Redis tells its
// lookupKeyRead from its lookupKeyWrite, and how they went. A read that
// finds the key counts in INFO's keyspace_hits; one that does not counts in
// keyspace_misses and publishes a `keymiss` keyspace event (class m). A
// write's lookup counts nothing, as in Redis.
//
// A command's lookups take its kind by default (`KeyRead.asCommand`): the
// dispatcher marks, before each command runs, whether the command only
// reads (not one of the write commands). The few reads Redis makes inside
// write commands (SET ... GET, GETDEL, COPY's source, BITOP's sources,
// SORT's keys, a GEO or ZRANGESTORE source) say `.read`; OBJECT counts
// without an event (`.readQuietly`, Redis's LOOKUP_NONOTIFY); the server's
// own lookups (WATCH, RANDOMKEY, MEMORY USAGE, a parked client's key, the
// AOF's rewrites) count nothing (`.uncounted`).

/// What a lookup is, for INFO's hit and miss counts and keymiss events.
enum KeyRead {
    /// As the command under way: a read when it only reads keys.
    case asCommand
    /// A read (Redis's lookupKeyRead), whatever the command.
    case read
    /// A read that publishes no keymiss event (Redis's LOOKUP_NONOTIFY).
    case readQuietly
    /// Not a read (the server's own lookups).
    case uncounted
}

/// The commands' reads, shared by a dispatcher's databases; core loop
/// only. Unchecked exclusivity: every lookup reads and counts them (no
/// access is ever open across a call).
final class KeyReads {
    /// The command under way only reads keys (set by the dispatcher
    /// before each command runs).
    @exclusivity(unchecked) var commandReads = false
    /// Reads that found their key (INFO's keyspace_hits).
    @exclusivity(unchecked) var hits = 0
    /// Reads that did not (INFO's keyspace_misses).
    @exclusivity(unchecked) var misses = 0

    /// True when a lookup of kind `use` is a read now.
    @inline(__always)
    func counts(_ use: KeyRead) -> Bool {
        switch use {
        case .asCommand: commandReads
        case .read, .readQuietly: true
        case .uncounted: false
        }
    }
}
