// HyperLogLog.swift: Redis 7.0's HyperLogLog, in Redis's own bytes
// (hyperloglog.c), so that a value moves between kvd and redis-server by
// GET and SET, DUMP and RESTORE or a dump.rdb, and counts the same on both.
//
// It is a string: a 16-byte header ("HYLL", the encoding, three zero
// bytes, the cached count little-endian, its top bit set when stale), then
// 16,384 six-bit registers, either dense (12,288 bytes, register i at bit
// 6i, low bits first) or sparse, as run-length opcodes:
//   ZERO  00xxxxxx           1 to 64 registers at 0
//   XZERO 01xxxxxx yyyyyyyy  1 to 16,384 registers at 0
//   VAL   1vvvvvxx           1 to 4 registers at 1 to 32
// The sparse form changes opcode by opcode as Redis's hllSparseSet changes
// it (split, then merge neighbours), so the same adds leave the same bytes
// in both servers; it turns dense past hll-sparse-max-bytes or at a
// register above 32. The estimate is Otmar Ertl's, as Redis 7.0 computes it.
import Glibc

enum HyperLogLog {
    static let registerCount = 16384
    static let headerSize = 16
    /// A dense value's exact length (Redis checks it).
    static let denseSize = headerSize + registerCount * 6 / 8
    /// The encoding byte's values.
    static let dense: UInt8 = 0
    static let sparse: UInt8 = 1

    /// The largest register a VAL opcode holds, and its longest run.
    private static let sparseValueMax = 32
    private static let sparseRunMax = 4
    /// The longest run a one-byte ZERO opcode holds.
    private static let zeroRunMax = 64
    /// How many registers an element's hash can make: 64 - 14 + 1.
    private static let maxCount = 51

    /// An empty HyperLogLog as PFADD creates it: sparse, one XZERO of
    /// every register, the cached count 0.
    static func empty() -> [UInt8] {
        var value = [UInt8](repeating: 0, count: headerSize + 2)
        value.replaceSubrange(0..<4, with: "HYLL".utf8)
        value[4] = sparse
        value[headerSize] = 0x7f  // XZERO, 16,384 - 1 = 0x3fff
        value[headerSize + 1] = 0xff
        return value
    }

    /// True when `value` is a HyperLogLog as Redis checks one before using
    /// it: the magic, a known encoding, and a dense value's exact length.
    /// (A sparse value's opcodes are checked as they are read.)
    static func isValid(_ value: [UInt8]) -> Bool {
        guard value.count >= headerSize, value[0] == 0x48, value[1] == 0x59, value[2] == 0x4c, value[3] == 0x4c else {
            return false
        }
        return value[4] == sparse || (value[4] == dense && value.count == denseSize)
    }

    // MARK: - The cached count

    /// The cached count, unless a change made it stale.
    static func cachedCount(_ value: [UInt8]) -> UInt64? {
        guard value[15] & 0x80 == 0 else { return nil }
        return (8..<16).reversed().reduce(0) { $0 << 8 | UInt64(value[$1]) }
    }

    static func storeCount(_ count: UInt64, in value: inout [UInt8]) {
        for index in 0..<8 { value[8 + index] = UInt8(truncatingIfNeeded: count >> (8 * index)) }
    }

    /// Marks the cached count stale (its other bits stay, as in Redis).
    static func invalidateCache(_ value: inout [UInt8]) { value[15] |= 0x80 }

    // MARK: - Adding

    /// The register `element` falls in and the value it offers: one plus
    /// the number of zero bits above the register's 14, under MurmurHash64A
    /// with Redis's seed (so both servers put an element in the same place).
    static func hashed(_ element: UnsafeRawBufferPointer) -> (register: Int, count: Int) {
        let hash = murmurHash64A(element, seed: 0xadc8_3b19)
        // The 1 at bit 50 bounds the count at 51.
        let rest = hash >> 14 | 1 << 50
        return (Int(hash & UInt64(registerCount - 1)), rest.trailingZeroBitCount + 1)
    }

    /// Adds `element`: 1 when a register grew, 0 when none did, nil when
    /// the sparse opcodes are corrupt. `sparseLimit` is hll-sparse-max-bytes.
    static func add(_ element: UnsafeRawBufferPointer, to value: inout [UInt8], sparseLimit: Int) -> Int? {
        let (register, count) = hashed(element)
        return raise(register, to: count, in: &value, sparseLimit: sparseLimit)
    }

    /// Raises `register` to `count` if it is lower: 1 when it was, 0 when
    /// not, nil when the sparse opcodes are corrupt. The cache is left as it
    /// is: the caller marks it stale once.
    static func raise(_ register: Int, to count: Int, in value: inout [UInt8], sparseLimit: Int) -> Int? {
        if value[4] == dense { return raiseDense(register, to: count, in: &value) ? 1 : 0 }
        return raiseSparse(register, to: count, in: &value, sparseLimit: sparseLimit)
    }

    private static func raiseDense(_ register: Int, to count: Int, in value: inout [UInt8]) -> Bool {
        value.withUnsafeMutableBufferPointer { bytes in
            let registers = UnsafeMutableBufferPointer(rebasing: bytes[headerSize...])
            guard count > Int(Self.register(register, in: UnsafeBufferPointer(registers))) else { return false }
            setRegister(register, to: UInt8(count), in: registers)
            return true
        }
    }

    /// Redis's hllSparseSet, step by step: find the opcode covering the
    /// register; a VAL already as high changes nothing; a VAL or ZERO of one
    /// register is rewritten in place; any other is split into up to three
    /// (zeros or the old value before, the new VAL, zeros or the old value
    /// after), unless that would pass `sparseLimit`, which turns the value
    /// dense. Then equal VALs next to each other are merged, over the five
    /// opcodes from the one before.
    private static func raiseSparse(
        _ register: Int, to count: Int, in value: inout [UInt8], sparseLimit: Int
    ) -> Int? {
        if count > sparseValueMax { return promote(&value, raising: register, to: count) }
        // The search reads the bytes in place: it runs for every element
        // added, over up to hll-sparse-max-bytes of opcodes.
        let found = value.withUnsafeBufferPointer { bytes -> (Int, Int, Int, Int?)? in
            var position = headerSize
            var first = 0
            var span = 0
            var previous: Int?
            while position < bytes.count {
                span = runLength(bytes, at: position)
                if register <= first + span - 1 { break }
                previous = position
                position += opcodeLength(bytes[position])
                first += span
            }
            guard span > 0, position < bytes.count else { return nil }
            return (position, first, span, previous)
        }
        guard let (position, first, span, previous) = found else { return nil }
        let opcode = value[position]
        let isValue = opcode & 0x80 != 0
        var rewritten = false
        if isValue {
            if valueOf(opcode) >= count { return 0 }
            rewritten = span == 1
        } else {
            rewritten = opcode & 0xc0 == 0 && span == 1
        }
        if rewritten {
            value[position] = valueOpcode(count, run: 1)
        } else {
            let last = first + span - 1
            var sequence: [UInt8] = []
            sequence.reserveCapacity(5)
            // A run of what the opcode held (zeros or its value), before or after.
            func unchanged(_ run: Int) {
                if isValue {
                    sequence.append(valueOpcode(valueOf(opcode), run: run))
                } else {
                    appendZeros(run, to: &sequence)
                }
            }
            if register != first { unchanged(register - first) }
            sequence.append(valueOpcode(count, run: 1))
            if register != last { unchanged(last - register) }
            let oldLength = opcodeLength(opcode)
            let growth = sequence.count - oldLength
            if growth > 0 && value.count + growth > sparseLimit {
                return promote(&value, raising: register, to: count)
            }
            // (An XZERO cut short by the end of a corrupt value is replaced
            // whole. Redis reads its missing byte from past its string:
            // the terminator at first, and after a change there, the byte
            // that change wrote past the end.)
            value.replaceSubrange(position..<min(position + oldLength, value.count), with: sequence)
        }
        mergeValues(in: &value, from: previous ?? headerSize)
        return 1
    }

    /// Merges equal VAL opcodes that sit next to each other, over at most
    /// five opcodes from `start`, as Redis does after each change.
    private static func mergeValues(in value: inout [UInt8], from start: Int) {
        var position = start
        var scans = 5
        while position < value.count && scans > 0 {
            scans -= 1
            let opcode = value[position]
            if opcode & 0x80 == 0 {
                position += opcodeLength(opcode)
                continue
            }
            if position + 1 < value.count, value[position + 1] & 0x80 != 0 {
                let next = value[position + 1]
                let run = Int(opcode & 3) + Int(next & 3) + 2
                if valueOf(opcode) == valueOf(next) && run <= sparseRunMax {
                    value[position + 1] = valueOpcode(valueOf(opcode), run: run)
                    value.remove(at: position)
                    continue
                }
            }
            position += 1
        }
    }

    /// The value turned dense, then `register` raised (a register above 32,
    /// or a sparse form grown too long): 1, or nil when the opcodes are corrupt.
    private static func promote(_ value: inout [UInt8], raising register: Int, to count: Int) -> Int? {
        guard makeDense(&value) else { return nil }
        return raiseDense(register, to: count, in: &value) ? 1 : 0
    }

    /// Turns a sparse value dense (the header kept, its cached count too);
    /// false, leaving it as it was, when its opcodes do not cover exactly
    /// every register. A dense value is left as it is.
    static func makeDense(_ value: inout [UInt8]) -> Bool {
        guard value[4] == sparse else { return true }
        var result = [UInt8](repeating: 0, count: denseSize)
        result.replaceSubrange(0..<headerSize, with: value[0..<headerSize])
        result[4] = dense
        let covered = result.withUnsafeMutableBufferPointer { bytes in
            let registers = UnsafeMutableBufferPointer(rebasing: bytes[headerSize...])
            return walkSparse(value) { first, run, count in
                guard count > 0 else { return }
                for index in first..<first + run { setRegister(index, to: UInt8(count), in: registers) }
            }
        }
        guard covered else { return false }
        value = result
        return true
    }

    // MARK: - Counting

    /// Raises each of `maximum`'s 16,384 registers to `value`'s (PFMERGE,
    /// and PFCOUNT of several keys); false when sparse opcodes are corrupt.
    static func merge(_ value: [UInt8], into maximum: inout [UInt8]) -> Bool {
        if value[4] == dense {
            value.withUnsafeBufferPointer { bytes in
                let registers = UnsafeBufferPointer(rebasing: bytes[headerSize...])
                maximum.withUnsafeMutableBufferPointer { maximum in
                    for index in 0..<registerCount {
                        maximum[index] = max(maximum[index], register(index, in: registers))
                    }
                }
            }
            return true
        }
        return maximum.withUnsafeMutableBufferPointer { maximum in
            walkSparse(value) { first, run, count in
                guard count > 0 else { return }
                for index in first..<first + run { maximum[index] = max(maximum[index], UInt8(count)) }
            }
        }
    }

    /// The estimated count of a valid HyperLogLog, nil when its sparse
    /// opcodes do not cover exactly every register.
    static func count(_ value: [UInt8]) -> UInt64? {
        var histogram = [Int](repeating: 0, count: 64)
        if value[4] == dense {
            value.withUnsafeBufferPointer { bytes in
                let registers = UnsafeBufferPointer(rebasing: bytes[headerSize...])
                histogram.withUnsafeMutableBufferPointer { histogram in
                    for index in 0..<registerCount { histogram[Int(register(index, in: registers))] += 1 }
                }
            }
        } else {
            guard walkSparse(value, { _, run, count in histogram[count] += run }) else { return nil }
        }
        return estimate(histogram)
    }

    /// The estimated count of 16,384 registers held one a byte.
    static func count(registers: [UInt8]) -> UInt64 {
        var histogram = [Int](repeating: 0, count: 64)
        histogram.withUnsafeMutableBufferPointer { histogram in
            registers.withUnsafeBufferPointer { registers in
                for register in registers { histogram[Int(register)] += 1 }
            }
        }
        return estimate(histogram)
    }

    /// Ertl's estimator ("New cardinality estimation algorithms for
    /// HyperLogLog sketches", 2017) over the registers' histogram, in
    /// Redis's order of operations, so that both servers answer the same.
    private static func estimate(_ histogram: [Int]) -> UInt64 {
        let m = Double(registerCount)
        var z = m * tau((m - Double(histogram[maxCount])) / m)
        for count in stride(from: maxCount - 1, through: 1, by: -1) {
            z += Double(histogram[count])
            z *= 0.5
        }
        z += m * sigma(Double(histogram[0]) / m)
        let alpha = 0.721347520444481703680  // 0.5 / ln 2
        let estimate = (alpha * m * m / z).rounded()
        // Registers no hash can make (a value written by hand) can leave
        // nothing to divide by: Redis's llroundl then answers its
        // "invalid" value, the lowest 64-bit integer, and so does kvd.
        guard estimate.isFinite, estimate < 0x1p63 else { return 1 << 63 }
        return UInt64(estimate)
    }

    private static func sigma(_ x: Double) -> Double {
        if x == 1 { return .infinity }
        var (x, y, z) = (x, 1.0, x)
        while true {
            x *= x
            let previous = z
            z += x * y
            y += y
            if z == previous { return z }
        }
    }

    private static func tau(_ x: Double) -> Double {
        if x == 0 || x == 1 { return 0 }
        var (x, y, z) = (x, 1.0, 1 - x)
        while true {
            x = sqrt(x)
            let previous = z
            y *= 0.5
            // Glibc's pow, as Redis calls it, so the last bit agrees too.
            z -= pow(1 - x, 2) * y
            if z == previous { return z / 3 }
        }
    }

    // MARK: - Reading the encodings

    /// Every register, one a byte (PFDEBUG GETREG); nil when sparse
    /// opcodes are corrupt.
    static func registers(_ value: [UInt8]) -> [UInt8]? {
        var result = [UInt8](repeating: 0, count: registerCount)
        return merge(value, into: &result) ? result : nil
    }

    /// A sparse value's opcodes as PFDEBUG DECODE spells them: `z:run`,
    /// `Z:run`, `v:value,run`, a space between. Written as bytes, a few
    /// for each byte of the value (one grown by APPEND can be large).
    static func describeSparse(_ value: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity((value.count - headerSize) * 5)
        value.withUnsafeBufferPointer { bytes in
            var position = headerSize
            while position < bytes.count {
                let opcode = bytes[position]
                let run = runLength(bytes, at: position)
                if !text.isEmpty { text.append(0x20) }
                switch opcode & 0xc0 {
                case 0: text += [0x7a, 0x3a]  // z:
                case 0x40: text += [0x5a, 0x3a]  // Z:
                default:
                    text += [0x76, 0x3a]  // v:
                    appendDecimal(valueOf(opcode), to: &text)
                    text.append(0x2c)
                }
                appendDecimal(run, to: &text)
                position += opcodeLength(opcode)
            }
        }
        return text
    }

    /// Walks a sparse value's opcodes: `body(first, run, value)` for each
    /// run of registers (value 0 for ZERO and XZERO). True when they cover
    /// exactly every register; a run past the last one stops the walk and
    /// makes the value corrupt, as in Redis with the fix for CVE-2025-32023
    /// (redis-server 7.0.15 as Debian ships it refuses a value with an
    /// opcode past the end even where 7.0.15's source would have read it).
    private static func walkSparse(_ value: [UInt8], _ body: (Int, Int, Int) -> Void) -> Bool {
        value.withUnsafeBufferPointer { bytes in
            var position = headerSize
            var index = 0
            while position < bytes.count {
                let opcode = bytes[position]
                let run = runLength(bytes, at: position)
                guard index + run <= registerCount else { return false }
                body(index, run, opcode & 0x80 != 0 ? valueOf(opcode) : 0)
                index += run
                position += opcodeLength(opcode)
            }
            return index == registerCount
        }
    }

    /// The registers the opcode at `position` covers. An XZERO cut short
    /// by the end of the value reads a zero second byte (Redis reads its
    /// string's terminator there, or what a change wrote past its end).
    @inline(__always)
    private static func runLength(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Int {
        let opcode = bytes[position]
        switch opcode & 0xc0 {
        case 0: return Int(opcode & 0x3f) + 1
        case 0x40:
            let low = position + 1 < bytes.count ? Int(bytes[position + 1]) : 0
            return (Int(opcode & 0x3f) << 8 | low) + 1
        default: return Int(opcode & 3) + 1
        }
    }

    @inline(__always)
    private static func opcodeLength(_ opcode: UInt8) -> Int { opcode & 0xc0 == 0x40 ? 2 : 1 }

    @inline(__always)
    private static func valueOf(_ opcode: UInt8) -> Int { Int(opcode >> 2 & 0x1f) + 1 }

    @inline(__always)
    private static func valueOpcode(_ value: Int, run: Int) -> UInt8 { UInt8(0x80 | (value - 1) << 2 | (run - 1)) }

    /// A run of `run` zero registers: ZERO up to 64, XZERO above.
    private static func appendZeros(_ run: Int, to sequence: inout [UInt8]) {
        if run > zeroRunMax {
            sequence.append(UInt8(0x40 | (run - 1) >> 8))
            sequence.append(UInt8(truncatingIfNeeded: run - 1))
        } else {
            sequence.append(UInt8(run - 1))
        }
    }

    // MARK: - Dense registers

    /// Register `index` of dense `registers` (12,288 bytes): six bits from
    /// bit 6 x index, low bits first, maybe across two bytes.
    @inline(__always)
    static func register(_ index: Int, in registers: UnsafeBufferPointer<UInt8>) -> UInt8 {
        let byte = index * 6 / 8
        let shift = index * 6 & 7
        let low = UInt(registers[byte]) >> shift
        // The last register ends in its first byte (Redis reads the
        // string's terminator there).
        let high = byte + 1 < registers.count ? UInt(registers[byte + 1]) << (8 - shift) : 0
        return UInt8((low | high) & 63)
    }

    @inline(__always)
    static func setRegister(_ index: Int, to count: UInt8, in registers: UnsafeMutableBufferPointer<UInt8>) {
        let byte = index * 6 / 8
        let shift = index * 6 & 7
        let count = UInt(count)
        registers[byte] = UInt8(truncatingIfNeeded: UInt(registers[byte]) & ~(63 << shift) | count << shift)
        if byte + 1 < registers.count {
            registers[byte + 1] = UInt8(
                truncatingIfNeeded: UInt(registers[byte + 1]) & ~(63 >> (8 - shift)) | count >> (8 - shift))
        }
    }

    // MARK: - The hash

    /// MurmurHash64A, Austin Appleby's 64-bit MurmurHash2, reading its
    /// blocks little-endian as Redis's endian-neutral version does.
    static func murmurHash64A(_ key: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let m: UInt64 = 0xc6a4_a793_5bd1_e995
        var hash = seed ^ (UInt64(key.count) &* m)
        let blocks = key.count / 8
        for block in 0..<blocks {
            var k = UInt64(littleEndian: key.loadUnaligned(fromByteOffset: block * 8, as: UInt64.self))
            k &*= m
            k ^= k >> 47
            k &*= m
            hash ^= k
            hash &*= m
        }
        let tail = key.count & 7
        if tail > 0 {
            for index in 0..<tail { hash ^= UInt64(key[blocks * 8 + index]) << (8 * index) }
            hash &*= m
        }
        hash ^= hash >> 47
        hash &*= m
        hash ^= hash >> 47
        return hash
    }
}
