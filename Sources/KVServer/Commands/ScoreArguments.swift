// ScoreArguments.swift: how the sorted-set commands read and write scores
// and ranges, in Redis's rules and wording: a score is a C double
// (getDoubleFromObject: no leading space, nothing after it, not NaN), a
// score range has `(` for an exclusive bound and -inf/+inf
// (zslParseRange), a lexicographic range has `[`/`(` and -/+
// (zslParseLexRangeItem), and a score is written with `%.17g` (a bulk
// string in RESP2, a double in RESP3), as Redis 7.0's addReplyDouble does.
import Glibc

/// Redis's getDoubleFromObject.
func parseDouble(_ bytes: UnsafeRawBufferPointer) -> Double? {
    guard !bytes.isEmpty, bytes.count < 5 * 1024, !(9...13).contains(bytes[0]), bytes[0] != 32, !bytes.contains(0)
    else {
        return nil
    }
    let parsed = strtod(bytes)
    guard parsed.whole, !parsed.value.isNaN else { return nil }
    if parsed.outOfRange && (parsed.value.isInfinite || parsed.value == 0) { return nil }
    return parsed.value
}

/// C's strtod over `bytes` (which hold no NUL): its value, whether it read
/// all of them, and whether it set ERANGE. The NUL-terminated copy strtod
/// needs is on the stack (small) or the heap.
func strtod(_ bytes: UnsafeRawBufferPointer) -> (value: Double, whole: Bool, outOfRange: Bool) {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { chars in
        for index in 0..<bytes.count { chars[index] = CChar(bitPattern: bytes[index]) }
        chars[bytes.count] = 0
        var end: UnsafeMutablePointer<CChar>?
        errno = 0
        let value = Glibc.strtod(chars.baseAddress!, &end)
        return (value, end == chars.baseAddress! + bytes.count, errno == ERANGE)
    }
}

/// A score as Redis writes it: `%.17g`, `inf` and `-inf`.
func scoreText(_ score: Double) -> [UInt8] {
    withScoreText(score) { Array($0) }
}

/// Calls `body` with `score` as Redis writes it, formatted on the stack:
/// ZSCORE allocates nothing (a variadic `vsnprintf` call would, for its
/// argument list).
func withScoreText<R>(_ score: Double, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if score.isInfinite {
        let text: StaticString = score > 0 ? "inf" : "-inf"
        return text.withUTF8Buffer { body(UnsafeRawBufferPointer($0)) }
    }
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer in
        // At most 24 characters: "-1.7976931348623157e+308".
        let length = formatDouble(buffer.baseAddress, buffer.count, "%.17g", score)
        return body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(max(length, 0))))
    }
}

/// glibc's strfromd, which Swift's Glibc module does not export: `%.17g`
/// without a variadic call. Looked up once, as a C function pointer.
private let formatDouble: @convention(c) (UnsafeMutablePointer<CChar>?, Int, UnsafePointer<CChar>?, Double) -> Int32 = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "strfromd") else {
        preconditionFailure("kvd: glibc has no strfromd (glibc 2.25 or later is needed)")
    }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<CChar>?, Int, UnsafePointer<CChar>?, Double) -> Int32).self)
}()

extension ReplyWriter {
    /// A score: a bulk string in RESP2, `,<score>` in RESP3.
    mutating func double(_ score: Double) { withScoreText(score) { double(text: $0) } }
}

/// A score range (ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE).
struct ScoreRange {
    var min: Double
    var max: Double
    var minExclusive = false
    var maxExclusive = false

    /// Redis's zslParseRange; nil when a bound is not a float.
    init?(_ minimum: UnsafeRawBufferPointer, _ maximum: UnsafeRawBufferPointer) {
        guard let (min, minExclusive) = ScoreRange.bound(minimum),
            let (max, maxExclusive) = ScoreRange.bound(maximum)
        else { return nil }
        (self.min, self.minExclusive, self.max, self.maxExclusive) = (min, minExclusive, max, maxExclusive)
    }

    private static func bound(_ bytes: UnsafeRawBufferPointer) -> (Double, Bool)? {
        if bytes.first == UInt8(ascii: "(") {
            guard let value = parseRangeDouble(UnsafeRawBufferPointer(rebasing: bytes.dropFirst())) else { return nil }
            return (value, true)
        }
        guard let value = parseRangeDouble(bytes) else { return nil }
        return (value, false)
    }

    /// zslParseRange's strtod, over the argument as the C string Redis
    /// passes (up to a NUL): leading spaces allowed, an empty string is 0,
    /// past a double's range is infinite or 0 (ERANGE is not checked);
    /// only bytes left unread or NaN are refused.
    private static func parseRangeDouble(_ bytes: UnsafeRawBufferPointer) -> Double? {
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        let parsed = strtod(UnsafeRawBufferPointer(rebasing: bytes[..<end]))
        guard parsed.whole, !parsed.value.isNaN else { return nil }
        return parsed.value
    }

    /// No score can be in it.
    var isEmpty: Bool { min > max || (min == max && (minExclusive || maxExclusive)) }

    func isAboveMin(_ score: Double) -> Bool { minExclusive ? score > min : score >= min }
    func isBelowMax(_ score: Double) -> Bool { maxExclusive ? score < max : score <= max }
    func contains(_ score: Double) -> Bool { isAboveMin(score) && isBelowMax(score) }
}

/// A lexicographic range (ZRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX).
struct LexRange {
    enum Bound {
        case minusInfinity, plusInfinity
        case value([UInt8], exclusive: Bool)
    }

    var min: Bound
    var max: Bound

    /// Redis's zslParseLexRange; nil when an item is not `[x`, `(x`, `-` or `+`.
    init?(_ minimum: UnsafeRawBufferPointer, _ maximum: UnsafeRawBufferPointer) {
        guard let min = LexRange.bound(minimum), let max = LexRange.bound(maximum) else { return nil }
        (self.min, self.max) = (min, max)
    }

    private static func bound(_ bytes: UnsafeRawBufferPointer) -> Bound? {
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: "+") where bytes.count == 1: return .plusInfinity
        case UInt8(ascii: "-") where bytes.count == 1: return .minusInfinity
        case UInt8(ascii: "("): return .value(Array(bytes.dropFirst()), exclusive: true)
        case UInt8(ascii: "["): return .value(Array(bytes.dropFirst()), exclusive: false)
        default: return nil
        }
    }

    func isAboveMin(_ member: [UInt8]) -> Bool { member.withUnsafeBytes { isAboveMin($0) } }

    func isBelowMax(_ member: [UInt8]) -> Bool { member.withUnsafeBytes { isBelowMax($0) } }

    func isAboveMin(_ member: UnsafeRawBufferPointer) -> Bool {
        switch min {
        case .minusInfinity: true
        case .plusInfinity: false
        case .value(let value, let exclusive):
            value.withUnsafeBytes { value in
                exclusive ? SkipList.compare(member, value) > 0 : SkipList.compare(member, value) >= 0
            }
        }
    }

    func isBelowMax(_ member: UnsafeRawBufferPointer) -> Bool {
        switch max {
        case .minusInfinity: false
        case .plusInfinity: true
        case .value(let value, let exclusive):
            value.withUnsafeBytes { value in
                exclusive ? SkipList.compare(member, value) < 0 : SkipList.compare(member, value) <= 0
            }
        }
    }

    /// No member can be in it (Redis's zslIsInLexRange's first test).
    var isEmpty: Bool {
        switch (min, max) {
        case (.plusInfinity, _), (_, .minusInfinity): return true
        case (.value(let a, let aExclusive), .value(let b, let bExclusive)):
            let order = SkipList.compare(a, b)
            return order > 0 || (order == 0 && (aExclusive || bExclusive))
        default: return false
        }
    }
}
