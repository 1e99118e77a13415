// HyperLogLogTests.swift: what the golden replies (Redis 7.0.15's bytes for
// PFADD, PFCOUNT, PFMERGE, PFDEBUG and the values they leave) and
// tools/hll-differential.py (thousands of seeded operations and corrupt
// values against a real redis-server) do not show: the sparse form, opcode
// by opcode, always holds the registers a dense one does and never
// outgrows hll-sparse-max-bytes; the estimate stays within Redis's own
// bound; PFADD counts a change per register it grows, as Redis's dirty.
import Testing

@testable import KVServer

@Suite struct HyperLogLogTests {
    /// Adds `element` (its decimal bytes) to `value`.
    private func add(_ element: Int, to value: inout [UInt8], limit: Int = 3000) -> Int? {
        Array(String(element).utf8).withUnsafeBytes { HyperLogLog.add($0, to: &value, sparseLimit: limit) }
    }

    @Test(arguments: [0, 40, 300, 3000])
    func theSparseFormHoldsWhatTheDenseOneDoesAndNeverOutgrowsItsLimit(limit: Int) {
        var sparse = HyperLogLog.empty()
        var dense = HyperLogLog.empty()
        #expect(HyperLogLog.makeDense(&dense))
        var turned: Int?
        for element in 0..<6000 {
            let grewSparse = add(element, to: &sparse, limit: limit)
            let grewDense = add(element, to: &dense, limit: limit)
            #expect(grewSparse == grewDense, "element \(element): sparse \(String(describing: grewSparse))")
            if sparse[4] == HyperLogLog.sparse {
                // An empty value (18 bytes) is made whatever the limit.
                #expect(sparse.count <= max(limit, 18), "element \(element): \(sparse.count) bytes")
            } else if turned == nil {
                turned = element
                #expect(sparse.count == HyperLogLog.denseSize)
            }
            if element % 500 == 0 || turned == element {
                #expect(HyperLogLog.registers(sparse) == HyperLogLog.registers(dense), "element \(element)")
                #expect(HyperLogLog.count(sparse) == HyperLogLog.count(dense))
            }
        }
        #expect(turned != nil, "6,000 elements should pass \(limit) bytes")
    }

    @Test func theEstimateStaysWithinSixStandardErrorsAsRedisChecksIt() {
        var value = HyperLogLog.empty()
        let relativeError = 1.04 / Double(HyperLogLog.registerCount).squareRoot()
        var checkpoint = 10
        for element in 1...100_000 {
            _ = add(element, to: &value)
            guard element == checkpoint else { continue }
            let estimate = Int(HyperLogLog.count(value)!)
            let allowed = checkpoint == 10 ? 1 : Int((relativeError * 6 * Double(checkpoint)).rounded(.up))
            #expect(abs(estimate - checkpoint) <= allowed, "\(checkpoint) elements estimated as \(estimate)")
            checkpoint *= 10
        }
        #expect(HyperLogLog.count(HyperLogLog.empty()) == 0)
    }

    @Test func aCorruptSparseValueIsRefusedWhereverItIsRead() {
        var value = HyperLogLog.empty()
        value.append(0x80)  // a VAL past the last register
        var registers = [UInt8](repeating: 0, count: HyperLogLog.registerCount)
        #expect(HyperLogLog.count(value) == nil)
        #expect(!HyperLogLog.merge(value, into: &registers))
        let before = value
        #expect(!HyperLogLog.makeDense(&value))
        #expect(value == before)
        value.removeLast(2)  // the XZERO cut short: it reads 0x3f00 + 1 registers, 255 short of the end
        #expect(HyperLogLog.count(value) == nil)
        let register = Array("1".utf8).withUnsafeBytes { HyperLogLog.hashed($0).register }
        // Inside what the opcodes cover, a split; past it, a refusal. Either
        // way the value still does not cover every register.
        #expect(add(1, to: &value) == (register < 0x3f01 ? 1 : nil))
        #expect(HyperLogLog.count(value) == nil)
    }

    /// The registers a sparse value's opcodes cover, read apart from the
    /// code under test; nil when they run past the last one.
    private func coverage(_ value: [UInt8]) -> Int? {
        var (position, covered) = (16, 0)
        while position < value.count {
            let opcode = value[position]
            switch opcode >> 6 {
            case 0: covered += Int(opcode & 0x3f) + 1
            case 1: covered += (Int(opcode & 0x3f) << 8 | Int(position + 1 < value.count ? value[position + 1] : 0)) + 1
            default: covered += Int(opcode & 3) + 1
            }
            if covered > 16384 { return nil }
            position += opcode >> 6 == 1 ? 2 : 1
        }
        return covered
    }

    @Test func hostileValuesAreAnsweredWithoutTrappingAndRefusedExactlyWhenCorrupt() {
        var random = SeededGenerator(seed: 0x4C4C)
        for trial in 0..<400 {
            var value = HyperLogLog.empty()
            for element in 0..<Int.random(in: 0...600, using: &random) { _ = add(trial * 1000 + element, to: &value) }
            if Bool.random(using: &random) { _ = HyperLogLog.makeDense(&value) }
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    value[Int.random(in: 16..<value.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 1: value.removeLast(Int.random(in: 0..<(value.count - 16), using: &random))
            default:
                value += (0..<Int.random(in: 1...5, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            }
            guard HyperLogLog.isValid(value) else {
                #expect(value[4] == HyperLogLog.dense && value.count != HyperLogLog.denseSize)
                continue
            }
            let whole = value[4] == HyperLogLog.dense || coverage(value) == 16384
            #expect((HyperLogLog.count(value) != nil) == whole, "trial \(trial)")
            var registers = [UInt8](repeating: 0, count: 16384)
            #expect(HyperLogLog.merge(value, into: &registers) == whole)
            #expect((HyperLogLog.registers(value) != nil) == whole)
            _ = HyperLogLog.describeSparse(value)
            var dense = value
            #expect(HyperLogLog.makeDense(&dense) == whole)
            for element in 0..<20 { _ = add(-element - 1, to: &value) }
            if value[4] == HyperLogLog.dense { #expect(value.count == HyperLogLog.denseSize) }
        }
    }

    @Test func pfaddCountsAChangePerRegisterItGrowsAsRedisDoes() {
        let dispatcher = connected()
        var changes = dispatcher.databases.fence.changes
        func counted() -> Int {
            defer { changes = dispatcher.databases.fence.changes }
            return dispatcher.databases.fence.changes - changes
        }
        // a, b and c fall in three registers (PFDEBUG DECODE: v:1,1 v:2,1 v:1,1).
        #expect(run(dispatcher, "PFADD", "h", "a", "b", "c") == ":1\r\n")
        #expect(counted() == 4)  // the key made, and three registers
        #expect(run(dispatcher, "PFADD", "h", "a", "b", "c") == ":0\r\n")
        #expect(counted() == 0)
        #expect(run(dispatcher, "PFCOUNT", "h") == ":3\r\n")
        #expect(counted() == 1)  // the cached count written back
        #expect(run(dispatcher, "PFCOUNT", "h") == ":3\r\n")
        #expect(counted() == 0)
    }
}
