// Reply.swift: reply encoding, RESP2 or RESP3 (whichever the connection
// chose with HELLO), appended straight into an output buffer. Each RESP3
// type falls back to what Redis 7 sends a RESP2 client for it: a map is a
// flat array, a double a bulk string, a verbatim string a plain bulk.
// A large bulk value is not copied: the stored array itself becomes a chunk
// of the output, and the I/O loop writes it from there. So a GET of a
// 500 MB value costs the core a reference count, not a 500 MB copy.

/// Replies ready to be written, in order: chunks of bytes, the large values
/// among them shared with the keyspace rather than copied.
public struct Replies: Sendable {
    /// The chunks before `last`, in order: empty unless a large value was
    /// referenced (so a batch of short replies allocates no array for them).
    public var sealed: [[UInt8]]
    /// The last chunk: the writer's buffer, which the connection gets back
    /// to write the next batch's replies into once it is sent.
    public var last: [UInt8]
    /// Their total size.
    public var byteCount: Int
    /// The client is in MULTI after them (a connection needs it for the
    /// answers its own thread gives while a script is busy).
    public var inTransaction = false
    /// A reply stopped at the output limit (`ReplyWriter.stoppedAtLimit`):
    /// the connection closes the client over its limit, as Redis does,
    /// whatever the bytes written so far add up to.
    public var passedLimit = false

    /// Every chunk, in order.
    public var chunks: [[UInt8]] { sealed + [last] }
}

/// Appends replies to a byte buffer, in the connection's protocol.
public struct ReplyWriter: Sendable {
    /// True when the connection speaks RESP3 (it sent `HELLO 3`).
    public var resp3 = false
    /// The encoded replies since the last chunk that was sealed.
    private var bytes: [UInt8] = []
    /// Earlier chunks, in order.
    private var sealed: [[UInt8]] = []
    private var sealedBytes = 0
    /// How many error replies were written (INFO's error figures: the
    /// dispatcher compares it before and after each command).
    private(set) var errorCount = 0
    /// Each error reply's code (its first word), until the dispatcher takes
    /// them for INFO errorstats; empty unless an error was written.
    var errorCodes: [[UInt8]] = []
    /// Bulk values at least this large are referenced, not copied.
    static let referenceThreshold = 64 * 1024
    /// The client's output buffer limit: a command whose reply grows with a
    /// collection or a count (LRANGE, SMEMBERS, HGETALL, a repeated random
    /// pick) stops writing past it, as Redis stops at its limit, since the
    /// connection closes a client whose replies pass it.
    public var limit = Int.max

    /// True once a reply stopped short at `limit` (`passedLimit(at:)`
    /// answered true): what was written is not a whole reply.
    public private(set) var stoppedAtLimit = false

    /// True when the replies written pass `limit`, checked at every 1024th
    /// `index` only: what a loop over a huge collection asks, cheaply,
    /// before it writes element `index`. The loop stops writing then.
    public mutating func passedLimit(at index: Int) -> Bool {
        guard index & 1023 == 1023 && byteCount > limit else { return false }
        stoppedAtLimit = true
        return true
    }

    /// True when `count` more replies of at least `each` bytes cannot fit
    /// under `limit`: the command writes none of them and stops at the
    /// limit at once, rather than spend seconds of the core drawing
    /// hundreds of millions of picks for a client that will be closed.
    public mutating func cannotFit(_ count: Int, each: Int) -> Bool {
        let (needed, overflow) = count.multipliedReportingOverflow(by: each)
        guard overflow || needed > limit - byteCount else { return false }
        stoppedAtLimit = true
        return true
    }

    /// An empty writer.
    public init() {}

    /// A writer that takes `buffer` (leaving it empty) and writes into it
    /// from the start, its capacity kept: the connection's buffer from the
    /// batch before, once it was sent. Taken, not copied, so it stays
    /// uniquely referenced and emptying it allocates nothing.
    public init(reusing buffer: inout [UInt8]) {
        swap(&bytes, &buffer)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Bytes written so far.
    public var byteCount: Int { sealedBytes + bytes.count }

    /// Everything written, as chunks; the writer is empty afterwards.
    public mutating func finish() -> Replies {
        var replies = Replies(sealed: sealed, last: bytes, byteCount: byteCount)
        replies.passedLimit = stoppedAtLimit
        sealed = []
        sealedBytes = 0
        bytes = []
        stoppedAtLimit = false
        return replies
    }

    /// Counts the errors `silenced` wrote as this writer's own: a reply
    /// CLIENT REPLY OFF or SKIP drops is still an error in INFO's figures,
    /// as in Redis.
    mutating func countErrors(of silenced: ReplyWriter) {
        errorCount += silenced.errorCount
        errorCodes += silenced.errorCodes
    }

    /// Appends `encoded`, already in RESP: a script's reply types (booleans,
    /// doubles, big numbers) that no command of kvd's sends yet.
    mutating func raw(_ encoded: [UInt8]) {
        bytes.append(contentsOf: encoded)
    }

    /// `+<text>\r\n`.
    public mutating func simple(_ text: StaticString) {
        bytes.append(UInt8(ascii: "+"))
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        crlf()
    }

    /// `+<text>\r\n` from a String with no CR or LF (help lines).
    public mutating func status(_ text: String) {
        bytes.append(UInt8(ascii: "+"))
        bytes.append(contentsOf: text.utf8)
        crlf()
    }

    /// `+OK\r\n`.
    public mutating func ok() { simple("OK") }

    /// `-<message>\r\n`; `message` includes its prefix (`ERR ...`).
    public mutating func error(_ message: String) {
        bytes.append(UInt8(ascii: "-"))
        bytes.append(contentsOf: message.utf8)
        crlf()
        noteError(message.utf8)
    }

    /// `-<message>\r\n` from raw bytes (which may echo binary arguments);
    /// CR and LF become spaces, as Redis keeps error replies on one line.
    public mutating func error(bytes message: [UInt8]) {
        error(bytes: message, countedInErrorStats: true)
    }

    /// What C's `%s` prints of an argument: its bytes up to the first NUL.
    /// Redis quotes arguments in its errors with `%s`, so a NUL ends the
    /// quote (`CONFIG SET "a\0b" 1` names 'a'). Scans the whole of
    /// `argument`: bound it first where Redis bounds it (`%.128s`).
    static func quoted<Bytes: Swift.Collection<UInt8>>(_ argument: Bytes) -> Bytes.SubSequence {
        argument.prefix { $0 != 0 }
    }

    /// An error reply; one that `countedInErrorStats` is false for fails
    /// its command (failed_calls) but is not counted again in INFO
    /// errorstats: a script's error that a command it called has counted
    /// already (Redis's `ignore_error_stats_update`).
    mutating func error(bytes message: [UInt8], countedInErrorStats: Bool) {
        bytes.append(UInt8(ascii: "-"))
        bytes.append(contentsOf: message.map { $0 == 13 || $0 == 10 ? 32 : $0 })
        crlf()
        if countedInErrorStats { noteError(message) } else { errorCount += 1 }
    }

    /// Counts an error reply and keeps its code (up to the first space).
    private mutating func noteError(_ message: some Swift.Collection<UInt8>) {
        errorCount += 1
        errorCodes.append(Array(message.prefix { $0 != UInt8(ascii: " ") }))
    }

    /// `:<value>\r\n`.
    public mutating func integer(_ value: Int) {
        // `:`, the digits and CRLF made on the stack and appended at once:
        // one append, not one per byte and one for the digits.
        var line: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // room for ":", 20 characters, CRLF
        withUnsafeMutableBytes(of: &line) { room in
            room[room.count - 2] = 13
            room[room.count - 1] = 10
            let first = writeDecimal(value, endingAt: room.count - 2, in: room) - 1
            room[first] = UInt8(ascii: ":")
            bytes.append(bytes: UnsafeRawBufferPointer(rebasing: room[first...]))
        }
    }

    /// `$<length>\r\n<bytes>\r\n`.
    public mutating func bulk(_ value: [UInt8]) {
        if value.count >= ReplyWriter.referenceThreshold {
            bytes.append(UInt8(ascii: "$"))
            decimal(value.count)
            crlf()
            sealed.append(bytes)
            sealed.append(value)
            sealedBytes += bytes.count + value.count
            bytes = []
            crlf()
        } else {
            value.withUnsafeBytes { bulk($0) }
        }
    }

    /// `$<length>\r\n<bytes>\r\n`, copied from `value`.
    mutating func bulk(_ value: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "$"))
        decimal(value.count)
        crlf()
        bytes.append(bytes: value)
        crlf()
    }

    /// A bulk reply holding `text`'s UTF-8 bytes.
    public mutating func bulk(_ text: String) {
        bulk(Array(text.utf8))
    }

    /// The null reply: `$-1\r\n` (RESP2's null bulk), `_\r\n` in RESP3.
    public mutating func null() {
        if resp3 {
            line("_")
        } else {
            line("$-1")
        }
    }

    /// The null array (an aborted EXEC): `*-1\r\n`, `_\r\n` in RESP3.
    public mutating func nullArray() {
        if resp3 {
            line("_")
        } else {
            line("*-1")
        }
    }

    /// A map of `count` pairs (key, value, key, value follow): `%<count>`,
    /// a flat array of `2 * count` in RESP2.
    public mutating func mapHeader(_ count: Int) {
        bytes.append(UInt8(ascii: resp3 ? "%" : "*"))
        decimal(resp3 ? count : 2 * count)
        crlf()
    }

    /// A set of `count` elements: `~<count>`, an array in RESP2.
    public mutating func setHeader(_ count: Int) {
        bytes.append(UInt8(ascii: resp3 ? "~" : "*"))
        decimal(count)
        crlf()
    }

    /// A double written as `text` (a sorted set's score, formatted by its
    /// command): `,<text>` in RESP3, a bulk string in RESP2.
    mutating func double(text: UnsafeRawBufferPointer) {
        guard resp3 else { return bulk(text) }
        bytes.append(UInt8(ascii: ","))
        bytes.append(bytes: text)
        crlf()
    }

    /// A verbatim text (INFO, CLIENT LIST): `=<length>\r\ntxt:<text>` in
    /// RESP3, a bulk string in RESP2.
    public mutating func verbatim(_ text: String) {
        guard resp3 else { return bulk(text) }
        let utf8 = Array(text.utf8)
        bytes.append(UInt8(ascii: "="))
        decimal(utf8.count + 4)
        crlf()
        bytes.append(contentsOf: Array("txt:".utf8))
        bytes.append(contentsOf: utf8)
        crlf()
    }

    /// An out-of-band push of `count` elements (pub/sub's messages and
    /// subscription notices): `><count>` in RESP3, an array in RESP2.
    public mutating func pushHeader(_ count: Int) {
        bytes.append(UInt8(ascii: resp3 ? ">" : "*"))
        decimal(count)
        crlf()
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

    /// `text` and CRLF, with no array in between.
    private mutating func line(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        crlf()
    }

    private mutating func decimal(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(48 + value))
            return
        }
        appendDecimal(value, to: &bytes)
    }
}

/// Appends `value` in decimal ASCII to `bytes`, with no String in between.
func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
    withDecimal(value) { bytes.append(bytes: $0) }
}

/// Calls `body` with `value` in decimal ASCII, on the stack.
@inline(__always)
func withDecimal<R>(_ value: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 characters
    return withUnsafeMutableBytes(of: &digits) { room in
        let first = writeDecimal(value, endingAt: room.count, in: room)
        return body(UnsafeRawBufferPointer(rebasing: room[first...]))
    }
}

/// Writes `value` in decimal ASCII into `room`, ending just before `end`
/// (which leaves room for its 20 digits and sign); returns where it starts.
@inline(__always)
func writeDecimal(_ value: Int, endingAt end: Int, in room: UnsafeMutableRawBufferPointer) -> Int {
    var magnitude = value.magnitude
    // Two digits per division, from a table of "00" to "99": a counter or
    // a length is written with half the divisions.
    let pairs = decimalDigitPairs.utf8Start
    var index = end
    while magnitude >= 100 {
        let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
        magnitude /= 100
        index -= 2
        room[index] = pairs[pair]
        room[index + 1] = pairs[pair + 1]
    }
    if magnitude >= 10 {
        let pair = Int(truncatingIfNeeded: magnitude) &* 2
        index -= 2
        room[index] = pairs[pair]
        room[index + 1] = pairs[pair + 1]
    } else {
        index -= 1
        room[index] = UInt8(truncatingIfNeeded: magnitude) + 48
    }
    if value < 0 {
        index -= 1
        room[index] = UInt8(ascii: "-")
    }
    return index
}

/// "00" to "99", for `appendDecimal`.
private let decimalDigitPairs: StaticString =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
