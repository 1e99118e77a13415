// TimerQueue.swift: a loop's timers, in a heap of its own, behind one
// timerfd that is set only when the earliest deadline moves earlier.
//
// Why not libevent's timers: on its default clock (CLOCK_MONOTONIC_COARSE,
// a tick of a few milliseconds) a timer could fire early, or, corrected for
// that, 3-5 ms late; with EVENT_BASE_FLAG_PRECISE_TIMER libevent calls
// timerfd_settime on every turn of the loop, timers or not, which was one
// system call in four of an unpipelined kvd request and 3.5% of its samples
// (bench/amd-vm-2026-12-03.txt). Here the timerfd (CLOCK_MONOTONIC, absolute
// deadlines) is set when a timer becomes the earliest and after a pass that
// ran timers, so a loop that only runs posts and I/O makes no call for
// timers at all, and a timer still never fires before its deadline.
//
// A timer due at once, added on the loop's thread outside a pass (an I/O
// callback's or a job's "after this turn"), activates the timerfd's event
// instead (`event_active` with EV_TIMEOUT, which epoll never reports, so the
// pass knows not to read the timerfd: no system call at all), and runs in
// the same turn, after the callbacks already due. Inside a pass it sets the timerfd
// instead, so that a timer rescheduling itself at once waits for the next
// turn (an event activated from its own callback would run again in the
// same pass, for ever).
//
// Order: by deadline, then by when the timer was added (a sequence
// number), so timers due together run in the order they were scheduled.
// A pass runs only the timers due when it starts that were added before
// it: a handler that schedules a timer with no delay gets it on the next
// turn, after I/O and posts, not in the same pass (no starving the loop).
//
// Cancellation (the rule `LoopEvent` promises): `remove` takes a timer out
// of the heap, under the lock, so it never starts again; if the loop's
// thread is running its handler right now, a canceller on another thread
// waits for the handler to return. A periodic timer is put back after its
// handler only when no `remove` came meanwhile.
import CLibevent
import Glibc

final class TimerQueue: @unchecked Sendable {
    // `@unchecked Sendable`: every `var` is guarded by `parker`'s lock;
    // `fd` never changes.
    private let parker = Parker()
    /// The timerfd (CLOCK_MONOTONIC). Owned: closed in deinit.
    let fd: Int32
    // Guarded by the lock: a binary min-heap on (deadline, sequence).
    private var heap: [LoopEvent] = []
    private var nextSequence: UInt64 = 0
    // Guarded by the lock: the deadline the timerfd is set to, until it
    // fires (UInt64.max: none pending).
    private var armed: UInt64 = .max
    // Guarded by the lock: the timer whose handler the loop's thread runs.
    private var running: LoopEvent?
    // Guarded by the lock: cancellers waiting for `running` to return.
    private var waiters = 0
    // Guarded by the lock: timerfd_settime calls so far.
    private var armingCount = 0
    // Guarded by the lock: reads of the timerfd so far.
    private var readCount = 0
    // Guarded by the lock: a pass is running (on the loop's thread).
    private var inPass = false
    // Guarded by the lock: the thread that ran the last pass (its
    // `ThreadToken`). Not `EventLoop.inLoop`: a handler that runs another
    // loop on this thread makes that loop the thread's current one.
    private var passThread: UInt = 0
    /// The libevent event that watches `fd`, for `event_active`. Set once by
    /// the loop's core, before any thread can reach the queue.
    nonisolated(unsafe) var event: OpaquePointer?

    init() throws(EventLoopError) {
        let fd = mainloop_timerfd_create()
        guard fd >= 0 else { throw .system(call: "timerfd_create", errno: errno) }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Child of fork() only: the lock anew (the parent's threads are gone).
    func remakeInForkedChild() {
        parker.remakeInForkedChild()
    }

    /// Any thread: `timer` fires `delay` from now (now, if not positive),
    /// unless it was removed already. `onLoopThread`: the caller is the
    /// thread that runs the loop. `now` (tests only): the clock's reading.
    func add(_ timer: LoopEvent, after delay: Duration, onLoopThread: Bool, now: UInt64? = nil) {
        let now = now ?? mainloop_monotonic_ns()
        let deadline = monotonicDeadline(now, plus: delay)
        parker.lock()
        guard !timer.place.removed else { return parker.unlock() }
        let activate = deadline <= now && onLoopThread && !inPass && event != nil
        insert(timer, deadline: deadline, arming: !activate)
        parker.unlock()
        // Outside the lock (libevent takes its own), where its order with
        // other threads' calls does not matter, unlike the timerfd's setting.
        if activate { event_active(event, Int32(EV_TIMEOUT), 0) }
    }

    /// Any thread: `timer` never starts again. When its handler is running
    /// on the loop's thread and the caller is another thread, waits for it
    /// to return. Idempotent.
    func remove(_ timer: LoopEvent) {
        parker.lock()
        defer { parker.unlock() }
        timer.place.removed = true
        if timer.place.heapIndex >= 0 { removeAt(timer.place.heapIndex) }
        guard running === timer, ThreadToken.current != passThread else { return }
        waiters += 1
        while running === timer { _ = parker.wait(until: nil) }
        waiters -= 1
    }

    /// Loop thread, when the timerfd is readable (`readable`) or its event
    /// was activated: runs every timer due now (added before now), earliest
    /// first, then sets the timerfd for the next.
    func fire(readable: Bool) {
        var expirations: UInt64 = 0
        if readable { _ = read(fd, &expirations, 8) }  // resets it; EAGAIN after a spurious wake-up
        let thread = ThreadToken.current
        parker.lock()
        if readable { readCount += 1 }
        inPass = true
        passThread = thread
        let now = mainloop_monotonic_ns()
        // An expired timerfd is no longer set (it will not fire again); one
        // set later still is, for a timer that may be gone.
        if expirations > 0 || armed <= now { armed = .max }
        let passEnd = nextSequence
        while let top = heap.first, top.place.deadline <= now, top.place.sequence < passEnd {
            removeAt(0)
            running = top
            parker.unlock()
            top.fireTimer()
            parker.lock()
            running = nil
            if waiters > 0 && !FaultInjection.dropsReleases { parker.broadcast() }
            if let interval = top.timerInterval, !top.place.removed {
                // The next period counts from the deadline, not from when it
                // ran, so a periodic timer does not drift; after a long stall
                // it counts from now instead of firing for every period missed.
                let next = saturatingSum(top.place.deadline, interval)
                insert(top, deadline: next > now ? next : saturatingSum(now, interval))
            }
        }
        inPass = false
        if let first = heap.first, first.place.deadline < armed { arm(first.place.deadline) }
        parker.unlock()
    }

    /// Timers in the heap (for tests).
    var count: Int { parker.withLock { heap.count } }

    /// timerfd_settime calls so far (for tests: none per turn of the loop).
    var armings: Int { parker.withLock { armingCount } }

    /// Reads of the timerfd so far (for tests: none for an activated pass).
    var reads: Int { parker.withLock { readCount } }

    /// For tests: the heap is ordered and every timer knows its index.
    var isConsistent: Bool {
        parker.withLock {
            heap.indices.allSatisfy { index in
                heap[index].place.heapIndex == index && (index == 0 || !before(heap[index], heap[(index - 1) / 2]))
            }
        }
    }

    // MARK: The heap (lock held)

    private func insert(_ timer: LoopEvent, deadline: UInt64, arming: Bool = true) {
        timer.place.deadline = deadline
        timer.place.sequence = nextSequence
        nextSequence &+= 1
        timer.place.heapIndex = heap.count
        heap.append(timer)
        siftUp(heap.count - 1)
        if arming, !inPass, deadline < armed { arm(deadline) }
    }

    /// Lock held, the system call too: two threads setting the timerfd one
    /// after the other outside it could make their calls in the other
    /// order, leaving a later deadline set than `armed` says, and the
    /// earliest timer would fire late.
    private func arm(_ deadline: UInt64) {
        let rc = mainloop_timerfd_set(fd, deadline)
        // Only EBADF/EINVAL can fail here: a closed fd or a bad deadline,
        // both bugs of this file.
        precondition(rc == 0, "MainLoop: timerfd_settime failed with errno \(rc)")
        armed = deadline
        armingCount += 1
    }

    private func removeAt(_ index: Int) {
        let removed = heap[index]
        let last = heap.removeLast()
        removed.place.heapIndex = -1
        guard index < heap.count else { return }
        heap[index] = last
        last.place.heapIndex = index
        siftUp(index)
        siftDown(last.place.heapIndex)
    }

    private func before(_ a: LoopEvent, _ b: LoopEvent) -> Bool {
        a.place.deadline != b.place.deadline ? a.place.deadline < b.place.deadline : a.place.sequence < b.place.sequence
    }

    private func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard before(heap[index], heap[parent]) else { return }
            swapAt(index, parent)
            index = parent
        }
    }

    private func siftDown(_ start: Int) {
        var index = start
        while true {
            let left = 2 * index + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && before(heap[right], heap[left]) ? right : left
            guard before(heap[child], heap[index]) else { return }
            swapAt(index, child)
            index = child
        }
    }

    private func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].place.heapIndex = i
        heap[j].place.heapIndex = j
    }
}

extension TimerQueue {
    /// A timer's place in its queue. Its fields are private to this file:
    /// only the queue reads or writes them, under its lock. (The value as a
    /// whole is `LoopEvent.place`, which no other file writes after it is
    /// made; the compiler does not stop one from doing so.)
    struct Place {
        /// When it is due (monotonic nanoseconds).
        fileprivate var deadline: UInt64 = 0
        /// When it was (re)added, among the queue's timers: the tie-break.
        fileprivate var sequence: UInt64 = 0
        /// Its index in the queue's heap; -1 when not in it.
        fileprivate var heapIndex = -1
        /// Set by the queue's `remove`: never add it again.
        fileprivate var removed = false
    }
}
