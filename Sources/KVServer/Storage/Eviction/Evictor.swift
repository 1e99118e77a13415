// Evictor.swift: keeps memory under maxmemory by deleting keys, as Redis
// 7.0's performEvictions does (evict.c), before each command while a limit
// is set.
//
// - What memory is: INFO's used_memory (every byte the allocator handed
//   out and did not get back, counted as it happens: CHeapAccounting),
//   less what the reclaiming thread has been handed and not freed yet,
//   which is already let go (Redis leaves its AOF and replica buffers out
//   for the same reason: freeing must not wait on them).
// - Which key goes: under an LRU, LFU or TTL policy, the best of a pool of
//   16 candidates, refilled from `maxmemory-samples` random keys of each
//   database on every pick (the longest idle, the least used, the nearest
//   deadline); a candidate deleted meanwhile is skipped. Under a random
//   policy, a random key of the next database that has one. The volatile
//   policies pick among keys with an expiry only.
// - How long: a command's eviction stops after maxmemory-eviction-tenacity's
//   time (500 us by default), checked after each key (Redis checks every
//   16), and the loop goes on in turns of its own until memory is under
//   the limit or nothing is left to evict; meanwhile each command evicts
//   16 keys at most and runs (Redis's EVICT_RUNNING, Dispatcher+Memory.swift).
//   So a limit lowered far below use never holds the core for one long
//   stretch.
// - Not while a snapshot is written (see `perform`).
// - When it cannot: nothing evictable left (or noeviction) and still over
//   the limit. Then the commands that may grow memory are refused with OOM
//   (Dispatcher+Memory.swift).
//
// Core loop only.
import Glibc

/// Deletes keys until memory is under maxmemory.
final class Evictor {
    /// What `perform` found.
    enum Outcome {
        /// Memory is under the limit (or there is no limit).
        case ok
        /// Over the limit, and eviction goes on in the loop's next turns.
        case running
        /// Over the limit, with nothing left to evict (or noeviction).
        case failed
    }

    /// A key that may go: its database, and its score (higher goes first).
    private struct Candidate {
        var key: [UInt8]
        var database: Int
        var score: UInt64
    }

    /// The pool's size (Redis's EVPOOL_SIZE).
    static let poolSize = 16

    /// The best candidates seen, in ascending score: the last goes first.
    private var pool: [Candidate] = []
    /// The database a random policy looks in first.
    private var nextDatabase = 0
    /// Keys evicted since start (INFO's evicted_keys; CONFIG RESETSTAT zeroes it).
    var evictedKeys = 0
    /// What the last eviction outside a snapshot found.
    private var lastOutcome = Outcome.ok
    /// The bytes that count against maxmemory now.
    let usedMemory: () -> Int
    /// A turn of the loop that goes on evicting is scheduled (the
    /// dispatcher schedules it when `perform` answers `running`).
    var isContinuing = false

    /// An evictor that reads memory from `usedMemory` (the heap's count
    /// less the reclaiming thread's pending bytes by default).
    init(usedMemory: @escaping () -> Int = { max(allocatedBytes() - Reclaimer.pendingBytes, 0) }) {
        self.usedMemory = usedMemory
    }

    /// Deletes keys of `databases` until memory is under the policy's limit,
    /// or the time limit passes, or nothing is left to evict. The DELs it
    /// logs are left pending in the feed, for the caller to commit.
    ///
    /// While a snapshot is written nothing is evicted and the outcome is the
    /// last one before it: the snapshot holds every key it saw, so a
    /// deletion would free nothing (and copy its shard of the table), and
    /// eviction would go on until the keyspace were empty. Redis's child
    /// process holds its copy outside used_memory; kvd's view shares the
    /// heap. Writes during the save may take memory past the limit, which
    /// eviction takes back once it ends.
    ///
    /// `atMost` caps the keys this call evicts (a command's share while
    /// the loop's own turns evict the rest).
    func perform(_ databases: Databases, atMost: Int = .max) -> Outcome {
        let policy = databases.memory
        guard !databases.fence.isOpen else { return lastOutcome == .failed ? .failed : .ok }
        lastOutcome = evict(databases, policy, atMost: atMost)
        return lastOutcome
    }

    private func evict(_ databases: Databases, _ policy: MemoryPolicy, atMost: Int) -> Outcome {
        guard policy.maxmemory > 0, usedMemory() > policy.maxmemory else { return .ok }
        guard policy.policy != .noEviction else { return .failed }
        let start = monotonicNanoseconds()
        let limit = policy.evictionTimeLimit
        var evicted = 0
        while usedMemory() > policy.maxmemory {
            guard evictOne(databases) else { return .failed }
            evictedKeys += 1
            evicted += 1
            if evicted >= atMost || (monotonicNanoseconds() - start) / 1000 > limit { return .running }
        }
        return .ok
    }

    /// Evicts the next key the policy picks; false when none is left.
    private func evictOne(_ databases: Databases) -> Bool {
        let memory = databases.memory
        let volatileOnly = !memory.policy.allKeys
        guard memory.policy.usesPool else {
            for _ in 0..<databases.count {
                nextDatabase = (nextDatabase + 1) % databases.count
                if let sample = databases[nextDatabase].randomSample(volatileOnly: volatileOnly) {
                    return databases[nextDatabase].evict(sample.key, volatileOnly: volatileOnly)
                }
            }
            return false
        }
        let now = databases.clock.now
        while true {
            var present = false
            for database in databases.indices {
                let keyspace = databases[database]
                guard volatileOnly ? keyspace.expiresCount > 0 : keyspace.count > 0 else { continue }
                present = true
                for _ in 0..<memory.samples {
                    guard let sample = keyspace.randomSample(volatileOnly: volatileOnly) else { continue }
                    let score: UInt64 =
                        switch memory.policy {
                        case .volatileTTL: UInt64.max - UInt64(bitPattern: sample.expiresAt ?? .max)
                        case .allKeysLFU, .volatileLFU: 255 - UInt64(memory.frequency(sample.access, now: now))
                        default: UInt64(memory.idleMilliseconds(sample.access, now: now))
                        }
                    offer(Candidate(key: sample.key, database: database, score: score))
                }
            }
            guard present else { return false }
            // The best first; one deleted since it was sampled is skipped.
            while let best = pool.popLast() {
                if databases[best.database].evict(best.key, volatileOnly: volatileOnly) { return true }
            }
        }
    }

    /// Puts `candidate` in the pool in score order; when the pool is full,
    /// the worst goes (or the candidate, when it is the worst).
    private func offer(_ candidate: Candidate) {
        let place = pool.firstIndex { $0.score >= candidate.score } ?? pool.count
        if pool.count < Evictor.poolSize {
            pool.insert(candidate, at: place)
        } else if place > 0 {
            pool.removeFirst()
            pool.insert(candidate, at: place - 1)
        }
    }

    /// Forgets the candidates (on a policy change: they were scored another way).
    func reset() {
        pool.removeAll()
    }
}
