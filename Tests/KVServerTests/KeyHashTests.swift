// KeyHashTests.swift: the keyed hash kvd's tables use for keys (wyhash with
// per-process secrets, under the table's seed): the same bytes hash alike
// whatever holds them, every length path mixes every byte, the seed
// changes every hash, and the family of keys that collided under wyhash's
// public constants does not collide.
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
        #expect(buckets.max()! < 30)  // a fair hash passes 30 once in 10^10 runs
    }

    /// With wyhash's public secret s1 = 0xE7037ED1A0B428DB in bytes 0-3 and
    /// 8-11 of a 16-byte key, the final multiplication was by zero: every
    /// such key hashed alike under every seed. Keys whose first 8 bytes
    /// were s1 collided the same way whatever their next 8 bytes.
    @Test func keysBuiltAgainstWyhashsPublicConstantsDoNotCollide() {
        let s1: [UInt8] = [0xDB, 0x28, 0xB4, 0xA0, 0xD1, 0x7E, 0x03, 0xE7]  // little-endian
        var sixteen: [[UInt8]] = []
        var long: [[UInt8]] = []
        for n in 0..<2_000 {
            let free = withUnsafeBytes(of: UInt32(n).littleEndian) { Array($0) }
            // a = read4(0) << 32 | read4(8): bytes 0-3 = high half of s1, 8-11 = low half.
            sixteen.append(Array(s1[4..<8]) + free + Array(s1[0..<4]) + free.reversed())
            // 32 bytes: s1, 8 free bytes, a fixed tail; the first round's
            // product was zero and the tail alone made the hash.
            long.append(s1 + free + free + Array("the same tail...".utf8))
        }
        #expect(Set(sixteen.map { hash($0) }).count == sixteen.count)
        #expect(Set(long.map { hash($0) }).count == long.count)
    }
}
