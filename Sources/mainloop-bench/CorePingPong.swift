// CorePingPong.swift: what moving one cache line between two cores costs
// now, measured inside the benchmark's own process (bench/pingpong.c
// measures it from a process of its own): a figure of the machine, printed
// beside a figure of MainLoop's, tells a phase of the machine from a mode of
// the code.
import Glibc
import Synchronization

/// The turn word, alone on its line pair (the padding, and the pair's
/// 128-byte alignment: a core fetches a line's neighbour with it, so another
/// word on the pair would cross between the cores too).
private struct Turn: ~Copyable {
    let word = Atomic<Int>(0)
    private let padding: SIMD16<UInt64> = .zero
}

/// Nanoseconds per round trip of one cache line between this thread and a
/// new one (two handoffs: there and back), over `roundTrips`: 100,000 take
/// 10-50 ms, short beside the figure it is read with, and long enough to
/// ride over the new thread's first moments. The threads are not pinned:
/// on two cores, two spinning threads are on both.
func corePingPongNs(roundTrips: Int = 100_000) -> Double {
    let turn = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Turn>.stride, alignment: 128)
        .bindMemory(to: Turn.self, capacity: 1)
    turn.initialize(to: Turn())
    defer {
        turn.deinitialize(count: 1)
        turn.deallocate()
    }
    nonisolated(unsafe) let shared = turn
    // Odd turns are the other thread's: it answers each with the next even
    // one. Round 0 is a handshake, not timed: the clock starts once the
    // other thread is running.
    let other = startThread {
        for round in 0...roundTrips {
            while shared.pointee.word.load(ordering: .acquiring) != 2 * round + 1 {}
            shared.pointee.word.store(2 * round + 2, ordering: .releasing)
        }
    }
    shared.pointee.word.store(1, ordering: .releasing)
    while shared.pointee.word.load(ordering: .acquiring) != 2 {}
    let start = nowNs()
    for round in 1...roundTrips {
        shared.pointee.word.store(2 * round + 1, ordering: .releasing)
        while shared.pointee.word.load(ordering: .acquiring) != 2 * round + 2 {}
    }
    let elapsed = nowNs() - start
    pthread_join(other, nil)
    return Double(elapsed) / Double(roundTrips)
}
