// KeyspaceTests.swift: the keyspace's expiry index: each key in it at most
// once, however often its TTL is refreshed, and expiry that removes exactly
// the keys that are due; keys longer than any stored are absent unhashed,
// and that bound moves with the keys (SWAPDB).
import Glibc
import Testing

@testable import KVServer

@Suite struct KeyspaceTests {
    @Test func refreshingATTLAMillionWaysKeepsOneIndexEntry() {
        let keyspace = Keyspace()
        let key = Array("k".utf8)
        let later = unixMilliseconds() + 100_000
        for i in 0..<100_000 {
            if i % 2 == 0 {
                keyspace.set(key, [1], expiresAt: later + Int64(i))
            } else {
                keyspace.setExpiry(key, later + Int64(i))
            }
        }
        #expect(keyspace.count == 1)
        #expect(keyspace.expiresCount == 1, "the expiry index grew with every refresh")
        keyspace.setExpiry(key, nil)
        #expect(keyspace.expiresCount == 0)
        keyspace.set(key, [1], expiresAt: later)
        #expect(keyspace.expiresCount == 1)
        #expect(keyspace.remove(key))
        #expect(keyspace.expiresCount == 0 && keyspace.count == 0)
    }

    @Test func aKeyLongerThanAnyStoredIsAbsentAndTheBoundFollowsSwaps() {
        let small = Keyspace(), large = Keyspace()
        small.set(Array("abc".utf8), [1], expiresAt: nil)
        #expect(small.lookup(Array("abcd".utf8), now: 0) == nil)
        #expect(small.lookup(Array("abc".utf8), now: 0)?.value == [1])
        let long = [UInt8](repeating: 7, count: 1_000)
        large.set(long, [2], expiresAt: nil)
        #expect(large.lookup(long, now: 0)?.value == [2])
        small.swapContents(with: large)
        #expect(small.lookup(long, now: 0)?.value == [2], "the long key was not found after SWAPDB")
        #expect(large.lookup(Array("abc".utf8), now: 0)?.value == [1])
        #expect(small.remove(long) && small.lookup(long, now: 0) == nil)
    }

    @Test func theActiveCycleRemovesDueKeysAndKeepsTheRest() {
        let keyspace = Keyspace()
        let now = unixMilliseconds()
        for i in 0..<10_000 { keyspace.set(Array("due:\(i)".utf8), [1], expiresAt: now - 1) }
        for i in 0..<100 { keyspace.set(Array("later:\(i)".utf8), [1], expiresAt: now + 100_000) }
        for i in 0..<100 { keyspace.set(Array("never:\(i)".utf8), [1], expiresAt: nil) }
        keyspace.expireCycle(budget: 1_000_000_000)
        #expect(keyspace.count == 200, "one cycle left \(keyspace.count - 200) due keys behind")
        #expect(keyspace.expiresCount == 100)
        #expect(keyspace.expiredKeys == 10_000)
        // The queue was compacted on the way (100 live handles of 10,100):
        // the keys it renumbered are still found through their new handles.
        for i in 0..<100 { keyspace.setExpiry(Array("later:\(i)".utf8), now - 1) }
        keyspace.expireCycle(budget: 1_000_000_000)
        #expect(keyspace.count == 100 && keyspace.expiresCount == 0)
    }

    @Test func aCycleRemovesEveryDueKeyAndNoOtherAmongInterleavedDeadlines() {
        // make hostile's steady short TTLs: the previous burst is due while
        // the last is not, and sampling left a tail of the previous behind.
        let keyspace = Keyspace()
        let now = unixMilliseconds()
        for i in 0..<4_000 {
            keyspace.set(
                Array("s\(i)".utf8), [1], expiresAt: i % 2 == 0 ? now - Int64(i % 7) : now + 100_000 + Int64(i))
        }
        for i in stride(from: 1, to: 4_000, by: 4) { keyspace.setExpiry(Array("s\(i)".utf8), now - 5) }
        #expect(keyspace.expireCycle(budget: 1_000_000_000) == false)
        #expect(keyspace.count == 1_000, "\(keyspace.count) keys left, 1,000 not due")
        #expect(keyspace.expiresCount == 1_000)
        for i in 0..<4_000 {
            let present = keyspace.lookup(Array("s\(i)".utf8), now: now) != nil
            #expect(present == (i % 4 == 3), "key s\(i)")
        }
    }

    // After a storm the table gives its room back, and every key left is
    // still found, expires when due, and is returned by SCAN.
    @Test func aSparseTableShrinksAndKeepsItsKeysWhole() {
        let keyspace = Keyspace()
        let now = unixMilliseconds()
        for i in 0..<20_000 { keyspace.set(Array("k\(i)".utf8), [1], expiresAt: i < 100 ? now + 100_000 : now - 1) }
        let peak = keyspace.tableCapacity
        // Until nothing is due: one cycle's budget is time, which a sanitizer
        // on a loaded machine can spend before 19,900 keys are gone.
        while keyspace.expireCycle(budget: 1_000_000_000) {}
        #expect(keyspace.count == 100 && keyspace.tableCapacity == peak, "the table shrank by itself")
        keyspace.shrinkIfSparse()
        #expect(keyspace.tableCapacity < peak / 8, "capacity \(keyspace.tableCapacity) of \(peak)")
        for i in 0..<100 { #expect(keyspace.lookup(Array("k\(i)".utf8), now: now)?.value == [1]) }
        let (next, scanned) = keyspace.scanSlots(cursor: 0, count: 1_000)
        #expect(next == 0 && scanned.count == 100)
        for i in 0..<50 { keyspace.setExpiry(Array("k\(i)".utf8), now - 1) }
        while keyspace.expireCycle(budget: 1_000_000_000) {}
        #expect(keyspace.count == 50 && keyspace.expiresCount == 50)
    }
}
