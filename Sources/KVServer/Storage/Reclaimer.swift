// Reclaimer.swift: large buffers are freed on a thread of their own.
// Freeing a 300 MB array is one munmap that holds its caller for about
// 20 ms (24 ms measured under strace); on the core loop that is a stall
// for every client. Redis frees large objects lazily for the same reason
// (lazyfree), and its allocator returns pages in the background.
//
// The reclaiming thread is a MainLoop loop, started the first time a large
// buffer is let go, and it lives as long as the process. It runs under
// SCHED_IDLE: a munmap competes for a core with whatever else is busy (in
// make hostile, the client freeing its own 300 MB), and at normal priority
// it took the core loop's turn, stalling a PING 12-20 ms; idle priority
// runs it when a core is free. Under a flood of large deletes it still
// gets a sliver of CPU, so the memory does go back. A buffer handed to
// it is captured by the posted closure, so the last reference goes when
// that closure is released on the reclaiming thread. If the post is
// refused (the loop could not start, or has stopped), the buffer is freed
// where it is, as before: nothing is kept and nothing is lost.
import Glibc
import MainLoop
import Synchronization

/// Frees large buffers off the calling thread.
enum Reclaimer {
    /// Buffers with at least this capacity are freed on the reclaiming
    /// thread (the size of a large bulk: `RESPLimits.largeBulk`'s default).
    static let threshold = 1 << 20

    fileprivate static let loop: EventLoop? = {
        let loop = try? EventLoop.spawn(name: "kvd-reclaim", latencyStats: false)
        try? loop?.postAndWait {
            var parameters = sched_param(sched_priority: 0)
            // SCHED_IDLE (5; Glibc hides the name behind _GNU_SOURCE), for this thread only.
            _ = sched_setscheduler(0, 5, &parameters)
        }
        return loop
    }()

    /// Large buffers released on the reclaiming thread so far (INFO's
    /// `reclaimed_buffers`). A buffer that was still shared counts too (a
    /// SET's large argument, which the batch lets go of while the stored
    /// value keeps it): the last holder frees it. So this is not Redis's
    /// `lazyfreed_objects`, which counts objects freed, and does not take
    /// its name.
    static var reclaimed: Int { reclaimedCount.load(ordering: .relaxed) }
    fileprivate static let reclaimedCount = Atomic<Int>(0)

    /// Buffers handed to the reclaiming thread and not freed yet (INFO's
    /// `lazyfree_pending_objects`, as Redis counts the objects its lazyfree
    /// thread has yet to free; Redis's test suite waits for it to reach 0).
    static var pending: Int { pendingCount.load(ordering: .relaxed) }
    fileprivate static let pendingCount = Atomic<Int>(0)

    /// About how many bytes the buffers not freed yet hold (an array's
    /// capacity, a collection's estimate): memory already let go, which
    /// eviction does not count (Storage/Eviction/Evictor.swift), or it
    /// would evict more keys while the reclaiming thread frees these.
    static var pendingBytes: Int { pendingByteCount.load(ordering: .relaxed) }
    fileprivate static let pendingByteCount = Atomic<Int>(0)

    /// Takes `bytes`, leaving it empty, and has the reclaiming thread free
    /// it when its capacity is at least `threshold`; leaves a smaller one
    /// alone.
    static func release(_ bytes: inout [UInt8]) {
        guard bytes.capacity >= threshold, let loop else { return }
        // Moved out, not copied: no reference stays here to be dropped
        // after the reclaiming thread has let go of its own.
        let capacity = bytes.capacity
        hand(loop, Doomed(consume bytes), bytes: capacity)
        bytes = []
    }
}

extension Reclaimer {
    /// Collections with at least this many elements are freed on the
    /// reclaiming thread: freeing one costs a free per element (10M list
    /// items, a second or more on the core).
    static let collectionThreshold = 4096

    /// What `pendingBytes` counts for an element of a collection handed
    /// over: its bookkeeping (MEMORY USAGE's 48 bytes) and a short value.
    static let bytesPerElement = 64

    /// Takes `collection`, leaving nil, and has the reclaiming thread free
    /// it when it has at least `collectionThreshold` elements.
    static func release(_ collection: inout Collection?) {
        guard let taken = collection else { return }
        collection = nil
        guard taken.count >= collectionThreshold, let loop else { return }
        // From the count alone: the snapshot's thread may be reading the
        // collection, and reading an element can move a list's cursor.
        let size = taken.count * Reclaimer.bytesPerElement
        hand(loop, Doomed(consume taken), bytes: size)
    }

    /// Posts `doomed` to the reclaiming loop, which drops it (freeing it
    /// when it held the last reference), counted as pending until then. A
    /// refused post frees it here, when `doomed` goes: never pending.
    static func hand<Value>(_ loop: EventLoop, _ doomed: Doomed<Value>, bytes: Int) {
        pendingCount.add(1, ordering: .relaxed)
        pendingByteCount.add(bytes, ordering: .relaxed)
        do {
            try loop.post {
                doomed.value = nil
                reclaimedCount.add(1, ordering: .relaxed)
                pendingCount.subtract(1, ordering: .relaxed)
                pendingByteCount.subtract(bytes, ordering: .relaxed)
            }
        } catch {
            pendingCount.subtract(1, ordering: .relaxed)
            pendingByteCount.subtract(bytes, ordering: .relaxed)
        }
    }
}

/// A buffer or a collection on its way to be freed, dropped by the
/// reclaiming thread before it counts it freed.
/// `@unchecked Sendable`: the keyspace let go of the value, so nothing
/// reads or changes it any more but a command that still holds it on the
/// core for the rest of its run; the reclaiming thread only drops its
/// reference (reference counts are atomic), and whichever thread drops the
/// last one frees it. `value` is set once, here, and cleared once, there.
final class Doomed<Value>: @unchecked Sendable {
    var value: Value?
    init(_ value: Value) { self.value = value }
}
