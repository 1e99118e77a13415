// Reclaimer.swift: large buffers are freed on a thread of their own.
// Freeing a 300 MB array is one munmap that holds its caller for about
// 20 ms (24 ms measured under strace); on the core loop that is a stall
// for every client. Redis frees large objects lazily for the same reason
// (lazyfree), and its allocator returns pages in the background.
//
// The reclaiming thread is a MainLoop loop, started the first time a large
// buffer is let go, and it lives as long as the process. A buffer handed to
// it is captured by the posted closure, so the last reference goes when
// that closure is released on the reclaiming thread. If the post is
// refused (the loop could not start, or has stopped), the buffer is freed
// where it is, as before: nothing is kept and nothing is lost.
import MainLoop
import Synchronization

/// Frees large buffers off the calling thread.
enum Reclaimer {
    /// Buffers with at least this capacity are freed on the reclaiming
    /// thread (the size of a large bulk: `RESPLimits.largeBulk`'s default).
    static let threshold = 1 << 20

    private static let loop: EventLoop? = try? EventLoop.spawn(name: "kvd-reclaim", latencyStats: false)

    /// Buffers freed on the reclaiming thread so far (INFO's
    /// `lazyfreed_objects`, Redis's name for the same count).
    static var reclaimed: Int { reclaimedCount.load(ordering: .relaxed) }
    private static let reclaimedCount = Atomic<Int>(0)

    /// Takes `bytes`, leaving it empty, and has the reclaiming thread free
    /// it when its capacity is at least `threshold`; leaves a smaller one
    /// alone.
    static func release(_ bytes: inout [UInt8]) {
        guard bytes.capacity >= threshold, let loop else { return }
        let doomed = bytes
        bytes = []
        try? loop.post {
            withExtendedLifetime(doomed) {}
            reclaimedCount.add(1, ordering: .relaxed)
        }
    }
}
