// InvocationRecordPool.swift: a loop's invocation records that ran, kept for
// later performSelector calls to refill instead of allocating.
//
// Why: a record is written on the poster's core and read on the loop's, and
// when glibc frees it on the loop's thread the poster's next malloc reads
// the block back (the link the loop's free wrote), then writes it, and its
// next locked instruction (the lane's compare-and-swap) waits for those
// lines to come over from the loop's core: a round trip between the cores
// or more per invocation, which in the machine's far phase halved the rate
// (Performance.md). A C model of the same trip (bench/record-handoff.c)
// runs faster when the writer refills a record the reader handed back many
// records earlier, and writes it without reading it first
// (about three times as fast, bench/invocation-pool-kept-ab.txt).
//
// So a record comes back here only once its loop has made the call and let
// go of the target (the target is released when the call returns, as
// before), and a poster takes one only when at least `lag` newer records
// were handed back after it: it was last touched many calls ago. A poster
// never reads a record it takes: the record is unique by construction, and
// the refill initializes its memory without looking at it. Unique, because
// the reference the pool holds is the one the job that ran the record held
// (the job is forgotten, not released: `Job.run`), and nothing else refers
// to a record handed back from a mailbox's lane; the record becomes
// takeable only after `lag` (at least 1) more records were handed back,
// each by a later job, and jobs do not nest.
// (A bounded mailbox's offer copies the job, and the poster releases its
// copy at a time of its own: such a loop has no pool.)
//
// One giver, the loop's thread; any number of takers, which race with one
// compare-and-swap on `taken`. The loop publishes what it gave every
// `publishEvery` records, so that a poster's read of `given` does not take
// the line back from the loop's core on every call; a record not published
// yet is simply not taken yet. Neither side ever waits for the other: an
// empty pool makes the poster allocate, a full one makes the loop release
// the record as before.
import CLibevent
import Synchronization

/// A loop's invocation records that ran, ready to be refilled (only an
/// unbounded mailbox's loop has one). Records of up to `argumentCapacity`
/// arguments are pooled. A handle (a struct of pointers, so that neither a
/// poster nor the loop counts a reference to reach it); its loop calls
/// `destroy` once.
struct InvocationRecordPool: Equatable, @unchecked Sendable {
    // `@unchecked Sendable`: the cells and `Shared` are atomics; `LoopSide`
    // is the giving loop's thread's (and `destroy`'s, after it).

    /// The argument room of every pooled record: two keep a record at 120
    /// bytes, within glibc's fast bins when the pool is empty.
    static var argumentCapacity: Int { 2 }
    /// Cells in the ring, a power of two: 64 KB of records at most.
    static var capacity: Int { 512 }
    /// How many newer records stay behind the one a poster takes.
    static var lag: UInt { 128 }
    /// The loop publishes its gives this often (a divisor of `lag`).
    static var publishEvery: UInt { 16 }

    /// What the loop and the posters share, each index on a line pair of
    /// its own: the loop writes `given`, posters write `taken`.
    private struct Shared: ~Copyable {
        /// Records handed back, as far as published.
        let given = Atomic<UInt>(0)
        private let padding0: SIMD16<UInt64> = .zero
        /// Records taken.
        let taken = Atomic<UInt>(0)
        private let padding1: SIMD16<UInt64> = .zero
    }

    /// The giving thread's own, on a line pair of its own (and apart from
    /// `Shared` in memory: an access to one is no access to the other).
    private struct LoopSide {
        /// Records handed back, published or not.
        var given: UInt = 0
        /// Its last sight of `taken`.
        var takenSeen: UInt = 0
    }

    private static var loopSideOffset: Int { (MemoryLayout<Shared>.stride + 127) & ~127 }
    private static var cellsOffset: Int { loopSideOffset + 128 }

    /// The one allocation (one word, so that a record's header holds the
    /// pool in one): `Shared`, `LoopSide`, then the cells.
    private let base: UnsafeMutableRawPointer

    private var shared: UnsafeMutablePointer<Shared> { base.assumingMemoryBound(to: Shared.self) }

    private var loopSide: UnsafeMutablePointer<LoopSide> {
        (base + Self.loopSideOffset).assumingMemoryBound(to: LoopSide.self)
    }

    private var cells: UnsafeMutablePointer<Atomic<UInt>> {
        (base + Self.cellsOffset).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    init() {
        // A record is takeable only once a later job handed one back.
        precondition(
            Self.lag >= 1 && Self.lag < UInt(Self.capacity), "MainLoop: the pool's lag must be 1 to capacity - 1")
        let capacity = Self.capacity
        base = UnsafeMutableRawPointer.allocate(
            byteCount: Self.cellsOffset + capacity * MemoryLayout<Atomic<UInt>>.stride, alignment: 128)
        base.bindMemory(to: Shared.self, capacity: 1).initialize(to: Shared())
        (base + Self.loopSideOffset).bindMemory(to: LoopSide.self, capacity: 1).initialize(to: LoopSide())
        let cells = (base + Self.cellsOffset).bindMemory(to: Atomic<UInt>.self, capacity: capacity)
        for index in 0..<capacity { (cells + index).initialize(to: Atomic(0)) }
    }

    /// Releases the records still kept, published or not, and frees the
    /// pool: the loop's thread is done, and no poster holds the loop any more.
    func destroy() {
        var position = shared.pointee.taken.load(ordering: .acquiring)
        while position != loopSide.pointee.given {
            Unmanaged<InvocationRecord>.fromOpaque(address(at: position)).release()
            position &+= 1
        }
        cells.deinitialize(count: Self.capacity)
        loopSide.deinitialize(count: 1)
        shared.deinitialize(count: 1)
        base.deallocate()
    }

    private func address(at position: UInt) -> UnsafeRawPointer {
        let bits = cells[Int(position & UInt(Self.capacity - 1))].load(ordering: .relaxed)
        return UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped
    }

    /// The giving loop's thread: keeps `record`, which has run, holds no
    /// target and no arguments, and whose one reference, the job's that ran
    /// it, becomes the pool's (the job is forgotten: see above).
    /// False: the pool is full, and the caller keeps the reference.
    func give(_ record: Unmanaged<InvocationRecord>) -> Bool {
        let side = loopSide
        let capacity = UInt(Self.capacity)
        if side.pointee.given &- side.pointee.takenSeen >= capacity {
            // Acquiring: a poster read the cell before it moved `taken` on.
            side.pointee.takenSeen = shared.pointee.taken.load(ordering: .acquiring)
            if side.pointee.given &- side.pointee.takenSeen >= capacity { return false }
        }
        let cell = cells + Int(side.pointee.given & (capacity - 1))
        cell.pointee.store(UInt(bitPattern: record.toOpaque()), ordering: .relaxed)
        side.pointee.given &+= 1
        if side.pointee.given % Self.publishEvery == 0 {
            shared.pointee.given.store(side.pointee.given, ordering: .releasing)
        }
        return true
    }

    /// Any thread: a record at least `lag` gives old, now the caller's
    /// alone (its one reference), or nil.
    func take() -> InvocationRecord? {
        // Acquiring (here and on a failed exchange): whoever moved `taken`
        // had seen `given` past it, so the `given` read next is too.
        var taken = shared.pointee.taken.load(ordering: .acquiring)
        while true {
            // Acquiring: the record's cell and everything the loop wrote to
            // the record come before.
            let given = shared.pointee.given.load(ordering: .acquiring)
            guard given > taken, given - taken > Self.lag else { return nil }
            // Read before the exchange: once `taken` moves past it, the loop
            // may fill the cell again.
            let record = address(at: taken)
            let (won, current) = shared.pointee.taken.compareExchange(
                expected: taken, desired: taken &+ 1, successOrdering: .acquiringAndReleasing,
                failureOrdering: .acquiring)
            if won {
                // The next call's record, if there is one: its lines start
                // coming over from the loop's core now, not when it is written.
                if given - taken > Self.lag &+ 1 {
                    mainloop_prefetch_for_write(address(at: taken &+ 1), 128)
                }
                return Unmanaged<InvocationRecord>.fromOpaque(record).takeRetainedValue()
            }
            taken = current
        }
    }

    /// Records published and not taken (for tests).
    var available: Int {
        let taken = shared.pointee.taken.load(ordering: .acquiring)
        let given = shared.pointee.given.load(ordering: .acquiring)
        return given > taken ? Int(given - taken) : 0
    }
}
