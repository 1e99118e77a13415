// PasswordCheck.swift: comparing a given password with the configured one
// in a time that does not depend on where they first differ. A comparison
// that returns at the first differing byte (`==` on arrays) lets a client
// on the network learn the password a byte at a time from reply latencies;
// Redis compares in constant time for the same reason.

enum PasswordCheck {
    /// True when `given` equals `expected`. The work depends only on
    /// `given`'s length (the client's own): every byte of it is read and
    /// compared, against `expected` cycled, and the lengths' difference is
    /// folded in, so neither the position of the first difference nor
    /// `expected`'s contents change the time taken. (Generic so that a test
    /// can count the reads.)
    static func matches<Given: RandomAccessCollection<UInt8>, Expected: RandomAccessCollection<UInt8>>(
        _ given: Given, _ expected: Expected
    ) -> Bool where Given.Index == Int, Expected.Index == Int {
        var difference = UInt(bitPattern: given.count ^ expected.count)
        guard !expected.isEmpty else { return given.isEmpty }
        for index in 0..<given.count {
            difference |= UInt(given[given.startIndex + index] ^ expected[expected.startIndex + index % expected.count])
        }
        return difference == 0
    }
}
