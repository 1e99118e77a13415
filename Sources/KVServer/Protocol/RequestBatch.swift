// RequestBatch.swift: the requests of one read, as the core receives them,
// and `Request`, the view of one of them that a command handler gets.
//
// No allocation per argument: each argument is a span (offset, length) into
// one buffer. That buffer is either the batch's own, the arguments copied
// into it back to back (a batch that crosses to another thread), or the
// parser's buffer itself, shared and not copied (`sharing`: a connection on
// the core loop, whose batch is executed before the parser takes any more
// bytes). A connection keeps its batch and refills it (`removeAll` keeps
// the capacity), so in steady state a batch costs no allocation either.

/// Where one argument's bytes are: in its batch's buffer, or (a negative
/// `start`) the batch's owned argument number `-1 - start`.
struct ArgumentSpan {
    var start: Int
    var count: Int
}

/// Requests read from one connection, flattened: every argument's bytes
/// back to back in one buffer, where each argument is, and where each
/// request ends. Three arrays for the whole batch instead of one per
/// argument.
public struct RequestBatch: Sendable {
    /// The bytes the spans point into: the arguments copied back to back,
    /// or the parser's buffer when `sharesBytes`.
    private(set) var bytes: [UInt8] = []
    /// True when `bytes` is the parser's buffer, shared (see `share`).
    private(set) var sharesBytes = false
    /// Arguments kept as arrays of their own: a large bulk the parser read
    /// into an array of its size, which a command can store as it is. At
    /// most one per request, its last argument.
    private(set) var owned: [[UInt8]] = []
    /// Each argument's place in `bytes`, in order.
    private(set) var spans: [ArgumentSpan] = []
    /// `ends[i]` is the index in `spans` just past request `i`.
    private(set) var ends: [Int] = []
    /// What the connection's own answers did to its client's MULTI while a
    /// script was busy, for the core to apply before the batch runs.
    var transactionChanges: TransactionShadow.Changes?

    /// An empty batch.
    public init() {}

    /// The number of requests.
    public var count: Int { ends.count }

    /// Arguments appended since the last request ended (not yet a request).
    var openArguments: Int { spans.count - (ends.last ?? 0) }

    /// Makes `buffer` (the parser's) the bytes of this empty batch: the
    /// arguments that follow are spans into it (`appendSpan`), not copies.
    mutating func share(_ buffer: [UInt8]) {
        precondition(spans.isEmpty, "RequestBatch.share: the batch already holds arguments")
        bytes = buffer
        sharesBytes = true
    }

    /// Appends one argument of the request being built: `bytes[start..<start + count]`
    /// of the shared buffer.
    mutating func appendSpan(start: Int, count: Int) {
        spans.append(ArgumentSpan(start: start, count: count))
    }

    /// Appends `argument` as the last argument of the request being built,
    /// kept as it is (not copied).
    mutating func appendOwnedArgument(_ argument: [UInt8]) {
        spans.append(ArgumentSpan(start: -1 - owned.count, count: argument.count))
        owned.append(argument)
    }

    /// Appends one argument of the request being built (copied; into a
    /// shared buffer too, which then becomes the batch's own copy).
    mutating func appendArgument(_ argument: UnsafeRawBufferPointer) {
        spans.append(ArgumentSpan(start: bytes.count, count: argument.count))
        bytes.append(bytes: argument)
    }

    /// Appends one argument of the request being built (copied).
    public mutating func appendArgument(_ argument: [UInt8]) {
        argument.withUnsafeBytes { appendArgument($0) }
    }

    /// Closes the request whose arguments were appended since the last one ended.
    public mutating func endRequest() {
        ends.append(spans.count)
    }

    /// Appends a copy of `request` as a request of its own (MULTI's queue);
    /// an owned argument is shared, not copied.
    mutating func append(_ request: Request) {
        for index in request.indices {
            if let argument = request.ownedArgument(index) {
                appendOwnedArgument(argument)
            } else {
                appendArgument(request.raw(index))
            }
        }
        endRequest()
    }

    /// Empties the batch, keeping its buffers for the next one (and letting
    /// go of a shared buffer, so that the parser's stays unique). Each owned
    /// argument (a large bulk) goes through `release` first: kvd frees them
    /// off the core loop (`Reclaimer`). An array already empty is left
    /// alone: a connection empties its batch after it ran and again before
    /// it parses, and `removeAll(keepingCapacity:)` on an empty array is
    /// still a call with a uniqueness check.
    public mutating func removeAll(releasing release: (inout [UInt8]) -> Void = { _ in }) {
        if sharesBytes {
            bytes = []
            sharesBytes = false
        } else if !bytes.isEmpty {
            RequestBatch.empty(&bytes)
        }
        if !owned.isEmpty {
            for index in owned.indices { release(&owned[index]) }
            owned.removeAll()
        }
        if !spans.isEmpty { RequestBatch.empty(&spans) }
        if !ends.isEmpty { RequestBatch.empty(&ends) }
    }

    /// Past this many bytes, a batch's array is let go when the batch
    /// empties rather than kept for the next: one request of 100,000
    /// arguments (an SADD of as many members) left its 2 MB of spans and
    /// bytes with the connection for as long as it lived, as the parser's
    /// buffer already is not (Redis shrinks an idle client's query buffer too).
    static let largeCapacity = 1 << 20

    /// Empties `array`, keeping its buffer unless it is past `largeCapacity`.
    private static func empty<Element>(_ array: inout [Element]) {
        if array.capacity * MemoryLayout<Element>.stride > largeCapacity {
            array = []
        } else {
            array.removeAll(keepingCapacity: true)
        }
    }

    /// Drops the last request (its bytes stay in the buffer until the next
    /// `removeAll`; nothing points at them).
    mutating func removeLastRequest() {
        guard let last = ends.popLast() else { return }
        let first = ends.last ?? 0
        if last > first, spans[last - 1].start < 0 { owned.removeLast() }
        spans.removeLast(spans.count - first)
    }

    /// True when the first argument of the last request equals `word`,
    /// ignoring ASCII case (QUIT, seen by the connection).
    func lastRequestIs(_ word: StaticString) -> Bool {
        let first = ends.count > 1 ? ends[ends.count - 2] : 0
        guard let last = ends.last, last > first else { return false }
        let span = spans[first]
        guard span.start >= 0 else { return false }  // an owned argument is a large bulk
        return bytes.withUnsafeBytes {
            equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: $0[span.start..<(span.start + span.count)]), word)
        }
    }

    /// The bytes the requests from number `first` on took in RESP (as a
    /// client sends them, `*N` and `$len` headers included): what of this
    /// read is still to run (CLIENT LIST's `qbuf`).
    func encodedSize(from first: Int) -> Int {
        func digits(_ n: Int) -> Int { n < 10 ? 1 : 1 + digits(n / 10) }
        var total = 0
        var start = first > 0 && first <= ends.count ? ends[first - 1] : 0
        for end in ends.dropFirst(first) {
            total += 3 + digits(end - start)
            for span in spans[start..<end] { total += 5 + digits(span.count) + span.count }
            start = end
        }
        return total
    }

    /// Argument bytes of every request, plus a pointer's size per argument:
    /// Redis's `multi-mem` for a MULTI queue.
    var argumentMemory: Int { spans.reduce(0) { $0 + $1.count } + spans.count * MemoryLayout<Int>.size }

    /// The requests after the first `count`, as a batch of their own.
    func dropping(first count: Int) -> RequestBatch {
        guard count > 0 else { return self }
        var rest = RequestBatch()
        var index = 0
        forEach { request in
            if index >= count { rest.append(request) }
            index += 1
            return true
        }
        return rest
    }

    /// Calls `body` with each request, in order, until it returns false.
    /// The request is a view into the batch: valid only inside `body`.
    func forEach(_ body: (Request) -> Bool) {
        bytes.withUnsafeBytes { bytes in
            spans.withUnsafeBufferPointer { spans in
                owned.withUnsafeBufferPointer { owned in
                    var start = 0
                    for end in ends {
                        let spans = UnsafeBufferPointer(rebasing: spans[start..<end])
                        // An owned argument is last; its bytes are pinned while `body` runs.
                        let goOn =
                            if let last = spans.last, last.start < 0 {
                                owned[-1 - last.start].withUnsafeBytes { large in
                                    body(Request(bytes: bytes, spans: spans, owned: owned, large: large))
                                }
                            } else {
                                body(Request(bytes: bytes, spans: spans, owned: owned, large: nil))
                            }
                        guard goOn else { return }
                        start = end
                    }
                }
            }
        }
    }
}

/// One request's arguments, the command name first: a view into a batch,
/// valid while the handler that received it runs.
///
/// `raw(_:)` reads an argument in place, with no allocation: the hot
/// commands (GET, SET, INCR, MSET, ...) use it. Subscripting copies the
/// argument into an array, for the commands where that is simpler.
struct Request: RandomAccessCollection {
    private let bytes: UnsafeRawBufferPointer
    private let spans: UnsafeBufferPointer<ArgumentSpan>
    /// The batch's owned arguments, and the bytes of this request's, if any.
    private let owned: UnsafeBufferPointer<[UInt8]>
    private let large: UnsafeRawBufferPointer?

    init(
        bytes: UnsafeRawBufferPointer, spans: UnsafeBufferPointer<ArgumentSpan>,
        owned: UnsafeBufferPointer<[UInt8]>, large: UnsafeRawBufferPointer?
    ) {
        self.bytes = bytes
        self.spans = spans
        self.owned = owned
        self.large = large
    }

    /// The arguments `slice` covers, as a request of their own.
    init(rebasing slice: Slice<Request>) {
        self.bytes = slice.base.bytes
        self.spans = UnsafeBufferPointer(rebasing: slice.base.spans[slice.startIndex..<slice.endIndex])
        self.owned = slice.base.owned
        self.large = slice.base.large
    }

    var startIndex: Int { 0 }
    var endIndex: Int { spans.count }

    /// Argument `index`, copied.
    subscript(index: Int) -> [UInt8] { Array(raw(index)) }

    /// Argument `index`, in place.
    func raw(_ index: Int) -> UnsafeRawBufferPointer {
        let span = spans[index]
        guard span.start >= 0 else { return large! }
        return UnsafeRawBufferPointer(rebasing: bytes[span.start..<(span.start + span.count)])
    }

    /// Argument `index` as the array the parser read it into, when it is a
    /// large bulk kept whole: storing it costs no copy. Nil otherwise.
    func ownedArgument(_ index: Int) -> [UInt8]? {
        let span = spans[index]
        return span.start < 0 ? owned[-1 - span.start] : nil
    }
}

/// True when `bytes` equal `word`, ignoring ASCII case.
func equalsIgnoringCase(_ bytes: [UInt8], _ word: StaticString) -> Bool {
    bytes.withUnsafeBytes { equalsIgnoringCase($0, word) }
}

/// True when `bytes` equal `word`, ignoring ASCII case.
func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ word: StaticString) -> Bool {
    guard bytes.count == word.utf8CodeUnitCount else { return false }
    return word.withUTF8Buffer { ascii in
        zip(bytes, ascii).allSatisfy { a, b in (a >= 65 && a <= 90 ? a + 32 : a) == (b >= 65 && b <= 90 ? b + 32 : b) }
    }
}

extension Array where Element == UInt8 {
    /// Appends raw bytes with one copy (the raw buffer's own `append`
    /// path goes byte by byte).
    @inline(__always)
    mutating func append(bytes: UnsafeRawBufferPointer) {
        bytes.withMemoryRebound(to: UInt8.self) { append(contentsOf: $0) }
    }

    /// A copy of raw bytes in one move (`Array(raw)` takes the generic
    /// collection copy: about 300 instructions for a short key).
    @inline(__always)
    init(copying bytes: UnsafeRawBufferPointer) {
        self = bytes.withMemoryRebound(to: UInt8.self) { Array($0) }
    }
}
