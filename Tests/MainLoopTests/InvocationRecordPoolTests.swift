// InvocationRecordPoolTests.swift: the records a performSelector refills
// instead of allocating: a record is handed out only to whoever holds it
// alone, oldest first; one that ran keeps nothing of its call alive; and a
// refilled record carries its own call and no part of the one before.
import TestKit
import Testing

@testable import MainLoop

/// A target nobody else holds: what a pooled record must let go of.
private final class PoolTarget: Invocable, Sendable {
    static let methods = MethodTable<PoolTarget>().method("take:and:", PoolTarget.take)
    func take(_ first: PoolToken, _ second: PoolToken) {}
}

private final class PoolToken: Sendable {}

/// Records what each call received, on its loop only.
private final class CallLog: Invocable, @unchecked Sendable {
    // `@unchecked Sendable`: `calls` is touched on the loop only.
    static let methods = MethodTable<CallLog>()
        .method("note:from:", CallLog.note)
        .method("mark:", CallLog.mark)
    var calls: [[Int]] = []
    func note(_ value: Int, _ thread: Int?) { calls.append([value, thread ?? -1]) }
    func mark(_ value: Int) { calls.append([-2, value]) }
}

@Suite(.timeLimit(.minutes(5))) struct InvocationRecordPoolTests {
    /// A record for `CallLog.mark:`, made as a performSelector makes it.
    private func record() throws -> InvocationRecord {
        let arguments: [(any Sendable)?] = [1]
        return try arguments.withUnsafeBufferPointer { arguments in
            try InvocationRecord.make(on: CallLog(), selector: "mark:", arguments: arguments)
        }
    }

    /// A record given to `pool`, which then holds it alone.
    private func givenAway(to pool: InvocationRecordPool) throws -> ObjectIdentifier {
        let made = try record()
        pool.give(made)
        return ObjectIdentifier(made)
    }

    @Test func aPoolHandsBackItsRecordsOldestFirstAndOnlyToWhoeverHoldsThemAlone() throws {
        let pool = InvocationRecordPool()
        let first = try givenAway(to: pool)
        let second = try givenAway(to: pool)
        // Only the pool holds them now.
        #expect(pool.take().map(ObjectIdentifier.init) == first)
        #expect(pool.take().map(ObjectIdentifier.init) == second)
        #expect(pool.take() == nil)

        // Still held (as by the job that ran it): not handed out, and the
        // pool lets go of it, so its holder's is the one reference left.
        var held = try record()
        pool.give(held)
        #expect(pool.take() == nil)
        #expect(isKnownUniquelyReferenced(&held))
    }

    @Test func aFullPoolKeepsNoReferenceToWhatItCouldNotTake() throws {
        let pool = InvocationRecordPool()
        var given: [ObjectIdentifier] = []
        for _ in 0..<InvocationRecordPool.capacity { given.append(try givenAway(to: pool)) }
        var extra = try record()
        pool.give(extra)
        #expect(isKnownUniquelyReferenced(&extra))
        var taken: [ObjectIdentifier] = []
        while let record = pool.take() { taken.append(ObjectIdentifier(record)) }
        #expect(taken == given)
    }

    // With a pool of the test's own, so that no other test's calls refill
    // the record meanwhile.
    @Test func aRecordThatRanLetsGoOfItsTargetAndArgumentsThoughThePoolKeepsIt() throws {
        let pool = InvocationRecordPool()
        weak var target: PoolTarget?
        weak var first: PoolToken?
        weak var second: PoolToken?
        let record = try { () throws -> InvocationRecord in
            let made = PoolTarget(), one = PoolToken(), two = PoolToken()
            target = made
            first = one
            second = two
            let arguments: [(any Sendable)?] = [one, two]
            return try arguments.withUnsafeBufferPointer { arguments in
                try InvocationRecord.make(on: made, selector: "take:and:", arguments: arguments, pool: pool)
            }
        }()
        #expect(target != nil && first != nil && second != nil)
        _ = try record.invoke()
        record.recycle(into: pool)
        #expect(target == nil)
        #expect(first == nil)
        #expect(second == nil)
        #expect(pool.take() == nil)  // the test still holds it
    }

    @Test func aRefilledRecordHoldsItsNewCallAndReleasesItWhenItNeverRuns() throws {
        let pool = InvocationRecordPool()
        func make(_ target: PoolTarget, _ one: PoolToken, _ two: PoolToken) throws -> InvocationRecord {
            let arguments: [(any Sendable)?] = [one, two]
            return try arguments.withUnsafeBufferPointer { arguments in
                try InvocationRecord.make(on: target, selector: "take:and:", arguments: arguments, pool: pool)
            }
        }
        let used: ObjectIdentifier
        do {
            let record = try make(PoolTarget(), PoolToken(), PoolToken())
            _ = try record.invoke()
            record.recycle(into: pool)
            used = ObjectIdentifier(record)
        }
        weak var target: PoolTarget?
        weak var first: PoolToken?
        weak var second: PoolToken?
        do {
            let made = PoolTarget(), one = PoolToken(), two = PoolToken()
            target = made
            first = one
            second = two
            let refilled = try make(made, one, two)
            #expect(ObjectIdentifier(refilled) == used)
            // The new call, whole: its target and both its arguments.
            #expect((refilled.invocation?.target as? PoolTarget) === made)
            #expect(
                refilled.invocation?.arguments.map { ($0 as? PoolToken).map(ObjectIdentifier.init) }
                    == [ObjectIdentifier(one), ObjectIdentifier(two)])
        }
        // Dropped unrun, as a stopped loop drops what it never ran.
        #expect(target == nil)
        #expect(first == nil)
        #expect(second == nil)
    }

    // Calls of one and two arguments, on a Sendable target and on a
    // LoopBound value, from two threads at once, so that records are
    // refilled for a call of another shape, target or thread than the one
    // they last carried, and with a nil argument where a value was. Each
    // value names its thread (millions) and its place in that thread's order.
    @Test func aRefilledRecordCarriesItsOwnCallAndNothingOfTheLastOne() throws {
        let perThread = 20_000
        try withSpawnedLoop("pool-refill") { loop in
            let log = CallLog()
            let tally = LoopBound(Tally(), on: loop)
            let threads = (0..<2).map { thread in
                TestThread {
                    for index in 0..<perThread {
                        let value = thread * 1_000_000 + index
                        switch index % 3 {
                        case 0:
                            try! log.performSelector(
                                "note:from:", on: loop, waitUntilDone: false, withObjects: value, thread)
                        case 1:
                            try! log.performSelector(
                                "note:from:", on: loop, waitUntilDone: false, withObjects: value, nil)
                        default:
                            try! tally.performSelector("add:", waitUntilDone: false, withObjects: value)
                        }
                    }
                }
            }
            threads.join("the posting threads")
            let calls = try loop.postAndWait { log.calls }
            let added = try tally.postAndWait { $0.order }
            let noted = (0..<perThread).filter { $0 % 3 != 2 }
            #expect(calls.count == 2 * noted.count)
            for thread in 0..<2 {
                let mine = calls.filter { $0[0] / 1_000_000 == thread }
                #expect(mine.map { $0[0] % 1_000_000 } == noted)
                #expect(mine.map { $0[1] } == noted.map { $0 % 3 == 0 ? thread : -1 })
                #expect(
                    added.filter { $0 / 1_000_000 == thread }.map { $0 % 1_000_000 }
                        == (0..<perThread).filter { $0 % 3 == 2 })
            }
        }
    }
}
