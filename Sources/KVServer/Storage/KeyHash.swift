// KeyHash.swift: how a key is hashed in kvd's tables: wyhash (Wang Yi's,
// final version 4) in its "condom" form, with secrets and a key drawn at
// random once per process. A Dictionary asks a key for
// `_rawHashValue(seed:)`; the seed it passes is per table but not secret
// (derived from the table's address), so the secrets are what keep a
// client from aiming keys at one bucket. A key costs a few
// multiplications instead of SipHash's rounds: in the profile of a
// pipelined MSET, SipHash (seeding, combining, finalizing) was 8.5% of
// kvd's time. With wyhash's public constants a family of 2^64 sixteen-byte
// keys hashed alike under every seed (a reviewer found it); the tests
// keep that family apart.
//
// wyhash is not a cryptographic PRF, as SipHash is: its resistance to
// chosen collisions rests on the secrets staying unknown, which a client
// cannot read from anything kvd answers. Go's runtime hashes with a
// wyhash-derived function where it has no AES instructions, and Zig's
// hash maps use wyhash.

enum KeyHash {
    /// wyhash's secrets, drawn at random once per process, not its public
    /// defaults: with public ones a client can build keys whose final
    /// multiplication is by zero (2^64 sixteen-byte keys with one hash
    /// under every seed). Each is odd, with its bits about half set.
    private static let secrets: (UInt64, UInt64, UInt64, UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        func secret() -> UInt64 {
            while true {
                let value = generator.next() | 1
                if (24...40).contains(value.nonzeroBitCount) { return value }
            }
        }
        return (secret(), secret(), secret(), secret(), generator.next())
    }()

    /// wyhash's multiply-and-fold in its "condom" form: the product is
    /// folded into the operands, so a zero operand does not erase the rest.
    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return (a ^ product.low) ^ (b ^ product.high)
    }

    @inline(__always)
    private static func read8(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func read4(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    /// The hash of `bytes` under `seed` (and the process's secrets).
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: Int) -> Int {
        let (s0, s1, s2, s3, key) = secrets
        let length = bytes.count
        var seed = UInt64(bitPattern: Int64(seed)) ^ key
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
        a ^= product.low
        b ^= product.high
        return Int(truncatingIfNeeded: mix(a ^ s0 ^ UInt64(length), b ^ s1))
    }
}
