// Reply.swift: RESP2 reply encoding, appended straight into an output buffer.

/// Appends RESP2 replies to a byte buffer.
public struct ReplyWriter: Sendable {
    /// The encoded replies so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Reserves room for typical short replies to `expectedRequests` requests.
    public init(expectedRequests: Int) {
        bytes.reserveCapacity(expectedRequests * 16)
    }

    /// `+<text>\r\n`.
    public mutating func simple(_ text: StaticString) {
        bytes.append(UInt8(ascii: "+"))
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        crlf()
    }

    /// `+OK\r\n`.
    public mutating func ok() { simple("OK") }

    /// `-<message>\r\n`; `message` includes its prefix (`ERR ...`).
    public mutating func error(_ message: String) {
        bytes.append(UInt8(ascii: "-"))
        bytes.append(contentsOf: message.utf8)
        crlf()
    }

    /// `-<message>\r\n` from raw bytes (which may echo binary arguments);
    /// CR and LF become spaces, as Redis keeps error replies on one line.
    public mutating func error(bytes message: [UInt8]) {
        bytes.append(UInt8(ascii: "-"))
        bytes.append(contentsOf: message.map { $0 == 13 || $0 == 10 ? 32 : $0 })
        crlf()
    }

    /// `:<value>\r\n`.
    public mutating func integer(_ value: Int) {
        bytes.append(UInt8(ascii: ":"))
        decimal(value)
        crlf()
    }

    /// `$<length>\r\n<bytes>\r\n`.
    public mutating func bulk(_ value: [UInt8]) {
        bytes.append(UInt8(ascii: "$"))
        decimal(value.count)
        crlf()
        bytes.append(contentsOf: value)
        crlf()
    }

    /// A bulk reply holding `text`'s UTF-8 bytes.
    public mutating func bulk(_ text: String) {
        bulk(Array(text.utf8))
    }

    /// The null bulk reply, `$-1\r\n`.
    public mutating func null() {
        bytes.append(contentsOf: [UInt8(ascii: "$"), UInt8(ascii: "-"), UInt8(ascii: "1"), 13, 10])
    }

    /// `*<count>\r\n`; the `count` elements follow.
    public mutating func arrayHeader(_ count: Int) {
        bytes.append(UInt8(ascii: "*"))
        decimal(count)
        crlf()
    }

    private mutating func crlf() {
        bytes.append(13)
        bytes.append(10)
    }

    private mutating func decimal(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(48 + value))
            return
        }
        bytes.append(contentsOf: String(value).utf8)
    }
}
