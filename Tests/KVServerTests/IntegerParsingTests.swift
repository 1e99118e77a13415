// IntegerParsingTests.swift: Redis's string2ll as kvd parses a value
// (INCR and friends), at the edges of its fast path (up to 18 digits,
// no overflow check per digit) and its checked path (19 and 20 digits).
import Testing

@testable import KVServer

@Suite struct IntegerParsingTests {
    private func parsed(_ text: String) -> Int? { parseInteger(Array(text.utf8)) }

    @Test func eighteenDigitsAndFewerParseWithoutAChecksEveryDigitIsADigit() {
        #expect(parsed("999999999999999999") == 999_999_999_999_999_999)
        #expect(parsed("-999999999999999999") == -999_999_999_999_999_999)
        #expect(parsed("123456") == 123_456)
        #expect(parsed("7") == 7 && parsed("0") == 0)
        for bad in ["12a4", "1 2", "12:", "1/", "-", "", "+1", "01", "-0", " 1", "1 "] {
            #expect(parsed(bad) == nil, "\(bad)")
        }
    }

    @Test func nineteenAndTwentyDigitsStopAtTheLimitsOfAnInt() {
        #expect(parsed("9223372036854775807") == Int.max)
        #expect(parsed("-9223372036854775808") == Int.min)
        #expect(parsed("9223372036854775808") == nil)
        #expect(parsed("-9223372036854775809") == nil)
        #expect(parsed("1000000000000000000") == 1_000_000_000_000_000_000)
        #expect(parsed("99999999999999999999") == nil)
        #expect(parsed("184467440737095516150") == nil)
    }
}
