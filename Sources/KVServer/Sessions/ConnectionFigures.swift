// ConnectionFigures.swift: what CLIENT LIST tells of a connection that only
// its I/O loop knows (its unsent replies, its unread input, whether it
// waits to read or to write), published by that loop and read by the core
// without a lock. Relaxed atomics: each figure is a snapshot, as Redis's
// own are of a moment.
import Synchronization

/// A connection's I/O figures, written by its loop, read by the core.
public final class ConnectionFigures: Sendable {
    private let unsent = Atomic<Int>(0)
    private let chunks = Atomic<Int>(0)
    private let unread = Atomic<Int>(0)
    private let watching = Atomic<Int>(0)

    /// A connection with nothing queued either way.
    public init() {}

    /// Reply bytes queued and not yet sent (Redis's `omem`).
    public var unsentBytes: Int { unsent.load(ordering: .relaxed) }
    /// The blocks they are queued in (Redis's `oll`).
    public var unsentChunks: Int { chunks.load(ordering: .relaxed) }
    /// Bytes read and not yet handed to the core as requests (part of
    /// Redis's `qbuf`).
    public var unreadBytes: Int { unread.load(ordering: .relaxed) }
    /// Redis's `events`: `r` while the loop waits to read, `w` while it
    /// waits to write.
    public var events: String {
        let bits = watching.load(ordering: .relaxed)
        return (bits & 1 != 0 ? "r" : "") + (bits & 2 != 0 ? "w" : "")
    }

    /// The connection's loop: the figures as they are now.
    func publish(unsentBytes: Int, unsentChunks: Int, unreadBytes: Int, reading: Bool, writing: Bool) {
        unsent.store(unsentBytes, ordering: .relaxed)
        chunks.store(unsentChunks, ordering: .relaxed)
        unread.store(unreadBytes, ordering: .relaxed)
        watching.store((reading ? 1 : 0) | (writing ? 2 : 0), ordering: .relaxed)
    }
}
