// PasswordCheckTests.swift: AUTH's comparison is exact (equal bytes and
// equal length, nothing else) and looks at every byte the client sent,
// whatever it sent: the constant-time property is in the code's shape,
// and this pins the answers it must give.
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
}
