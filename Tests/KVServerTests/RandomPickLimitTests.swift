// RandomPickLimitTests.swift: a repeated random pick (SRANDMEMBER,
// HRANDFIELD, ZRANDMEMBER with a negative count) whose reply cannot fit
// under the client's output limit is refused before a single draw; one
// that fits is drawn in full.
import Testing

@testable import KVServer

@Suite struct RandomPickLimitTests {
    // The refusal itself: a count whose picks cannot fit is not drawn (no
    // pick at all, where drawing up to the limit would make thousands),
    // and the writer is marked stopped; one that fits is drawn in full.
    @Test func aRandomCountThatCannotFitDrawsNothing() {
        var random = CommandRandom()
        var out = ReplyWriter()
        out.limit = 64 << 10
        var draws = 0
        forEachRandomPosition(-(out.limit / 6 + 1), of: 3, using: &random, &out) { _, out in
            draws += 1
            out.bulk([0x61])
        }
        #expect(draws == 0)
        #expect(out.stoppedAtLimit)
        var fits = ReplyWriter()
        fits.limit = 64 << 10
        forEachRandomPosition(-1000, of: 3, using: &random, &fits) { position, out in
            draws += 1
            #expect((0..<3).contains(position))
            out.bulk([0x61])
        }
        #expect(draws == 1000)
        #expect(!fits.stoppedAtLimit)
    }
}
