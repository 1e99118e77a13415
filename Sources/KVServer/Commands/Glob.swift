// Glob.swift: the pattern matching of KEYS, as Redis's stringmatchlen does it:
// `*`, `?`, `[...]` with ranges and `^` negation, and `\` escapes.

func globMatch(_ pattern: [UInt8], _ string: [UInt8]) -> Bool {
    var skipLongerMatches = false
    return globMatch(pattern[...], string[...], depth: 0, &skipLongerMatches)
}

/// `skipLongerMatches`, as in Redis: once the rest of the pattern after a
/// `*` matches nowhere in the rest of the string, no earlier `*` can help by
/// matching more, so a hostile pattern (`*a*a*a...b`) costs polynomial
/// time instead of exponential. Recursion is bounded as Redis bounds it.
private func globMatch(
    _ pattern: ArraySlice<UInt8>, _ string: ArraySlice<UInt8>, depth: Int, _ skipLongerMatches: inout Bool
) -> Bool {
    guard depth < 1000 else { return false }
    var p = pattern.startIndex, s = string.startIndex
    while p < pattern.endIndex && s < string.endIndex {
        switch pattern[p] {
        case UInt8(ascii: "*"):
            while p + 1 < pattern.endIndex && pattern[p + 1] == UInt8(ascii: "*") { p += 1 }
            if p + 1 == pattern.endIndex { return true }
            var rest = s
            while rest < string.endIndex {
                if globMatch(pattern[(p + 1)...], string[rest...], depth: depth + 1, &skipLongerMatches) { return true }
                if skipLongerMatches { return false }
                rest += 1
            }
            skipLongerMatches = true
            return false
        case UInt8(ascii: "?"):
            s += 1
        case UInt8(ascii: "["):
            p += 1
            let negate = p < pattern.endIndex && pattern[p] == UInt8(ascii: "^")
            if negate { p += 1 }
            var matched = false
            while p < pattern.endIndex && pattern[p] != UInt8(ascii: "]") {
                if pattern[p] == UInt8(ascii: "\\") && p + 1 < pattern.endIndex {
                    p += 1
                    if pattern[p] == string[s] { matched = true }
                } else if p + 2 < pattern.endIndex && pattern[p + 1] == UInt8(ascii: "-") {
                    var low = pattern[p], high = pattern[p + 2]
                    if low > high { swap(&low, &high) }
                    if string[s] >= low && string[s] <= high { matched = true }
                    p += 2
                } else if pattern[p] == string[s] {
                    matched = true
                }
                p += 1
            }
            if p == pattern.endIndex { p -= 1 }  // unterminated class: Redis treats the end as ']'
            if negate { matched.toggle() }
            if !matched { return false }
            s += 1
        case UInt8(ascii: "\\") where p + 1 < pattern.endIndex:
            p += 1
            if pattern[p] != string[s] { return false }
            s += 1
        default:
            if pattern[p] != string[s] { return false }
            s += 1
        }
        p += 1
    }
    while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == pattern.endIndex && s == string.endIndex
}
