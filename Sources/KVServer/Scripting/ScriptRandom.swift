// ScriptRandom.swift: the generator behind a script's math.random, Redis's
// redisLrand48 (rand.c): the same 48-bit sequence on every machine, so a
// script that seeds it with math.randomseed gets Redis's numbers.

/// rand48 as Redis implements it; one per script engine, never reseeded
/// between scripts (as in Redis 7.0).
struct ScriptRandom {
    private var state: UInt64 = 0x1234_ABCD_330E
    static let max: Int32 = Int32.max

    /// The next number in [0, 2^31).
    mutating func next() -> Int32 {
        state = (0x5_DEEC_E66D &* state &+ 0xB) & 0xFFFF_FFFF_FFFF
        return Int32(truncatingIfNeeded: state >> 17)
    }

    /// Restarts the sequence from `seed` (math.randomseed).
    mutating func seed(_ seed: Int32) {
        let value = UInt32(bitPattern: seed)
        state = UInt64(value >> 16) << 32 | UInt64(value & 0xFFFF) << 16 | 0x330E
    }
}
