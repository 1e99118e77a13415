// PartialQuickSortTests.swift: Redis's pqsort, as kvd ports it, puts in
// the window it is asked for exactly what a full sort puts there, for
// every size around its thresholds (insertion sort under 7 elements, the
// ninther past 40). Which of several equal elements it keeps, and their
// order, is Redis's: the golden case "sort ties under a narrowing limit"
// and tools/geo-differential.py compare that with redis-server.
import Testing

@testable import KVServer

@Suite struct PartialQuickSortTests {
    @Test func theWindowHoldsWhatAFullSortPutsThere() {
        var random = SeededGenerator(seed: 0x9A5)
        for size in [0, 1, 2, 6, 7, 8, 40, 41, 100, 1000] {
            for _ in 0..<30 {
                let values = (0..<size).map { _ in Int.random(in: 0..<max(size / 3, 1), using: &random) }
                guard size > 0 else { continue }
                let lower = Int.random(in: 0..<size, using: &random)
                let upper = Int.random(in: lower..<size, using: &random)
                var partial = values
                partialQuickSort(&partial, keeping: lower, through: upper) { $0 < $1 ? -1 : ($0 == $1 ? 0 : 1) }
                let sorted = values.sorted()
                #expect(
                    Array(partial[lower...upper]) == Array(sorted[lower...upper]), "size \(size), \(lower)...\(upper)")
                #expect(partial.sorted() == sorted)  // a permutation: nothing lost or repeated
            }
        }
    }

    /// SORT of a missing key with BY and no LIMIT asks for the window
    /// -1...-2 of nothing: it trapped (a range past its end), and any
    /// client could stop kvd with `SORT nokey BY x*`.
    @Test func nothingToSortIsLeftAsItIs() {
        var none: [Int] = []
        partialQuickSort(&none, keeping: -1, through: -2) { $0 < $1 ? -1 : ($0 == $1 ? 0 : 1) }
        #expect(none.isEmpty)
        let dispatcher = connected()
        #expect(run(dispatcher, "SORT", "nokey", "BY", "x*") == "*0\r\n")
        #expect(run(dispatcher, "SORT", "nokey", "BY", "x*", "STORE", "d") == ":0\r\n")
        #expect(run(dispatcher, "PING") == "+PONG\r\n")
    }
}
