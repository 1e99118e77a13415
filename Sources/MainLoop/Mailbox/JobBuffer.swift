// JobBuffer.swift: the mailbox's storage for pending jobs.

/// A growable array of jobs with no copy-on-write and no uniqueness checks:
/// the mailbox owns exactly two of them and swaps them, so steady state
/// allocates nothing. Not thread-safe; its owner says what guards it.
struct JobBuffer {
    private(set) var base: UnsafeMutablePointer<Job>?
    private(set) var count = 0
    private(set) var capacity = 0

    @inline(__always)
    mutating func append(_ job: Job) {
        if count == capacity { grow() }
        (base.unsafelyUnwrapped + count).initialize(to: job)
        count += 1
    }

    private mutating func grow() {
        let newCapacity = Swift.max(capacity * 2, 256)
        let newBase = UnsafeMutablePointer<Job>.allocate(capacity: newCapacity)
        if let base {
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }

    /// Runs every job in order and leaves the buffer empty (capacity kept).
    /// Each job is moved out before it runs, so its closure is released as
    /// soon as it returns.
    mutating func runAll() {
        guard let base else { return }
        for index in 0..<count {
            (base + index).move().run()
        }
        count = 0
    }

    /// Removes every job, handing each to `body` (for abandoning them).
    mutating func removeAll(_ body: (Job) -> Void) {
        guard let base else { return }
        for index in 0..<count { body((base + index).move()) }
        count = 0
    }

    /// Frees the storage. The buffer must be empty.
    mutating func deallocate() {
        precondition(count == 0, "JobBuffer freed with \(count) jobs in it")
        base?.deallocate()
        base = nil
        capacity = 0
    }
}
