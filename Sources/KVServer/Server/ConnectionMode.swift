// ConnectionMode.swift: the one thing that differs between kvd's two
// topologies, where a connection runs (on the core loop with
// `--io-threads 0`, on an I/O loop otherwise), and everything that follows
// from it, in one place. A worker has one mode, and its connections read
// it; nothing else in a connection asks which topology it is in.

/// Where a connection runs, and what follows from it.
enum ConnectionMode {
    /// On the core loop itself: a batch runs in place
    /// (`CoreHop.executeHere`), and its replies arrive before `submit` returns.
    case onCore
    /// On an I/O loop: the worker sends the batch to the core with the
    /// other batches of its loop turn, and the replies come back in a post.
    case onIOLoop

    /// Reads per readable event. On the core, one (64 KiB, as Redis reads
    /// 16 KiB): everything read is executed before the loop turns, so a
    /// pipelining client holds the other clients for one read's requests,
    /// not a megabyte's. On an I/O loop, up to 16, so that one busy client
    /// cannot monopolise its worker either.
    var readsPerEvent: Int {
        switch self {
        case .onCore: 1
        case .onIOLoop: 16
        }
    }

    /// True when a batch points into the parser's buffer instead of copying
    /// its arguments: safe only when the batch runs before the parser takes
    /// more bytes, that is, in place on the core.
    var batchSharesParserBuffer: Bool { self == .onCore }

    /// True when the last reply buffer, once sent, is kept for the next
    /// batch's replies: only on the core, where the replies are written into
    /// the buffer the connection hands over (a hop's come in the core's).
    var reusesReplyBuffer: Bool { self == .onCore }
}
