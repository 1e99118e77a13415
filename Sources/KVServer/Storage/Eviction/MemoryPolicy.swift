// MemoryPolicy.swift: maxmemory and what goes with it (maxmemory-policy,
// -samples, -eviction-tenacity, lfu-log-factor, lfu-decay-time), and the
// arithmetic of each key's access word, as Redis 7.0 keeps its objects'
// 24-bit `lru` field (evict.c, object.c):
//
// - Under an LRU policy, or none, the word is the Unix time in seconds,
//   modulo 2^24 (194 days), when the key was last used: OBJECT IDLETIME
//   and LRU eviction read the time since.
// - Under an LFU policy it is 16 bits of the Unix time in minutes (when the
//   counter last decayed) and an 8-bit logarithmic counter, starting at 5:
//   each use increments it with a probability that falls as it grows
//   (lfu-log-factor), and it loses one per lfu-decay-time minutes unused.
//
// Switching policies at run time leaves the words as they are, and they
// are read the new way until each key is used again, as in Redis ("LRU
// and LFU data will take some time to adjust"). Shared by a dispatcher's
// databases; core loop only, like the clock.

/// Redis's maxmemory-policy: what goes when memory is over maxmemory.
enum EvictionPolicy: CaseIterable, Sendable {
    case noEviction
    case allKeysLRU, volatileLRU
    case allKeysLFU, volatileLFU
    case allKeysRandom, volatileRandom
    case volatileTTL

    /// Its name in CONFIG.
    var name: String {
        switch self {
        case .noEviction: "noeviction"
        case .allKeysLRU: "allkeys-lru"
        case .volatileLRU: "volatile-lru"
        case .allKeysLFU: "allkeys-lfu"
        case .volatileLFU: "volatile-lfu"
        case .allKeysRandom: "allkeys-random"
        case .volatileRandom: "volatile-random"
        case .volatileTTL: "volatile-ttl"
        }
    }

    /// The policy called `name` (in any case, as CONFIG SET takes it).
    init?(name: [UInt8]) {
        let lower = String(decoding: lowercased(name), as: UTF8.self)
        guard let policy = EvictionPolicy.allCases.first(where: { $0.name == lower }) else { return nil }
        self = policy
    }

    /// Any key may go, not only those with an expiry.
    var allKeys: Bool { [.allKeysLRU, .allKeysLFU, .allKeysRandom].contains(self) }
    /// Access words are frequencies.
    var usesLFU: Bool { self == .allKeysLFU || self == .volatileLFU }
    /// Redis shares the objects of small integers (0-9999) between keys
    /// unless an LRU or LFU policy needs each key's own access word.
    var sharesSmallIntegers: Bool {
        switch self {
        case .allKeysLRU, .volatileLRU, .allKeysLFU, .volatileLFU: false
        default: true
        }
    }
    /// The victim is the best of a pool of sampled keys (not a random one).
    var usesPool: Bool { ![.noEviction, .allKeysRandom, .volatileRandom].contains(self) }
}

/// The memory limit and the eviction settings, with Redis 7.0's defaults.
final class MemoryPolicy {
    /// maxmemory in bytes (0: no limit).
    var maxmemory = 0
    var policy = EvictionPolicy.noEviction

    /// `form` as a value written now gets it: Redis shares no small
    /// integer while maxmemory is set with an LRU or LFU policy.
    @inline(__always)
    func sharing(_ form: StringForm) -> StringForm {
        form == .encoded && maxmemory > 0 && !policy.sharesSmallIntegers ? .encodedUnshared : form
    }
    /// maxmemory-samples: keys sampled per database for each pick.
    var samples = 5
    /// maxmemory-eviction-tenacity (0-100): how long one command's
    /// eviction may run before the rest is left to the loop's next turns.
    var tenacity = 10
    /// lfu-log-factor and lfu-decay-time (minutes).
    var lfuLogFactor = 10
    var lfuDecayTime = 1
    /// For the LFU counter's coin (no system call, no lock: core only).
    private var random = CommandRandom()

    /// A new counter's value: a new key is not evicted before it is used.
    static let lfuInitialCount: UInt32 = 5
    /// The LRU clock's range (24 bits of seconds, as Redis's).
    static let lruClockMax: UInt32 = (1 << 24) - 1

    /// The LRU clock at `now` (Unix milliseconds).
    @inline(__always)
    static func lruClock(_ now: Int64) -> UInt32 { UInt32(truncatingIfNeeded: now / 1000) & lruClockMax }

    /// 16 bits of the Unix time in minutes at `now`.
    @inline(__always)
    static func minutes(_ now: Int64) -> UInt32 { UInt32(truncatingIfNeeded: now / 60_000) & 0xFFFF }

    /// A new key's access word at `now`.
    @inline(__always)
    func initialAccess(now: Int64) -> UInt32 {
        policy.usesLFU ? MemoryPolicy.minutes(now) << 8 | MemoryPolicy.lfuInitialCount : MemoryPolicy.lruClock(now)
    }

    /// The access word of a key used at `now` that had `access`.
    @inline(__always)
    func touched(_ access: UInt32, now: Int64) -> UInt32 {
        guard policy.usesLFU else { return MemoryPolicy.lruClock(now) }
        return MemoryPolicy.minutes(now) << 8 | incremented(frequency(access, now: now))
    }

    /// Milliseconds since a key with `access` was used (Redis's
    /// estimateObjectIdleTime: the clock wraps once at most).
    func idleMilliseconds(_ access: UInt32, now: Int64) -> Int64 {
        MemoryPolicy.idleMilliseconds(access, now: now)
    }

    /// `idleMilliseconds`, for a thread other than the core's (a snapshot's).
    static func idleMilliseconds(_ access: UInt32, now: Int64) -> Int64 {
        let clock = lruClock(now)
        let seconds = clock >= access ? clock - access : clock + (lruClockMax - access)
        return Int64(seconds) * 1000
    }

    /// The counter of a key with `access`, less one per lfu-decay-time
    /// minutes since it last decayed (Redis's LFUDecrAndReturn).
    func frequency(_ access: UInt32, now: Int64) -> UInt32 {
        MemoryPolicy.frequency(access, now: now, decayTime: lfuDecayTime)
    }

    /// `frequency` with lfu-decay-time `decayTime`, for a thread other than the core's.
    static func frequency(_ access: UInt32, now: Int64, decayTime: Int) -> UInt32 {
        let counter = access & 0xFF
        guard decayTime > 0 else { return counter }
        let last = access >> 8
        let current = minutes(now)
        let elapsed = current >= last ? current - last : 0xFFFF - last + current
        let periods = elapsed / UInt32(decayTime)
        return periods > counter ? 0 : counter - periods
    }

    /// `counter` after one use: one more with probability
    /// 1 / ((counter - 5) * lfu-log-factor + 1), saturating at 255.
    private func incremented(_ counter: UInt32) -> UInt32 {
        guard counter < 255 else { return 255 }
        let base = Double(counter > MemoryPolicy.lfuInitialCount ? counter - MemoryPolicy.lfuInitialCount : 0)
        let chance = 1.0 / (base * Double(lfuLogFactor) + 1)
        return Double(random.next() >> 11) / Double(1 << 53) < chance ? counter + 1 : counter
    }

    /// The access word RESTORE's IDLETIME (seconds) or FREQ gives a key at
    /// `now`, under the policy now (Redis's objectSetLRUOrLFU); nil when the
    /// option given does not apply to it.
    func restoredAccess(idleSeconds: Int?, frequency: Int?, now: Int64) -> UInt32? {
        if policy.usesLFU {
            guard let frequency else { return nil }
            return MemoryPolicy.minutes(now) << 8 | UInt32(frequency)
        }
        guard let idleSeconds else { return nil }
        // The clock wraps (every 194 days): an idle time past its value
        // reads back through the wrap, as Redis makes it.
        let clock = Int(MemoryPolicy.lruClock(now))
        var access = clock - idleSeconds
        if access < 0 { access += Int(MemoryPolicy.lruClockMax) }
        return UInt32(clamping: max(access, 0))
    }

    /// How long one command's eviction may run, in microseconds (Redis's
    /// evictionTimeLimitUs): 50 per step of tenacity up to 10, then 15%
    /// more per step (about 2 minutes at 99), unbounded at 100.
    var evictionTimeLimit: UInt64 {
        if tenacity <= 10 { return 50 * UInt64(tenacity) }
        if tenacity < 100 {
            var limit = 500.0
            for _ in 10..<tenacity { limit *= 1.15 }
            return UInt64(limit)
        }
        return .max
    }
}
