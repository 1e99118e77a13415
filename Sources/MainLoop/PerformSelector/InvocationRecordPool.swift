// InvocationRecordPool.swift: invocation records that ran, kept for the next
// performSelector to fill instead of allocating one.
//
// Why: a record is allocated on the poster's thread and freed on the loop's.
// glibc's free puts such a block on a list of the poster's arena, and the
// poster's next malloc walks that list, one dependent load of a block the
// loop's core wrote per record, with a compare-and-swap on the list's head
// that the loop's frees also write. Profiled (Performance.md), that was
// 8-27% of the poster's time per invocation, the more the farther apart
// the host had put the two vCPUs. Here the loop hands a record back through
// a ring of pointers, four cells to a cache line, and a poster takes it with
// one compare-and-swap on an index only posters write.
//
// The ring is Dmitry Vyukov's bounded multi-producer multi-consumer queue:
// each cell has a sequence word saying whose turn it is. Neither side ever
// waits for the other: a full ring makes the loop release the record as
// before, an empty one makes the poster allocate. So a thread stopped
// mid-operation, or a fork() that copies a ring in the middle of one, costs
// at most pooling, never progress.
//
// A record is reused only when the taker holds its one reference
// (`isKnownUniquelyReferenced`): the loop gives a record back while the
// job that ran it still holds it, and anything else may still hold one.
// A record that is still shared is dropped, and freed by its last holder.
import Synchronization

/// Records that ran, ready to be refilled: `shared` for the process (tests
/// make their own). Records of up to `argumentCapacity` arguments are pooled.
final class InvocationRecordPool: @unchecked Sendable {
    // `@unchecked Sendable`: `cells` is shared, each cell's `record` written
    // by the one thread whose turn its sequence word gave, and read after an
    // acquiring load of that word; the indices are atomics.

    /// The argument capacity of every pooled record: two arguments keep a
    /// record at 112 bytes, one of glibc's fast bins when the pool is empty.
    static var argumentCapacity: Int { 2 }
    /// Cells in the ring, a power of two: 56 KB of records at most.
    static var capacity: Int { 512 }

    private struct Cell: ~Copyable {
        let sequence: Atomic<UInt>
        var record: UnsafeMutableRawPointer?
    }

    /// Each index on a line pair of its own: posters write `taken`, loops
    /// write `given`.
    private struct Indices: ~Copyable {
        let given = Atomic<UInt>(0)
        private let padding: SIMD16<UInt64> = .zero
        let taken = Atomic<UInt>(0)
    }

    private let cells: UnsafeMutablePointer<Cell>
    private let indices: UnsafeMutablePointer<Indices>

    /// The process's pool. Never freed: the records it holds at exit are
    /// reachable from it.
    static let shared = InvocationRecordPool()

    init() {
        let capacity = Self.capacity
        cells = UnsafeMutableRawPointer.allocate(
            byteCount: capacity * MemoryLayout<Cell>.stride, alignment: 128
        ).bindMemory(to: Cell.self, capacity: capacity)
        for index in 0..<capacity {
            (cells + index).initialize(to: Cell(sequence: Atomic(UInt(index)), record: nil))
        }
        indices = allocateLines(Indices.self)
        indices.initialize(to: Indices())
    }

    /// Releases the records still kept; nobody else may use the pool by then.
    deinit {
        while let address = dequeue() { Unmanaged<InvocationRecord>.fromOpaque(address).release() }
        cells.deinitialize(count: Self.capacity)
        cells.deallocate()
        indices.deinitialize(count: 1)
        indices.deallocate()
    }

    /// Loop thread: keeps `record`, which has run and holds nothing of its
    /// call any more, for a later call; releases it instead when the ring
    /// is full.
    func give(_ record: InvocationRecord) {
        let mask = UInt(Self.capacity - 1)
        var position = indices.pointee.given.load(ordering: .relaxed)
        while true {
            let cell = cells + Int(position & mask)
            let sequence = cell.pointee.sequence.load(ordering: .acquiring)
            let lag = Int(bitPattern: sequence &- position)
            if lag == 0 {
                let (won, current) = indices.pointee.given.compareExchange(
                    expected: position, desired: position &+ 1, ordering: .relaxed)
                if won {
                    cell.pointee.record = Unmanaged.passRetained(record).toOpaque()
                    cell.pointee.sequence.store(position &+ 1, ordering: .releasing)
                    return
                }
                position = current
            } else if lag < 0 {
                return  // Full: the record goes with its job.
            } else {
                position = indices.pointee.given.load(ordering: .relaxed)
            }
        }
    }

    /// Any thread: a record given back that nobody else holds, or nil.
    func take() -> InvocationRecord? {
        guard let address = dequeue() else { return nil }
        var record = Unmanaged<InvocationRecord>.fromOpaque(address).takeRetainedValue()
        // The job that ran it may not have let go yet, or somebody else may
        // hold it: then it is not ours to fill (and goes with its last holder).
        guard isKnownUniquelyReferenced(&record) else { return nil }
        // Whatever its last other holder did to the record comes before that
        // holder's release, which wrote the count just read.
        atomicMemoryFence(ordering: .acquiring)
        return record
    }

    /// Any thread: the oldest record given, with the pool's reference, or nil.
    private func dequeue() -> UnsafeMutableRawPointer? {
        let mask = UInt(Self.capacity - 1)
        var position = indices.pointee.taken.load(ordering: .relaxed)
        while true {
            let cell = cells + Int(position & mask)
            let sequence = cell.pointee.sequence.load(ordering: .acquiring)
            let lag = Int(bitPattern: sequence &- (position &+ 1))
            if lag == 0 {
                let (won, current) = indices.pointee.taken.compareExchange(
                    expected: position, desired: position &+ 1, ordering: .relaxed)
                if won {
                    let address = cell.pointee.record.unsafelyUnwrapped
                    cell.pointee.sequence.store(position &+ mask &+ 1, ordering: .releasing)
                    return address
                }
                position = current
            } else if lag < 0 {
                return nil  // Empty.
            } else {
                position = indices.pointee.taken.load(ordering: .relaxed)
            }
        }
    }
}
