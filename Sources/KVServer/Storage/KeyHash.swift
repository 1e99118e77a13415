// KeyHash.swift: how a key is hashed in kvd's tables: wyhash (Wang Yi's,
// final version 4), keyed by the table's seed. Swift's Dictionary keys its
// SipHash-1-3 by a seed drawn at random per process and mixed per table;
// it asks a key for `_rawHashValue(seed:)`, and Key answers with this
// function of the same seed, so a client that does not know the seed
// cannot aim keys at one bucket, as with SipHash, while a key costs a few
// multiplications instead of SipHash's rounds. In the profile of a
// pipelined MSET, SipHash (seeding, combining, finalizing) was 8.5% of
// kvd's time.
//
// wyhash is not a cryptographic PRF, as SipHash is; with a secret seed it
// passes SMHasher's tests and is what several runtimes use for the same
// purpose (Go's maps fall back to it; Zig's and Nim's standard hashes are
// it).

enum KeyHash {
    private static let s0: UInt64 = 0xA076_1D64_78BD_642F
    private static let s1: UInt64 = 0xE703_7ED1_A0B4_28DB
    private static let s2: UInt64 = 0x8EBC_6AF0_9C88_C6E3
    private static let s3: UInt64 = 0x5899_65CC_7537_4CC3

    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    private static func read8(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func read4(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    /// The hash of `bytes` under `seed`.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: Int) -> Int {
        let length = bytes.count
        var seed = UInt64(bitPattern: Int64(seed))
        seed ^= mix(seed ^ s0, s1)
        var a: UInt64 = 0
        var b: UInt64 = 0
        if length <= 16 {
            if length >= 4 {
                let step = (length >> 3) << 2
                a = read4(bytes, 0) << 32 | read4(bytes, step)
                b = read4(bytes, length - 4) << 32 | read4(bytes, length - 4 - step)
            } else if length > 0 {
                a = UInt64(bytes[0]) << 16 | UInt64(bytes[length >> 1]) << 8 | UInt64(bytes[length - 1])
            }
        } else {
            var remaining = length
            var offset = 0
            if remaining > 48 {
                var see1 = seed
                var see2 = seed
                repeat {
                    seed = mix(read8(bytes, offset) ^ s1, read8(bytes, offset + 8) ^ seed)
                    see1 = mix(read8(bytes, offset + 16) ^ s2, read8(bytes, offset + 24) ^ see1)
                    see2 = mix(read8(bytes, offset + 32) ^ s3, read8(bytes, offset + 40) ^ see2)
                    offset += 48
                    remaining -= 48
                } while remaining > 48
                seed ^= see1 ^ see2
            }
            while remaining > 16 {
                seed = mix(read8(bytes, offset) ^ s1, read8(bytes, offset + 8) ^ seed)
                offset += 16
                remaining -= 16
            }
            a = read8(bytes, offset + remaining - 16)
            b = read8(bytes, offset + remaining - 8)
        }
        a ^= s1
        b ^= seed
        let product = a.multipliedFullWidth(by: b)
        return Int(truncatingIfNeeded: mix(product.low ^ s0 ^ UInt64(length), product.high ^ s1))
    }
}
