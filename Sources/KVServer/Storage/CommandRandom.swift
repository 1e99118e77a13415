// CommandRandom.swift: the random numbers of SPOP, SRANDMEMBER, HRANDFIELD
// and ZRANDMEMBER. Swift's default generator reads the kernel's (a
// getrandom call per number): a pick of millions of elements spent
// seconds in system calls. Redis draws these from a PRNG too; wyrand,
// seeded once from the system, is a multiply and an add per number.

/// A fast pseudo-random generator (wyrand). Core loop only, like the
/// keyspace that holds it; not for anything secret.
struct CommandRandom: RandomNumberGenerator {
    private var state = UInt64.random(in: .min ... .max)

    mutating func next() -> UInt64 {
        state &+= 0xa076_1d64_78bd_642f
        let product = state.multipliedFullWidth(by: state ^ 0xe703_7ed1_a0b4_28db)
        return product.high ^ product.low
    }
}
