// StringFormTests.swift: a string's form (how Redis would hold it, for
// OBJECT ENCODING) costs no room in a key's entry, and names the encodings
// Redis names. (What each command leaves is in the golden tests.)
import Testing

@testable import KVServer

@Suite struct StringFormTests {
    /// The entry's fields without the form, in the same order.
    private struct EntryWithoutForm {
        var value: [UInt8]
        var collection: Collection?
        var expiresAt: Int64?
        var access: UInt32
        var expiryIndex: Int
        var slot: Int
    }

    @Test func theFormSitsInPaddingAnEntryAlreadyHad() {
        #expect(MemoryLayout<Keyspace.Entry>.stride == MemoryLayout<EntryWithoutForm>.stride)
        #expect(MemoryLayout<Keyspace.Entry>.size == MemoryLayout<EntryWithoutForm>.size)
    }

    @Test func eachFormNamesRedissEncoding() {
        let integer = Array("12345".utf8)
        let short = Array("hello".utf8)
        let long = [UInt8](repeating: 0x61, count: 45)
        #expect([integer, short, long].map { StringForm.encoded.encoding(of: $0) } == ["int", "embstr", "raw"])
        #expect([integer, short, long].map { StringForm.raw.encoding(of: $0) } == ["raw", "raw", "raw"])
        #expect([integer, short, long].map { StringForm.text.encoding(of: $0) } == ["embstr", "embstr", "raw"])
        // 44 bytes is still embstr, as Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
        #expect(StringForm.encoded.encoding(of: Array(long.dropLast())) == "embstr")
    }
}
