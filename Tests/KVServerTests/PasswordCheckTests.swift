// PasswordCheckTests.swift: AUTH's comparison is exact (equal bytes and
// equal length, nothing else), and it reads every byte the client sent,
// whatever it sent and wherever it first differs: counted, so that a
// comparison that returns early fails here.
import Testing

@testable import KVServer

@Suite struct PasswordCheckTests {
    @Test func onlyTheExactPasswordMatches() {
        let secret = Array("s3cret".utf8)
        #expect(PasswordCheck.matches(Array("s3cret".utf8), secret))
        for wrong in ["", "s", "s3cre", "s3cret!", "S3cret", "s3creT", "s3crets3cret", "x3cret", "\u{0}3cret"] {
            #expect(!PasswordCheck.matches(Array(wrong.utf8), secret), "'\(wrong)' matched")
        }
    }

    @Test func anEmptyPasswordMatchesOnlyAnEmptyOne() {
        #expect(PasswordCheck.matches([], []))
        #expect(!PasswordCheck.matches([0], []))
        #expect(!PasswordCheck.matches([], [0]))
    }

    // A given password that repeats the expected one (which the cycled
    // comparison meets byte for byte) still differs by its length.
    @Test func aRepetitionOfThePasswordDoesNotMatch() {
        let secret = Array("ab".utf8)
        #expect(!PasswordCheck.matches(Array("abab".utf8), secret))
        #expect(!PasswordCheck.matches(Array("a".utf8), secret))
    }

    // The work does not depend on where the first difference is: as many
    // reads of both sides for a wrong first byte, a wrong last byte, a
    // shorter or longer password, and the right one.
    @Test func everyByteTheClientSentIsComparedWhereverTheyDiffer() {
        let secret = Array("correct horse battery".utf8)
        var readsPerLength: [Int: Set<Int>] = [:]
        let tries = [
            "Xorrect horse battery", "correct horse batterX", "correct horse battery", "c", "correct horse battery!",
        ]
        for given in tries {
            let counted = CountingBytes(Array(given.utf8))
            let expected = CountingBytes(secret)
            _ = PasswordCheck.matches(counted, expected)
            #expect(counted.reads.value == given.utf8.count, "'\(given)': \(counted.reads.value) of its bytes read")
            #expect(expected.reads.value == given.utf8.count, "'\(given)': \(expected.reads.value) password bytes read")
            readsPerLength[given.utf8.count, default: []].insert(counted.reads.value + expected.reads.value)
        }
        #expect(readsPerLength.values.allSatisfy { $0.count == 1 })
    }
}

/// Bytes that count how many times an element is read.
private struct CountingBytes: RandomAccessCollection {
    final class Counter { var value = 0 }
    let bytes: [UInt8]
    let reads = Counter()
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var startIndex: Int { 0 }
    var endIndex: Int { bytes.count }
    subscript(position: Int) -> UInt8 {
        reads.value += 1
        return bytes[position]
    }
}
