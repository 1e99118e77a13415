// InvocationRecordPoolTests.swift: posted invocations reuse their loop's
// records, oldest first and only `lag` calls later; a record in the pool
// keeps neither its target nor its arguments alive; a full pool releases
// what it cannot keep; a bounded mailbox's loop has no pool; and calls from
// several threads each run once, in each thread's order, through it.
import CLibevent
import Glibc
import Synchronization
import TestKit
import Testing

@testable import MainLoop

/// Deinitialized objects, counted (each test has its own tag).
private let deinits = Locked<[String: Int]>([:])

/// A target or argument that counts its deinit under `tag`.
private final class Counted: Invocable, Sendable {
    static let methods = MethodTable<Counted>()
        .method("take:", Counted.take)
        .method("note:from:", Counted.note)
        .method("ping", Counted.ping)
        .method("sum:and:and:", Counted.sum)
    let tag: String
    let notes = Locked<[Int: [Int]]>([:])
    init(_ tag: String) { self.tag = tag }
    deinit { deinits.withValue { $0[tag, default: 0] += 1 } }
    func take(_ argument: any AnyObject & Sendable) {}
    func note(_ value: Int, _ producer: Int) { notes.withValue { $0[producer, default: []].append(value) } }
    func ping() { notes.withValue { $0[-1, default: []].append(0) } }
    func sum(_ a: Int, _ b: Int, _ c: Int) { notes.withValue { $0[-3, default: []].append(a + b + c) } }
}

/// A weak reference, to see whether an object was freed.
private final class Weak<T: AnyObject> {
    weak var object: T?
    init(_ object: T) { self.object = object }
}

private func deinitCount(_ tag: String) -> Int { deinits.withValue { $0[tag] ?? 0 } }

@Suite(.timeLimit(.minutes(5))) struct InvocationRecordPoolTests {
    @Test func aRecordOfTwoArgumentsStaysWithinGlibcsFastBins() throws {
        #expect(MemoryLayout<InvocationRecordPool?>.size == 8)
        #expect(MemoryLayout<InvocationRecordHeader>.stride == 40)
        let record = try [(any Sendable)?](arrayLiteral: 1, 2).withUnsafeBufferPointer { arguments in
            try InvocationRecord.make(
                on: Counted("layout"), selector: "note:from:", arguments: arguments, pool: InvocationRecordPool?.none)
        }
        // A 120-byte request is a 128-byte block: a fast bin's largest.
        #expect(malloc_usable_size(Unmanaged.passUnretained(record).toOpaque()) <= 120)
    }

    @Test func onlyAnUnboundedMailboxsLoopHasAPool() throws {
        let unbounded = try EventLoop(name: "unbounded")
        let bounded = try EventLoop(name: "bounded", mailboxCapacity: 8)
        #expect(unbounded.recordPool != nil)
        #expect(bounded.recordPool == nil)
    }

    // Watched: every job runs through the monitor (a slow-job handler is set).
    @Test(arguments: [false, true]) func postedCallsReuseTheOldestRecordOnceLagNewerOnesRan(watched: Bool) throws {
        try withSpawnedLoop("pool-reuse") { loop in
            if watched { try loop.onSlowJob(threshold: .seconds(60)) { _ in } }
            let pool = try #require(loop.recordPool)
            var records: [ObjectIdentifier] = []
            let total = 300
            for index in 0..<total {
                // A target and an argument of their own, which nothing else holds.
                let record = try [(any Sendable)?](arrayLiteral: Counted("reuse-argument-\(watched)"))
                    .withUnsafeBufferPointer {
                        try InvocationRecord.make(
                            on: Counted("reuse-target-\(watched)"), selector: "take:", arguments: $0, pool: pool)
                    }
                records.append(ObjectIdentifier(record))
                _ = try loop.deliver(record, .post(.refuse))
                // Ran and handed back before the next call is made.
                #expect(try loop.postAndWait { true }, "call \(index)")
            }
            // The first 144 calls (the lag, 128, and one publication of 16)
            // found nothing old enough; every later one refilled the record
            // of the call 144 before it.
            let lag = Int(InvocationRecordPool.lag + InvocationRecordPool.publishEvery)
            #expect(Set(records[0..<lag]).count == lag)
            #expect(Array(records[lag...]) == Array(records[0..<(total - lag)]))
            // The pool kept none of them alive.
            #expect(deinitCount("reuse-target-\(watched)") == total)
            #expect(deinitCount("reuse-argument-\(watched)") == total)
        }
    }

    @Test func aFullPoolReleasesTheRecordsItCannotKeep() throws {
        try withSpawnedLoop("pool-full") { loop in
            let pool = try #require(loop.recordPool)
            // Made before any ran, so none is taken from the pool: every one
            // is handed back to it, and it keeps only its capacity.
            let total = InvocationRecordPool.capacity + 100
            let records = try (0..<total).map { _ in
                try [(any Sendable)?](arrayLiteral: 1).withUnsafeBufferPointer {
                    try InvocationRecord.make(on: Counted("full-target"), selector: "take:", arguments: $0, pool: pool)
                }
            }
            let watched = records.map { Weak($0) }
            for record in consume records { _ = try loop.deliver(record, .post(.refuse)) }
            #expect(try loop.postAndWait { true })
            #expect(pool.available == InvocationRecordPool.capacity)
            #expect(deinitCount("full-target") == total)
            // The pool keeps the first it was handed; the rest were freed.
            let alive = watched.map { $0.object != nil }
            let kept = InvocationRecordPool.capacity
            #expect(alive == Array(repeating: true, count: kept) + Array(repeating: false, count: total - kept))
        }
    }

    @Test func aLoopsPoolFreesEveryRecordItHoldsWhenTheLoopGoes() throws {
        var watched: [Weak<InvocationRecord>] = []
        weak var gone: EventLoop?
        do {
            let loop = try EventLoop.spawn(name: "pool-destroy")
            gone = loop
            let pool = try #require(loop.recordPool)
            // 20 handed back: 16 published, 4 not yet.
            let records = try (0..<20).map { _ in
                try [(any Sendable)?](arrayLiteral: 1).withUnsafeBufferPointer {
                    try InvocationRecord.make(on: Counted("destroy"), selector: "take:", arguments: $0, pool: pool)
                }
            }
            watched = records.map { Weak($0) }
            for record in consume records { _ = try loop.deliver(record, .post(.refuse)) }
            #expect(try loop.postAndWait { true })
            #expect(pool.available == 16)
            #expect(watched.allSatisfy { $0.object != nil })
            stopAndWait(loop)
        }
        #expect(eventually { gone == nil }, "the stopped loop was never freed")
        #expect(watched.allSatisfy { $0.object == nil })
    }

    @Test func callsOfUpToTwoArgumentsGoBackToThePoolAndLongerOnesDoNot() throws {
        for (selector, arguments, pooled): (Selector, [(any Sendable)?], Bool) in [
            ("ping", [] as [(any Sendable)?], true), ("take:", [Counted("one")], true),
            ("note:from:", [1, 2], true), ("sum:and:and:", [1, 2, 3], false),
        ] {
            try withSpawnedLoop("pool-arguments") { loop in
                let target = Counted("arguments")
                for _ in 0..<200 {
                    try target.performSelector(selector, on: loop, waitUntilDone: false, withArguments: arguments)
                    #expect(try loop.postAndWait { true })
                }
                #expect((try #require(loop.recordPool).available > 0) == pooled, "\(selector)")
            }
        }
    }

    @Test func aLoopBoundValuesCallsGoBackToThePool() throws {
        try withSpawnedLoop("pool-loopbound") { loop in
            let bound = LoopBound(Counted("bound"), on: loop)
            for value in 0..<300 {
                try bound.performSelector("note:from:", waitUntilDone: false, withObjects: value, 7)
                #expect(try loop.postAndWait { true })
            }
            #expect(try bound.postAndWait { $0.notes.current[7] } == Array(0..<300))
            #expect(try #require(loop.recordPool).available > 0)
        }
    }

    @Test func callsFromFourThreadsRunOnceEachInEachThreadsOrder() throws {
        try withSpawnedLoop("pool-threads") { loop throws in
            let target = Counted("threads")
            let perThread = 5_000
            let producers = (0..<4).map { producer in
                TestThread {
                    for value in 0..<perThread {
                        try! target.performSelector(
                            "note:from:", on: loop, waitUntilDone: false, withObjects: value, producer)
                    }
                }
            }
            for producer in producers { producer.join("a producer") }
            #expect(try loop.postAndWait { true })
            let notes = target.notes.current
            for producer in 0..<4 {
                #expect(notes[producer] == Array(0..<perThread), "producer \(producer)")
            }
            #expect(try #require(loop.recordPool).available > 0, "no record went back to the pool")
        }
    }
}
