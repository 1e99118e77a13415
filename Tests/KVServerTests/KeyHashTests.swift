// KeyHashTests.swift: the keyed hash kvd's tables use for keys (wyhash under
// the table's seed): the same bytes hash alike whatever holds them, every
// length path mixes every byte, and the seed changes every hash (a client
// that does not know it cannot precompute collisions).
import Testing

@testable import KVServer

@Suite struct KeyHashTests {
    private func hash(_ bytes: [UInt8], seed: Int = 42) -> Int {
        bytes.withUnsafeBytes { KeyHash.hash($0, seed: seed) }
    }

    @Test func aStoredKeyAndAProbeOfTheSameBytesHashAlike() {
        for length in [0, 1, 3, 4, 8, 16, 17, 48, 49, 100] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let probe = bytes.withUnsafeBytes { Key.probe($0)._rawHashValue(seed: 7) }
            #expect(Key.stored(bytes)._rawHashValue(seed: 7) == probe)
        }
    }

    @Test func everyByteOfEveryLengthChangesTheHash() {
        var unchanged = 0
        for length in 1...120 {
            let base = [UInt8](repeating: 0x5A, count: length)
            let original = hash(base)
            for position in 0..<length {
                var changed = base
                changed[position] ^= 1
                if hash(changed) == original { unchanged += 1 }
            }
        }
        #expect(unchanged == 0)
    }

    @Test func theSeedChangesEveryHashAndKeysDoNotCollide() {
        let keys = (0..<20_000).map { Array("key:\($0)".utf8) }
        #expect(keys.allSatisfy { hash($0, seed: 1) != hash($0, seed: 2) })
        #expect(Set(keys.map { hash($0) }).count == keys.count)
        // The low bits pick a bucket: no bucket of 4,096 gets more than
        // a few times its share.
        var buckets = [Int](repeating: 0, count: 4_096)
        for key in keys { buckets[hash(key) & 4_095] += 1 }
        #expect(buckets.max()! < 20)
    }
}
