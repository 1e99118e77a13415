// PasswordCheck.swift: comparing a given password with the configured one
// in a time that does not depend on where they first differ. A comparison
// that returns at the first differing byte (`==` on arrays) lets a client
// on the network learn the password a byte at a time from reply latencies;
// Redis compares in constant time for the same reason.

enum PasswordCheck {
    /// True when `given` equals `expected`. The work depends only on
    /// `given`'s length (the client's own): every byte is compared, against
    /// `expected` cycled, and the lengths' difference is folded in, so
    /// neither the position of the first difference nor `expected`'s
    /// contents change the time taken.
    static func matches(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt(bitPattern: given.count ^ expected.count)
        guard !expected.isEmpty else { return given.isEmpty }
        for index in given.indices {
            difference |= UInt(given[index] ^ expected[index % expected.count])
        }
        return difference == 0
    }
}
