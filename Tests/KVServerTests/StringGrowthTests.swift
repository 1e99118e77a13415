// StringGrowthTests.swift: SETBIT, SETRANGE and BITFIELD past a string's
// end grow it with zeros and keep its bytes, for a growth past double the
// size (a zeroed buffer and a copy) and one below (zeros copied into grown
// capacity), small and large, on a new key and an existing one.
import Testing

@testable import KVServer

@Suite struct StringGrowthTests {
    @Test(arguments: [10, 100_000]) func growingPastTheEndKeepsTheBytesAndZeroFills(gap: Int) {
        let dispatcher = connected()
        func expectGrown(_ key: String, length: Int, last: UInt8) {
            let reply = run(dispatcher, "GET", key)
            let header = "$\(length)\r\n"
            #expect(reply.hasPrefix(header), "\(key): \(reply.prefix(20))")
            let value = Array(reply.utf8.dropFirst(header.utf8.count).dropLast(2))
            #expect(value.count == length)
            #expect(value.prefix(3) == [97, 98, 99], "\(key) lost its bytes")
            #expect(value.dropFirst(3).dropLast().allSatisfy { $0 == 0 }, "\(key) is not zero-filled")
            #expect(value.last == last)
        }
        for key in ["r", "b", "f"] { run(dispatcher, "SET", key, "abc") }
        #expect(run(dispatcher, "SETRANGE", "r", "\(3 + gap)", "x") == ":\(4 + gap)\r\n")
        expectGrown("r", length: 4 + gap, last: UInt8(ascii: "x"))
        #expect(run(dispatcher, "SETBIT", "b", "\((3 + gap) * 8 + 7)", "1") == ":0\r\n")
        expectGrown("b", length: 4 + gap, last: 1)
        #expect(run(dispatcher, "BITFIELD", "f", "SET", "u8", "\((3 + gap) * 8)", "127") == "*1\r\n:0\r\n")
        expectGrown("f", length: 4 + gap, last: 127)
        #expect(run(dispatcher, "SETBIT", "new", "\(gap * 8)", "1") == ":0\r\n")
        #expect(run(dispatcher, "STRLEN", "new") == ":\(gap + 1)\r\n")
        // A growth of less than double: zeros copied into grown capacity.
        let half = (4 + gap) / 2
        #expect(run(dispatcher, "SETRANGE", "r", "\(4 + gap + half - 1)", "x") == ":\(4 + gap + half)\r\n")
        let grown = run(dispatcher, "GETRANGE", "r", "\(3 + gap)", "-1")
        #expect(grown == "$\(half + 1)\r\nx" + String(repeating: "\0", count: half - 1) + "x\r\n")
        // A new key grows from an empty value.
        #expect(run(dispatcher, "SETRANGE", "fresh", "\(gap)", "x") == ":\(gap + 1)\r\n")
        #expect(run(dispatcher, "BITFIELD", "fresh2", "SET", "u8", "\(gap * 8)", "1") == "*1\r\n:0\r\n")
        #expect(run(dispatcher, "STRLEN", "fresh2") == ":\(gap + 1)\r\n")
    }
}
