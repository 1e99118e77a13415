// JobBuffer.swift: the mailbox's storage for pending jobs.
//
// Beside each job, a word for its post site (Observability/PostSite.swift),
// written only once somebody asked for labels: `sitesFrom` is the first
// index whose word was written. The site array is allocated on the first
// labelled append and grows with the jobs from then on, so a loop nobody
// watches pays neither memory nor stores for it. Sampled jobs (one
// post in 64, for the latency figures) are listed in `samples`, in index
// order, with the time each was accepted.

/// A growable array of jobs with no copy-on-write and no uniqueness checks:
/// the mailbox owns exactly two of them and swaps them, so steady state
/// allocates nothing. Not thread-safe; its owner says what guards it.
struct JobBuffer {
    private(set) var base: UnsafeMutablePointer<Job>?
    private var sites: UnsafeMutablePointer<PostSite>?
    private(set) var count = 0
    private(set) var capacity = 0
    /// The first index whose site was recorded (Int.max: none).
    private var sitesFrom = Int.max
    /// Sampled jobs: their index and when they were accepted (monotonic ns).
    private(set) var samples: [(index: Int, acceptedAt: UInt64)] = []

    @inline(__always)
    mutating func append(_ job: Job) {
        if count == capacity { grow() }
        (base.unsafelyUnwrapped + count).initialize(to: job)
        count += 1
    }

    /// Appends `job` with its post site recorded.
    @inline(__always)
    mutating func append(_ job: Job, site: PostSite) {
        if count == capacity { grow() }
        if sites == nil { sites = .allocate(capacity: capacity) }
        if sitesFrom == Int.max { sitesFrom = count }
        (base.unsafelyUnwrapped + count).initialize(to: job)
        (sites.unsafelyUnwrapped + count).initialize(to: site)
        count += 1
    }

    /// Marks the last job appended as sampled, accepted at `time`.
    mutating func sampleLast(acceptedAt time: UInt64) {
        samples.append((count - 1, time))
    }

    private mutating func grow() {
        let newCapacity = Swift.max(capacity * 2, 256)
        let newBase = UnsafeMutablePointer<Job>.allocate(capacity: newCapacity)
        if let base {
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        if let sites {
            let newSites = UnsafeMutablePointer<PostSite>.allocate(capacity: newCapacity)
            if sitesFrom < count {
                (newSites + sitesFrom).moveInitialize(from: sites + sitesFrom, count: count - sitesFrom)
            }
            sites.deallocate()
            self.sites = newSites
        }
        base = newBase
        capacity = newCapacity
    }

    /// Moves job `index` out (each job is taken once, in order, by the loop).
    @inline(__always)
    func take(_ index: Int) -> Job {
        (base.unsafelyUnwrapped + index).move()
    }

    /// The post site of job `index`, if it was recorded.
    func site(_ index: Int) -> PostSite {
        index >= sitesFrom && index < count ? sites.unsafelyUnwrapped[index] : .none
    }

    /// After every job was taken: empty again (capacity kept).
    mutating func reset() {
        count = 0
        sitesFrom = Int.max
        if !samples.isEmpty { samples.removeAll(keepingCapacity: true) }
    }

    /// Removes every job, handing each to `body` (for abandoning them).
    mutating func removeAll(_ body: (Job) -> Void) {
        guard let base else { return }
        for index in 0..<count { body((base + index).move()) }
        reset()
    }

    /// Frees the storage. The buffer must be empty.
    mutating func deallocate() {
        precondition(count == 0, "JobBuffer freed with \(count) jobs in it")
        base?.deallocate()
        sites?.deallocate()
        base = nil
        sites = nil
        capacity = 0
    }
}
