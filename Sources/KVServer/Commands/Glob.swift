// Glob.swift: the pattern matching of KEYS, as Redis's stringmatchlen does it:
// `*`, `?`, `[...]` with ranges and `^` negation, and `\` escapes.

func globMatch(_ pattern: [UInt8], _ string: [UInt8]) -> Bool {
    pattern.withUnsafeBufferPointer { pattern in string.withUnsafeBufferPointer { globMatch(pattern, $0) } }
}

/// The same, in place: a PUBLISH matches its channel against every pattern
/// with no copy and no slice (a million patterns are a million calls).
func globMatch(_ pattern: UnsafeBufferPointer<UInt8>, _ string: UnsafeBufferPointer<UInt8>) -> Bool {
    var skipLongerMatches = false
    return globMatch(pattern, from: 0, string, from: 0, depth: 0, &skipLongerMatches)
}

/// `skipLongerMatches`, as in Redis: once the rest of the pattern after a
/// `*` matches nowhere in the rest of the string, no earlier `*` can help by
/// matching more, so a hostile pattern (`*a*a*a...b`) costs polynomial
/// time instead of exponential. Recursion is bounded as Redis bounds it.
private func globMatch(
    _ pattern: UnsafeBufferPointer<UInt8>, from patternStart: Int, _ string: UnsafeBufferPointer<UInt8>,
    from stringStart: Int, depth: Int, _ skipLongerMatches: inout Bool
) -> Bool {
    guard depth < 1000 else { return false }
    let patternEnd = pattern.count, stringEnd = string.count
    var p = patternStart, s = stringStart
    while p < patternEnd && s < stringEnd {
        switch pattern[p] {
        case UInt8(ascii: "*"):
            while p + 1 < patternEnd && pattern[p + 1] == UInt8(ascii: "*") { p += 1 }
            if p + 1 == patternEnd { return true }
            var rest = s
            while rest < stringEnd {
                if globMatch(pattern, from: p + 1, string, from: rest, depth: depth + 1, &skipLongerMatches) {
                    return true
                }
                if skipLongerMatches { return false }
                rest += 1
            }
            skipLongerMatches = true
            return false
        case UInt8(ascii: "?"):
            s += 1
        case UInt8(ascii: "["):
            p += 1
            let negate = p < patternEnd && pattern[p] == UInt8(ascii: "^")
            if negate { p += 1 }
            var matched = false
            while p < patternEnd && pattern[p] != UInt8(ascii: "]") {
                if pattern[p] == UInt8(ascii: "\\") && p + 1 < patternEnd {
                    p += 1
                    if pattern[p] == string[s] { matched = true }
                } else if p + 2 < patternEnd && pattern[p + 1] == UInt8(ascii: "-") {
                    var low = pattern[p], high = pattern[p + 2]
                    if low > high { swap(&low, &high) }
                    if string[s] >= low && string[s] <= high { matched = true }
                    p += 2
                } else if pattern[p] == string[s] {
                    matched = true
                }
                p += 1
            }
            if p == patternEnd { p -= 1 }  // unterminated class: Redis treats the end as ']'
            if negate { matched.toggle() }
            if !matched { return false }
            s += 1
        case UInt8(ascii: "\\") where p + 1 < patternEnd:
            p += 1
            if pattern[p] != string[s] { return false }
            s += 1
        default:
            if pattern[p] != string[s] { return false }
            s += 1
        }
        p += 1
    }
    while p < patternEnd && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == patternEnd && s == stringEnd
}
