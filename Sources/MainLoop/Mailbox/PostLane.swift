// PostLane.swift: the queue of an unbounded mailbox, which producers never
// wait on.
//
// Why not the mailbox's mutex: a producer that finds the lock held spins a
// little and then sleeps in the kernel, and the holder's unlock then pays a
// futex wake-up. Once the loop and a producer start meeting at the lock (a
// loop that drains small batches meets it often), every meeting costs a
// sleep and a wake-up, batches shrink further, and the process stays in a
// mode at a quarter of its speed (Performance.md: the slow processes had
// 20-30 times the voluntary context switches of the fast ones). Here a post
// is one compare-and-swap on the tail and two plain stores; nobody holds
// anything another thread waits for, except for the few instructions in
// which the producer that took a block's last slot links the next block.
//
// Layout: jobs live in blocks of `LaneBlock.slots` slots. A position counts
// every slot of every block plus one sentinel per block (position & 1023 ==
// 1023), which no job takes: the tail stands on it only while the producer
// that took the block's last slot installs the next block, and producers
// that see it wait for that. Each slot has a state word, set (release) once
// its job is written; the loop takes slots in position order and stops at
// the first one whose job is not written yet.
//
// The cost of never locking: a producer suspended between its reservation
// and its publish (preempted, or stopped in a debugger) holds up every job
// behind its slot, and the loop polls, yielding, until the job is written;
// the final drain, and `stop()` on a loop that never ran, wait for it the
// same way. Producers that find the tail on a sentinel wait (yielding) for
// the producer linking the next block. A producer preempted while holding
// the mutex held up the loop the same way, asleep instead.
//
// Tail word: position << 1, with bit 0 set once the lane is closed (every
// later reservation fails, and so is refused; every earlier one is a job the
// loop will take, after its producer has written it).
//
// Wake-up rule: `asleep` is the lane's side of the mailbox's rule (see
// Mailbox.swift). The loop stores `true`, then reads the tail; a producer
// moves the tail, then reads `asleep`: both sequentially consistent, so at
// least one of them sees the other's write. A producer that finds it true
// and is the one to exchange it for false wakes the loop; the loop, when it
// sees work after declaring sleep, takes the flag back itself the same
// way, so one wake-up is written per sleep however many threads race.
//
// Blocks are recycled: the loop hands an emptied block to one of four spare
// words, where the producer that next needs a block takes it, so a loop
// keeping up with its producers allocates nothing in steady state.
import CLibevent
import Glibc
import Synchronization

/// What became of a pushed job.
enum PushOutcome {
    /// Queued; the loop will take it.
    case queued
    /// Queued, and the loop was asleep: the caller must wake it.
    case queuedWakeLoop
    /// The lane is closed: the job was not queued (and is released).
    case closed
}

/// A handle (a struct of pointers, so that a post retains nothing to reach
/// it); its owner, the mailbox, calls `destroy` once.
struct PostLane: @unchecked Sendable {
    // `@unchecked Sendable`: `words` holds only atomics; `cursor` is the
    // loop thread's (and, once the lane is closed with no loop to drain it,
    // `Mailbox.closeAndTakeAll`'s; after the last producer is gone, `destroy`'s).

    /// Every word shared between threads, each group on lines of its own.
    private struct Words: ~Copyable {
        /// Written by every post: position << 1 | closed.
        let tail = Atomic<UInt64>(0)
        /// The block the tail's position is in.
        let tailBlock = Atomic<UInt>(0)
        private let padding0 = LinePair()
        /// Read by every post; written when the loop sleeps and by the one
        /// thread that wakes it.
        let asleep = Atomic<Bool>(true)
        /// Record each job's post site (set once, never cleared).
        let labelling = Atomic<Bool>(false)
        /// Wake-ups the producers were told to write.
        let wakeUps = Atomic<UInt64>(0)
        private let padding1 = LinePair()
        /// Emptied blocks (addresses; 0: none), put by the loop, taken by
        /// producers, each by one exchange, so a block has one owner.
        let spares: InlineArray<4, Atomic<UInt>> = InlineArray { _ in Atomic(0) }
        private let padding2 = LinePair()
        /// The loop's: the position it has taken up to (for `pending`).
        let taken = Atomic<UInt64>(0)
    }

    /// 128 bytes: what keeps each group of `Words` on a line pair of its own.
    private struct LinePair {
        let words: SIMD16<UInt64> = .zero
    }

    /// Loop thread only: where the next job to take is.
    private struct Cursor {
        var head: UInt64 = 0
        var block: LaneBlock
    }

    private let words: UnsafeMutablePointer<Words>
    private let cursor: UnsafeMutablePointer<Cursor>
    /// What a sampled job's position leaves modulo the sampling interval
    /// (`LaneBlock.isSampled`): interval - 1 when the lane stamps jobs with
    /// the time they were accepted, the interval itself (no position's)
    /// when it does not. One compare a post either way, with no test of a
    /// flag beside it.
    private let sampledSlot: UInt64

    init(sampling: Bool) {
        // A power of two below a block's 1,024 positions: at 1,024 or more
        // the sampled position would be the sentinel's, and nothing would be.
        precondition(
            Mailbox.samplingInterval.nonzeroBitCount == 1 && Mailbox.samplingInterval <= 512,
            "MainLoop: the sampling interval must be a power of two up to 512")
        sampledSlot = sampling ? Mailbox.samplingInterval - 1 : Mailbox.samplingInterval
        words = allocateLines(Words.self)
        words.initialize(to: Words())
        let first = LaneBlock.make()
        words.pointee.tailBlock.store(first.address, ordering: .relaxed)
        cursor = allocateLines(Cursor.self)
        cursor.initialize(to: Cursor(block: first))
    }

    /// Abandons what is still queued and frees the lane. No producer is
    /// left (each holds the loop while it posts): every reserved slot is
    /// written.
    func destroy() {
        var remaining = JobBuffer()
        while take(into: &remaining, limit: Int.max) > 0 {}
        remaining.removeAll { job in
            if case .record(let record) = job { record.abandon(.shutDown) }
        }
        remaining.deallocate()
        cursor.pointee.block.free()
        for index in 0..<4 {
            let block = words.pointee.spares[index].exchange(0, ordering: .acquiring)
            if block != 0 { LaneBlock(address: block).free() }
        }
        cursor.deinitialize(count: 1)
        cursor.deallocate()
        words.deinitialize(count: 1)
        words.deallocate()
    }

    // MARK: Producers

    /// Any thread: queues `job` unless the lane is closed.
    @inline(__always)
    func push(_ job: consuming Job, site: PostSite) -> PushOutcome {
        var nextBlock: LaneBlock?
        var spins = 0
        var tail = words.pointee.tail.load(ordering: .acquiring)
        while true {
            if tail & 1 != 0 {
                if let nextBlock { recycle(nextBlock) }
                return .closed
            }
            let offset = Int(truncatingIfNeeded: (tail >> 1) & LaneBlock.positionMask)
            if offset == LaneBlock.sentinel {
                // The producer that took the last slot is linking the next block.
                spins += 1
                if spins & 63 == 0 { sched_yield() }
                tail = words.pointee.tail.load(ordering: .acquiring)
                continue
            }
            if offset == LaneBlock.slots - 1 && nextBlock == nil { nextBlock = takeSpare() ?? LaneBlock.make() }
            let block = LaneBlock(address: words.pointee.tailBlock.load(ordering: .acquiring))
            let (reserved, current) = words.pointee.tail.compareExchange(
                expected: tail, desired: tail &+ 2, successOrdering: .sequentiallyConsistent,
                failureOrdering: .acquiring)
            guard reserved else {
                tail = current
                continue
            }
            if offset == LaneBlock.slots - 1 {
                // The last slot: link the next block before the tail moves
                // past the sentinel, so that the loop, which crosses the
                // sentinel only once the tail is past it, finds the link.
                let next = nextBlock.unsafelyUnwrapped
                nextBlock = nil
                block.setNext(next)
                words.pointee.tailBlock.store(next.address, ordering: .releasing)
                words.pointee.tail.wrappingAdd(2, ordering: .releasing)
            }
            if LaneBlock.isSampled(tail >> 1, sampledSlot) { block.stamp(offset, mainloop_monotonic_ns()) }
            block.publish(job, at: offset, site: words.pointee.labelling.load(ordering: .acquiring) ? site : nil)
            // Another producer took the last slot first: the block goes
            // back now that this job is published (a free is no work to do
            // while the loop may be waiting for the slot).
            if let nextBlock { recycle(nextBlock) }
            return claimWake() ? .queuedWakeLoop : .queued
        }
    }

    /// Any thread: if the loop declared sleep, takes the wake-up on the
    /// caller (true: the caller must write it).
    @inline(__always)
    func claimWake() -> Bool {
        guard words.pointee.asleep.load(ordering: .sequentiallyConsistent) else { return false }
        guard words.pointee.asleep.exchange(false, ordering: .sequentiallyConsistent) else { return false }
        words.pointee.wakeUps.wrappingAdd(1, ordering: .relaxed)
        return true
    }

    /// Any thread: record each job's post site from now on.
    func startLabelling() {
        words.pointee.labelling.store(true, ordering: .releasing)
    }

    /// Any thread: every later push is refused; every earlier one will be taken.
    func close() {
        words.pointee.tail.bitwiseOr(1, ordering: .sequentiallyConsistent)
    }

    private func takeSpare() -> LaneBlock? {
        for index in 0..<4 {
            let block = words.pointee.spares[index].exchange(0, ordering: .acquiring)
            if block != 0 { return LaneBlock(address: block) }
        }
        return nil
    }

    /// Any thread: an empty block goes back to the spares, or is freed when
    /// they are full.
    private func recycle(_ block: LaneBlock) {
        block.unlink()
        for index in 0..<4
        where words.pointee.spares[index].compareExchange(expected: 0, desired: block.address, ordering: .releasing)
            .exchanged
        {
            return
        }
        block.free()
    }

    // MARK: Counters

    /// Jobs ever queued (sentinels are not jobs).
    var pushed: UInt64 { LaneBlock.jobs(before: words.pointee.tail.load(ordering: .relaxed) >> 1) }

    /// Jobs queued and not yet taken by the loop.
    var pending: Int {
        let taken = LaneBlock.jobs(before: words.pointee.taken.load(ordering: .relaxed))
        let pushed = self.pushed
        return pushed > taken ? Int(pushed - taken) : 0
    }

    var wakeUps: UInt64 { words.pointee.wakeUps.load(ordering: .relaxed) }

    // MARK: The loop

    /// Loop thread: moves up to `limit` jobs into `buffer`, in order, with
    /// their sites and stamps, stopping at the first one not written yet.
    /// Returns how many it moved.
    func take(into buffer: inout JobBuffer, limit: Int) -> Int {
        let tail = words.pointee.tail.load(ordering: .acquiring) >> 1
        var head = cursor.pointee.head
        // Whole lines only (two slots each, from an even position), unless
        // that leaves nothing: a line the loop reads while its producer
        // still writes the slot after is a line bouncing between the cores,
        // and a loop close behind its producer would do that on every line.
        let end = tail & ~1 > head ? tail & ~1 : tail
        var block = cursor.pointee.block
        var moved = 0
        while head < end && moved < limit {
            let offset = Int(truncatingIfNeeded: head & LaneBlock.positionMask)
            if offset == LaneBlock.sentinel {
                // The tail is past the sentinel, so the link is there.
                let next = block.next
                block.clearSlots()
                recycle(block)
                block = next
                head &+= 1
                continue
            }
            guard let site = block.published(offset) else { break }
            let job = block.take(offset)
            if site != .none || buffer.recordsSites {
                buffer.append(job, site: site)
            } else {
                buffer.append(job)
            }
            if LaneBlock.isSampled(head, sampledSlot) { buffer.sampleLast(acceptedAt: block.stamp(offset)) }
            head &+= 1
            moved += 1
        }
        cursor.pointee.head = head
        cursor.pointee.block = block
        words.pointee.taken.store(head, ordering: .relaxed)
        return moved
    }

    /// Loop thread: a job was reserved and is not taken yet (perhaps not
    /// yet written). Sequentially consistent: the read half of the wake-up
    /// rule, after `declareSleep`.
    var hasWork: Bool {
        words.pointee.tail.load(ordering: .sequentiallyConsistent) >> 1 != cursor.pointee.head
    }

    /// Loop thread, after `declareSleep` and finding work: takes the
    /// declaration back, unless a producer took it first (and so writes a
    /// wake-up, which this does not count). True: taken back.
    func cancelSleep() -> Bool {
        words.pointee.asleep.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// Loop thread: the loop will not look at the lane again until woken.
    /// The caller must then check `hasWork` (and anything else that wakes
    /// it) and, if there is some, `cancelSleep`.
    func declareSleep() {
        words.pointee.asleep.store(true, ordering: .sequentiallyConsistent)
    }
}

// MARK: - LaneBlock

/// One block of a `PostLane`, in one allocation: the link to the next block,
/// a stamp per 64 slots, then the slots, 32 bytes each: a job and its state
/// word, two to a cache line. A handle only; the lane frees blocks explicitly.
///
/// State word: 0 until the job is written; then `written` (bit 63), or'ed
/// with the post site's bits when its site was recorded (a site uses the
/// low 63 bits: see `PostSite`).
struct LaneBlock {
    // Computed, not stored: a stored static is a lazy global, and reaching
    // it would cost a `swift_once` check per post.
    static var slots: Int { 1023 }
    static var sentinel: Int { 1023 }
    static var positionMask: UInt64 { 1023 }
    private static var stampsOffset: Int { 64 }
    private static var slotsOffset: Int { stampsOffset + 16 * 8 }
    private static var slotSize: Int { 32 }
    private static var stateOffset: Int { 24 }
    private static var byteCount: Int { slotsOffset + slots * slotSize }
    private static var written: UInt { 1 << 63 }

    let address: UInt
    private var raw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: address).unsafelyUnwrapped }

    init(address: UInt) { self.address = address }

    /// Jobs in the positions before `position` (one sentinel per 1,024).
    static func jobs(before position: UInt64) -> UInt64 { position - position / 1024 }

    /// The job at `position` is stamped for the latency figures when its
    /// position leaves `slot` modulo the sampling interval (interval - 1 on
    /// a sampling lane; the interval, which none does, on another). So the
    /// 256th job is the first (a loop with a handful of posts has no
    /// sample), then the jobs at positions 511 and 767 of each block; the
    /// fourth place, 1,023, is the block's sentinel: three jobs in 1,023,
    /// one in 341. A mask and a compare on each side of a post, and no test
    /// of a flag: counting jobs instead (positions less sentinels), exactly
    /// one in 256, cost 10 instructions a post more, figures on or off.
    /// Sampled jobs are 256 slots apart, so each block's lie in distinct
    /// stamp words (`offset >> 6`).
    @inline(__always)
    static func isSampled(_ position: UInt64, _ slot: UInt64) -> Bool {
        position & (Mailbox.samplingInterval - 1) == slot
    }

    /// A new block with no link and every slot unwritten.
    static func make() -> LaneBlock {
        precondition(MemoryLayout<Job>.size <= stateOffset, "MainLoop: a job does not fit a lane slot")
        let raw = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 128)
        raw.initializeMemory(as: Atomic<UInt>.self, to: Atomic(0))
        (raw + stampsOffset).bindMemory(to: UInt64.self, capacity: 16)
        for offset in 0..<slots {
            let slot = raw + (slotsOffset + offset * slotSize)
            slot.bindMemory(to: Job.self, capacity: 1)
            (slot + stateOffset).initializeMemory(as: Atomic<UInt>.self, to: Atomic(0))
        }
        return LaneBlock(address: UInt(bitPattern: raw))
    }

    func free() {
        raw.deallocate()
    }

    private var link: UnsafeMutablePointer<Atomic<UInt>> { raw.assumingMemoryBound(to: Atomic<UInt>.self) }

    @inline(__always)
    private func slot(_ offset: Int) -> UnsafeMutableRawPointer {
        raw + (LaneBlock.slotsOffset + offset * LaneBlock.slotSize)
    }

    @inline(__always)
    private func state(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        (slot(offset) + LaneBlock.stateOffset).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    @inline(__always)
    private func job(_ offset: Int) -> UnsafeMutablePointer<Job> {
        slot(offset).assumingMemoryBound(to: Job.self)
    }

    private func stampPointer(_ offset: Int) -> UnsafeMutablePointer<UInt64> {
        (raw + LaneBlock.stampsOffset).assumingMemoryBound(to: UInt64.self) + (offset >> 6)
    }

    var next: LaneBlock { LaneBlock(address: link.pointee.load(ordering: .acquiring)) }

    func setNext(_ block: LaneBlock) {
        link.pointee.store(block.address, ordering: .releasing)
    }

    /// Before reuse (published by the release that hands the block on).
    func unlink() {
        link.pointee.store(0, ordering: .relaxed)
    }

    /// Writes `job` and publishes it, with its site when one is given.
    @inline(__always)
    func publish(_ job: consuming Job, at offset: Int, site: PostSite?) {
        self.job(offset).initialize(to: job)
        state(offset).pointee.store(LaneBlock.written | (site?.bits ?? 0), ordering: .releasing)
    }

    func stamp(_ offset: Int, _ time: UInt64) { stampPointer(offset).initialize(to: time) }

    func stamp(_ offset: Int) -> UInt64 { stampPointer(offset).pointee }

    /// nil: not written yet; else its recorded site (`.none`: none).
    @inline(__always)
    func published(_ offset: Int) -> PostSite? {
        let word = state(offset).pointee.load(ordering: .acquiring)
        return word == 0 ? nil : PostSite(bits: word & ~LaneBlock.written)
    }

    /// Moves job `offset` out.
    @inline(__always)
    func take(_ offset: Int) -> Job {
        job(offset).move()
    }

    /// Loop thread, once every slot was taken: marks them all unwritten,
    /// for reuse. (Not slot by slot as they are taken: a slot's line is
    /// still being written by the producer of the slot after it.)
    func clearSlots() {
        for offset in 0..<LaneBlock.slots { state(offset).pointee.store(0, ordering: .relaxed) }
    }
}
