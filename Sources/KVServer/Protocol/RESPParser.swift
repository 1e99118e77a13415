// RESPParser.swift: incremental RESP2 request parser (multibulk and inline).
//
// It never trusts a length it has not checked against a limit, and never
// allocates what a client merely announced: a bulk is copied out only once
// all of its bytes have arrived. Errors carry Redis's own wording; the
// connection answers `-ERR Protocol error: <message>` and closes.
import Glibc

/// Limits on what one request may announce.
public struct RESPLimits: Sendable {
    /// Largest bulk argument (Redis's proto-max-bulk-len default: 512 MiB).
    public var maxBulk: Int = 512 * 1024 * 1024
    /// Most arguments in one multibulk request (Redis 7.0: `INT_MAX`; what
    /// a client may send in all is bounded by `maxQueryBuffer`).
    public var maxArguments: Int = Int(Int32.max)
    /// Most bytes a client may have sent that are not yet taken as
    /// requests (Redis's `client-query-buffer-limit`, 1 GiB): a client past
    /// it is disconnected, as Redis disconnects it.
    public var maxQueryBuffer: Int = 1024 * 1024 * 1024
    /// Longest inline request, and longest count line (Redis: 64 KiB).
    public var maxInline: Int = 64 * 1024
    /// A bulk at least this large that ends its request and is still
    /// arriving is read into an array of its own (see `RESPParser`).
    public var largeBulk: Int = 1024 * 1024

    /// Redis's defaults.
    public init() {}
}

/// Turns the bytes a client sends into requests, incrementally: append what
/// each read returned, then take requests with `next()` until `.incomplete`.
public struct RESPParser {
    /// What `next()` found.
    public enum Outcome: Equatable {
        /// A complete request: its arguments (the command name first).
        case request([[UInt8]])
        /// More bytes are needed.
        case incomplete
        /// The stream is malformed; the message is Redis's wording.
        case protocolError(String)
    }

    /// The limits every announced length is checked against.
    public var limits: RESPLimits
    /// Bytes received and not yet consumed start at `start`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// How far the checks of the incomplete multibulk request at `start`
    /// got: a request that arrives over many reads has each header checked
    /// once, not once per read (which a client could turn into quadratic
    /// work with a million small arguments).
    private var progress: (requestStart: Int, checked: Int, position: Int)?
    /// A request whose last argument is a large bulk still arriving: the
    /// arguments before it, and the bulk's bytes so far (then its CRLF), in
    /// an array of exactly its size. Appended bytes go there first, so the
    /// bulk is read once into what becomes the stored value (Redis reads a
    /// big argument straight into its object too): no copy when it ends.
    private var largeBulk: (arguments: [[UInt8]], length: Int)?
    /// The large bulk's bytes and CRLF: a field of its own, so that filling
    /// it mutates it in place (through an optional tuple, each append copied
    /// all of it). It has its full size from the start; the first
    /// `largeBulkFilled` bytes have arrived, the rest is not initialized.
    private var largeBulkData: [UInt8] = []
    private var largeBulkFilled = 0

    /// A buffer above this capacity is not kept once it is consumed, and a
    /// bulk this large has its room reserved when its header arrives.
    static let largeBuffer = 1024 * 1024

    /// Once everything buffered has been parsed, a buffer grown past
    /// `largeBuffer` (by a large request) is let go rather than kept, that
    /// size, for a connection that may stay idle.
    private mutating func releaseLargeBufferIfConsumed() {
        guard start == buffer.count, buffer.capacity > RESPParser.largeBuffer else { return }
        buffer = []
        start = 0
        progress = nil
    }

    /// A parser with an empty buffer.
    public init(limits: RESPLimits = RESPLimits()) {
        self.limits = limits
    }

    /// True while a large last argument streams in (see `largeBulk`).
    public var isReadingLargeBulk: Bool { largeBulk != nil }

    /// Bytes received but not yet parsed into requests.
    public var bufferedCount: Int { buffer.count - start + largeBulkFilled }

    /// Adds bytes received from the client (copied).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var bytes = bytes
        if largeBulk != nil {
            let taken = min(bytes.count, largeBulkData.count - largeBulkFilled)
            largeBulkData.withUnsafeMutableBytes { data in
                data.baseAddress!.advanced(by: largeBulkFilled).copyMemory(from: bytes.baseAddress!, byteCount: taken)
            }
            largeBulkFilled += taken
            bytes = UnsafeRawBufferPointer(rebasing: bytes[taken...])
            if bytes.isEmpty { return }
        }
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            if let checked = progress {
                progress = (checked.requestStart - start, checked.checked, checked.position - start)
            }
            start = 0
        }
        buffer.append(bytes: bytes)
    }

    /// While a large bulk streams in, receives its next bytes with
    /// `receive` straight into its array (as Redis reads a big argument
    /// into its object): given the room left, at most `most` bytes,
    /// `receive` returns what `read(2)` would. Nil, and `receive` is not
    /// called, when no large bulk is arriving.
    public mutating func receiveLargeBulk(
        atMost most: Int, _ receive: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Int? {
        guard largeBulk != nil, largeBulkFilled < largeBulkData.count else { return nil }
        let room = min(most, largeBulkData.count - largeBulkFilled)
        let filled = largeBulkFilled
        let count = largeBulkData.withUnsafeMutableBytes { data in
            receive(UnsafeMutableRawBufferPointer(rebasing: data[filled..<(filled + room)]))
        }
        if count > 0 { largeBulkFilled += count }
        return count
    }

    /// Adds bytes received from the client.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// What `nextRequest(into:)` did.
    public enum Step: Equatable {
        /// A complete request was appended.
        case appended
        /// More bytes are needed; nothing was appended.
        case incomplete
        /// The stream is malformed; the message is Redis's wording.
        case protocolError(String)
    }

    /// The next complete request, if the buffer holds one.
    public mutating func next() -> Outcome {
        var batch = RequestBatch()
        switch nextRequest(into: &batch) {
        case .appended:
            var arguments: [[UInt8]] = []
            batch.forEach { request in
                arguments = Array(request)
                return false
            }
            return .request(arguments)
        case .incomplete: return .incomplete
        case .protocolError(let message): return .protocolError(message)
        }
    }

    /// Appends the next complete request to `batch`: a whole batch of
    /// requests shares three arrays. Its arguments are copied once, straight
    /// from this buffer into the batch's; with `sharing`, they are not
    /// copied at all: the batch shares this buffer and points into it. Then
    /// the batch must be emptied (`removeAll`) before bytes are appended
    /// here again, or the append copies this whole buffer.
    public mutating func nextRequest(into batch: inout RequestBatch, sharing: Bool = false) -> Step {
        if let large = largeBulk {
            guard largeBulkFilled == large.length + 2 else { return .incomplete }
            largeBulk = nil
            largeBulkFilled = 0
            var data: [UInt8] = []
            swap(&data, &largeBulkData)  // taken, not copied: trimming it below copies nothing
            data.removeLast(2)  // its CRLF
            for argument in large.arguments { batch.appendArgument(argument) }
            batch.appendOwnedArgument(data)
            batch.endRequest()
            return .appended
        }
        while start < buffer.count {
            let step =
                buffer[start] == UInt8(ascii: "*")
                ? parseMultibulk(into: &batch, sharing: sharing) : parseInline(into: &batch)
            if step == .appended {
                // An empty request (`*0`, a blank line) is skipped, as Redis does.
                guard batch.openArguments > 0 else { continue }
                batch.endRequest()
            }
            return step
        }
        return .incomplete
    }

    /// The index of the `\r\n` (or `\n`) that ends the line starting at
    /// `from`, if present within the inline limit (a longer line is refused
    /// anyway, so the scan never runs further).
    private func lineEnd(from: Int) -> Int? {
        let stop = Swift.min(buffer.count, from + limits.maxInline + 1)
        guard from < stop else { return nil }
        return buffer.withUnsafeBytes { bytes in
            memchr(bytes.baseAddress! + from, Int32(UInt8(ascii: "\n")), stop - from).map {
                UnsafeRawPointer($0) - bytes.baseAddress!
            }
        }
    }

    /// A decimal integer in `buffer[from..<to]` (an optional `-`, then digits), or nil.
    private func integer(from: Int, to: Int) -> Int? {
        buffer.withUnsafeBytes { buffer in
            var end = to
            if end > from && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            guard end > from, end - from <= 20 else { return nil }
            var index = from
            let negative = buffer[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < end else { return nil }
            var value = 0
            if end - index <= 18 {
                // Up to 18 digits cannot overflow: no check per digit.
                while index < end {
                    let digit = buffer[index] &- 48
                    guard digit <= 9 else { return nil }
                    value = value &* 10 &+ Int(digit)
                    index &+= 1
                }
                return negative ? -value : value
            }
            while index < end {
                let digit = Int(buffer[index]) - 48
                guard digit >= 0 && digit <= 9 else { return nil }
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(digit)
                guard !o1 && !o2 else { return nil }
                value = sum
                index += 1
            }
            return negative ? -value : value
        }
    }

    private mutating func parseMultibulk(into batch: inout RequestBatch, sharing: Bool) -> Step {
        if parseCanonicalMultibulk(into: &batch, sharing: sharing) { return .appended }
        // Line limits apply whether or not the newline has arrived yet, so
        // the outcome never depends on how the bytes were split into reads
        // (a fuzzer found that it did).
        guard let countEnd = lineEnd(from: start), countEnd - start <= limits.maxInline else {
            return buffer.count - start > limits.maxInline ? .protocolError("too big mbulk count string") : .incomplete
        }
        guard let count = integer(from: start + 1, to: countEnd), count <= limits.maxArguments else {
            return .protocolError("invalid multibulk length")
        }
        var position = countEnd + 1
        guard count > 0 else {
            start = position
            return .appended
        }
        // First pass: check every header and that all bytes are here, without
        // copying or allocating, resuming where an earlier read stopped; the
        // second pass copies the arguments out.
        let firstArgument = position
        var checked = 0
        if let earlier = progress, earlier.requestStart == start {
            (checked, position) = (earlier.checked, earlier.position)
        }
        while checked < count {
            guard position < buffer.count else {
                progress = (start, checked, position)
                return .incomplete
            }
            guard buffer[position] == UInt8(ascii: "$") else {
                return .protocolError("expected '$', got '\(Character(Unicode.Scalar(buffer[position])))'")
            }
            guard let lengthEnd = lineEnd(from: position), lengthEnd - position <= limits.maxInline else {
                if buffer.count - position > limits.maxInline { return .protocolError("too big bulk count string") }
                progress = (start, checked, position)
                return .incomplete
            }
            guard let length = integer(from: position + 1, to: lengthEnd), length >= 0, length <= limits.maxBulk else {
                return .protocolError("invalid bulk length")
            }
            let dataStart = lengthEnd + 1
            guard buffer.count - dataStart >= length + 2 else {
                if length >= limits.largeBulk && checked == count - 1 {
                    takeLargeBulk(from: firstArgument, arguments: checked, data: dataStart, length: length)
                    return .incomplete
                }
                progress = (start, checked, position)
                if length >= RESPParser.largeBuffer && buffer.capacity < dataStart + length + 2 {
                    // Room for the whole bulk at once: growing by doubling
                    // while hundreds of megabytes stream in would copy them
                    // again and again on the I/O loop.
                    buffer.reserveCapacity(dataStart + length + 2)
                }
                return .incomplete
            }
            position = dataStart + length + 2
            checked += 1
        }
        progress = nil
        start = position
        position = firstArgument
        // Shared only once a request is complete: an empty batch holding the
        // buffer while a large request streams in would make every append
        // copy the whole buffer.
        if sharing && batch.count == 0 && batch.openArguments == 0 && !batch.sharesBytes { batch.share(buffer) }
        let shared = sharing && batch.sharesBytes
        buffer.withUnsafeBytes { buffer in
            for _ in 0..<count {
                // The headers were checked above: a length's digits end at
                // its CR, and the bytes are all here.
                var length = 0
                position += 1  // the "$"
                if buffer[position] == UInt8(ascii: "-") { position += 1 }  // "-0", the only sign that passed
                while buffer[position] != UInt8(ascii: "\r") && buffer[position] != UInt8(ascii: "\n") {
                    length = length * 10 + Int(buffer[position] &- 48)
                    position += 1
                }
                position += buffer[position] == UInt8(ascii: "\r") ? 2 : 1
                if shared {
                    batch.appendSpan(start: position, count: length)
                } else {
                    batch.appendArgument(UnsafeRawBufferPointer(rebasing: buffer[position..<(position + length)]))
                }
                position += length + 2
            }
        }
        releaseLargeBufferIfConsumed()
        return .appended
    }

    /// Most arguments `parseCanonicalMultibulk` takes (an MSET of 10 keys has 21).
    private static let canonicalMostArguments = 32

    /// The common request at `start`, all of it buffered: `*N\r\n`, then N
    /// times `$L\r\n`, L bytes and two more, with N and every L plain
    /// digits, read in one pass over the bytes with no call per line (the
    /// general path below reads every header twice, through `memchr` and
    /// `integer`: about a fifth of a pipelined GET). Anything else, a sign,
    /// a bare `\n`, a length past the limits or as large as a large bulk,
    /// bytes still to come, more than `canonicalMostArguments` arguments,
    /// returns false with nothing changed, and the general path decides as
    /// it always did: every outcome, and every error's wording, is its own.
    private mutating func parseCanonicalMultibulk(into batch: inout RequestBatch, sharing: Bool) -> Bool {
        let requestStart = start
        let most = Swift.min(limits.maxArguments, RESPParser.canonicalMostArguments)
        // Shorter than a large bulk (which the general path may stream):
        // with `largeBulk` 0 or less, no request takes this path.
        let longest = limits.largeBulk > 0 ? Swift.min(limits.maxBulk, limits.largeBulk - 1) : -1
        let longestLine = limits.maxInline
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * RESPParser.canonicalMostArguments) {
            spans -> Bool in
            let found: (count: Int, end: Int)? = buffer.withUnsafeBytes { bytes in
                let end = bytes.count
                // Digits up to a CRLF, the line no longer than the general
                // path allows: the value, and `position` after the CRLF; -1
                // for anything else.
                func number(at position: inout Int, lineStart: Int) -> Int {
                    var value = 0
                    let first = position
                    while position < end && position - first < 18 {
                        let digit = bytes[position] &- 48
                        guard digit <= 9 else { break }
                        value = value &* 10 &+ Int(digit)
                        position &+= 1
                    }
                    guard position > first, position + 1 < end, bytes[position] == 13, bytes[position + 1] == 10,
                        position + 1 - lineStart <= longestLine
                    else { return -1 }
                    position &+= 2
                    return value
                }
                var position = requestStart + 1
                let count = number(at: &position, lineStart: requestStart)
                guard count > 0, count <= most else { return nil }
                for index in 0..<count {
                    guard position < end, bytes[position] == UInt8(ascii: "$") else { return nil }
                    let lineStart = position
                    position &+= 1
                    let length = number(at: &position, lineStart: lineStart)
                    guard length >= 0, length <= longest, end - position >= length + 2 else { return nil }
                    spans[2 * index] = position
                    spans[2 * index + 1] = length
                    position &+= length + 2
                }
                return (count, position)
            }
            guard let found else { return false }
            progress = nil
            start = found.end
            // As the general path shares and appends (see there).
            if sharing && batch.count == 0 && batch.openArguments == 0 && !batch.sharesBytes { batch.share(buffer) }
            if sharing && batch.sharesBytes {
                for index in 0..<found.count { batch.appendSpan(start: spans[2 * index], count: spans[2 * index + 1]) }
            } else {
                buffer.withUnsafeBytes { buffer in
                    for index in 0..<found.count {
                        let from = spans[2 * index]
                        batch.appendArgument(
                            UnsafeRawBufferPointer(rebasing: buffer[from..<(from + spans[2 * index + 1])]))
                    }
                }
            }
            releaseLargeBufferIfConsumed()
            return true
        }
    }

    /// The request at `start` ends with a large bulk whose bytes are still
    /// arriving: its first `arguments` arguments (from `first`) are copied
    /// out, and the bulk's bytes from `data` on move to an array of exactly
    /// its size (`largeBulk`); the buffer is left empty.
    private mutating func takeLargeBulk(from first: Int, arguments: Int, data: Int, length: Int) {
        var copied: [[UInt8]] = []
        var position = first
        for _ in 0..<arguments {
            let lengthEnd = lineEnd(from: position)!  // checked by the caller
            let argumentLength = integer(from: position + 1, to: lengthEnd)!
            copied.append(Array(buffer[(lengthEnd + 1)..<(lengthEnd + 1 + argumentLength)]))
            position = lengthEnd + 1 + argumentLength + 2
        }
        let arrived = buffer.count - data
        largeBulkData = buffer.withUnsafeBytes { buffer in
            [UInt8](unsafeUninitializedCapacity: length + 2) { bulk, initialized in
                // Every byte counts as initialized (UInt8 needs no setup);
                // only the first `largeBulkFilled` are the client's so far.
                bulk.baseAddress!.initialize(
                    from: buffer.baseAddress!.advanced(by: data).assumingMemoryBound(to: UInt8.self), count: arrived)
                initialized = length + 2
            }
        }
        largeBulkFilled = arrived
        largeBulk = (copied, length)
        buffer = []
        start = 0
        progress = nil
    }

    private mutating func parseInline(into batch: inout RequestBatch) -> Step {
        guard let end = lineEnd(from: start), end - start <= limits.maxInline else {
            return buffer.count - start > limits.maxInline ? .protocolError("too big inline request") : .incomplete
        }
        var lineStop = end
        if lineStop > start && buffer[lineStop - 1] == UInt8(ascii: "\r") { lineStop -= 1 }
        let line = buffer[start..<lineStop]
        start = end + 1
        guard let split = splitInlineArguments(line) else {
            return .protocolError("unbalanced quotes in request")
        }
        for argument in split { batch.appendArgument(argument) }
        return .appended
    }
}

/// Splits an inline request into arguments like Redis's sdssplitargs: spaces
/// separate, double quotes allow \-escapes (\n, \t, \xHH, ...), single quotes
/// allow \'. Returns nil for unbalanced quotes.
func splitInlineArguments(_ line: ArraySlice<UInt8>) -> [[UInt8]]? {
    var arguments: [[UInt8]] = []
    var index = line.startIndex
    func isSpace(_ byte: UInt8) -> Bool {
        byte == 32 || byte == 9 || byte == 10 || byte == 13 || byte == 11 || byte == 12
    }
    func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: return byte - 48
        case 97...102: return byte - 87
        case 65...70: return byte - 55
        default: return nil
        }
    }
    while true {
        while index < line.endIndex && isSpace(line[index]) { index += 1 }
        guard index < line.endIndex else { return arguments }
        var current: [UInt8] = []
        var inDouble = false, inSingle = false, done = false
        while !done {
            if inDouble {
                guard index < line.endIndex else { return nil }
                let byte = line[index]
                if byte == UInt8(ascii: "\\") && index + 3 < line.endIndex && line[index + 1] == UInt8(ascii: "x"),
                    let high = hexValue(line[index + 2]), let low = hexValue(line[index + 3])
                {
                    current.append(high << 4 | low)
                    index += 3
                } else if byte == UInt8(ascii: "\\") && index + 1 < line.endIndex {
                    index += 1
                    switch line[index] {
                    case UInt8(ascii: "n"): current.append(10)
                    case UInt8(ascii: "r"): current.append(13)
                    case UInt8(ascii: "t"): current.append(9)
                    case UInt8(ascii: "b"): current.append(8)
                    case UInt8(ascii: "a"): current.append(7)
                    default: current.append(line[index])
                    }
                } else if byte == UInt8(ascii: "\"") {
                    // A closing quote must be followed by a space or the end.
                    if index + 1 < line.endIndex && !isSpace(line[index + 1]) { return nil }
                    done = true
                } else {
                    current.append(byte)
                }
            } else if inSingle {
                guard index < line.endIndex else { return nil }
                let byte = line[index]
                if byte == UInt8(ascii: "\\") && index + 1 < line.endIndex && line[index + 1] == UInt8(ascii: "'") {
                    index += 1
                    current.append(UInt8(ascii: "'"))
                } else if byte == UInt8(ascii: "'") {
                    if index + 1 < line.endIndex && !isSpace(line[index + 1]) { return nil }
                    done = true
                } else {
                    current.append(byte)
                }
            } else {
                guard index < line.endIndex else { break }
                let byte = line[index]
                if isSpace(byte) {
                    done = true
                } else if byte == UInt8(ascii: "\"") {
                    inDouble = true
                } else if byte == UInt8(ascii: "'") {
                    inSingle = true
                } else {
                    current.append(byte)
                }
            }
            if index < line.endIndex { index += 1 }
        }
        arguments.append(current)
    }
}
