// EvictionTests.swift: maxmemory, with memory counted by the test (100
// bytes a key) instead of the heap, so each test knows exactly how many
// keys must go: which ones each policy evicts, that noeviction and an
// exhausted volatile policy refuse writes with Redis's OOM, and Redis's
// rules for MULTI, EXEC, DISCARD and scripts over the limit; the access
// word behind OBJECT IDLETIME and FREQ, and what uses a key and what
// does not. The heap's own count is checked against redis-server by
// tools/eviction-check.py.
import Glibc
import Testing

@testable import KVServer

/// Databases whose memory is 100 bytes a key, limited to `keys` keys.
private func limited(to keys: Int, _ policy: EvictionPolicy) -> (Databases, Evictor) {
    let databases = Databases()
    databases.memory.maxmemory = keys * 100
    databases.memory.policy = policy
    databases.memory.tenacity = 100  // no time limit: a slow machine still evicts all
    let evictor = Evictor(usedMemory: { databases.keyCount * 100 })
    return (databases, evictor)
}

private func key(_ i: Int) -> [UInt8] { Array("k\(i)".utf8) }

@Suite struct EvictionTests {
    @Test func allKeysLRUEvictsTheKeysUsedLongestAgo() {
        let (databases, evictor) = limited(to: 50, .allKeysLRU)
        let keyspace = databases[0]
        let now = unixMilliseconds()
        databases.clock.fixed = now - 100_000
        for i in 0..<100 { keyspace.set(key(i), [1], expiresAt: nil) }
        databases.clock.fixed = now
        for i in 50..<100 { #expect(keyspace.lookup(key(i), now: now) != nil) }
        databases.memory.samples = 64
        #expect(evictor.perform(databases) == .ok)
        #expect(keyspace.count == 50 && evictor.evictedKeys == 50)
        let survivors = (0..<100).filter { keyspace.lookup(key($0), now: now, touching: false) != nil }
        #expect(survivors == Array(50..<100), "kept \(survivors)")
    }

    @Test func typeTTLExistsAndObjectAreNotUsesButTouchGetAndSetAre() {
        let dispatcher = connected()
        run(dispatcher, "SET", "k", "v")
        for use in [["GET", "k"], ["TOUCH", "k"], ["SET", "k", "w"], ["APPEND", "k", "x"], ["EXPIRE", "k", "100"]] {
            #expect(restore(dispatcher, "k", idleSeconds: 1000) == "+OK\r\n")
            for look in [["TYPE", "k"], ["TTL", "k"], ["PTTL", "k"], ["EXISTS", "k"], ["OBJECT", "ENCODING", "k"]] {
                run(dispatcher, bytes: look.map { Array($0.utf8) })
            }
            let idle = run(dispatcher, "OBJECT", "IDLETIME", "k")
            #expect(idle == ":1000\r\n" || idle == ":1001\r\n", "\(idle)")
            run(dispatcher, bytes: use.map { Array($0.utf8) })
            #expect(run(dispatcher, "OBJECT", "IDLETIME", "k") == ":0\r\n", "\(use)")
        }
    }

    @Test func volatilePoliciesEvictOnlyKeysWithAnExpiryThenRefuse() {
        for policy in [EvictionPolicy.volatileLRU, .volatileLFU, .volatileRandom, .volatileTTL] {
            let (databases, evictor) = limited(to: 60, policy)
            let keyspace = databases[0]
            let later = unixMilliseconds() + 1_000_000
            for i in 0..<100 { keyspace.set(key(i), [1], expiresAt: i % 2 == 0 ? later + Int64(i) : nil) }
            // 50 volatile keys, 40 to go: they are the only ones that may.
            #expect(evictor.perform(databases) == .ok, "\(policy)")
            #expect(keyspace.count == 60 && keyspace.expiresCount == 10, "\(policy)")
            for i in stride(from: 1, to: 100, by: 2) { #expect(keyspace.lookup(key(i), now: 0) != nil, "\(policy)") }
            databases.memory.maxmemory = 30 * 100
            #expect(evictor.perform(databases) == .failed, "\(policy)")
            #expect(keyspace.count == 50 && keyspace.expiresCount == 0, "\(policy)")
        }
    }

    @Test func volatileTTLEvictsTheNearestDeadlinesFirst() {
        let (databases, evictor) = limited(to: 50, .volatileTTL)
        databases.memory.samples = 64
        let keyspace = databases[0]
        let later = unixMilliseconds() + 1_000_000
        for i in 0..<100 { keyspace.set(key(i), [1], expiresAt: later + Int64(i) * 1000) }
        #expect(evictor.perform(databases) == .ok)
        let survivors = (0..<100).filter { keyspace.lookup(key($0), now: 0, touching: false) != nil }
        #expect(survivors == Array(50..<100), "kept \(survivors)")
    }

    @Test func allKeysLFUKeepsTheKeysUsedMostOften() {
        let (databases, evictor) = limited(to: 50, .allKeysLFU)
        databases.memory.samples = 64
        databases.memory.lfuLogFactor = 0  // every use counts: no coin to toss
        let keyspace = databases[0]
        let now = unixMilliseconds()
        databases.clock.fixed = now
        for i in 0..<100 { keyspace.set(key(i), [1], expiresAt: nil) }
        for i in 0..<50 {
            for _ in 0..<10 { #expect(keyspace.lookup(key(2 * i), now: now) != nil) }
        }
        let counter = databases.memory.frequency(keyspace.lookup(key(0), now: now, touching: false)!.access, now: now)
        #expect(counter == MemoryPolicy.lfuInitialCount + 10)
        #expect(evictor.perform(databases) == .ok)
        let survivors = (0..<100).filter { keyspace.lookup(key($0), now: now, touching: false) != nil }
        #expect(survivors == Array(stride(from: 0, to: 100, by: 2)), "kept \(survivors)")
    }

    @Test func anLFUCounterDecaysOnePerDecayPeriodUnused() {
        let memory = MemoryPolicy()
        memory.policy = .allKeysLFU
        let now = unixMilliseconds()
        let access = MemoryPolicy.minutes(now) << 8 | 20
        #expect(memory.frequency(access, now: now) == 20)
        #expect(memory.frequency(access, now: now + 3 * 60_000) == 17)
        memory.lfuDecayTime = 2
        #expect(memory.frequency(access, now: now + 10 * 60_000) == 15)
        #expect(memory.frequency(access, now: now + 100 * 60_000) == 0)
    }

    @Test func randomPoliciesEvictUntilUnderTheLimitAcrossDatabases() {
        let (databases, evictor) = limited(to: 40, .allKeysRandom)
        for i in 0..<100 { databases[i % 4].set(key(i), [1], expiresAt: nil) }
        #expect(evictor.perform(databases) == .ok)
        #expect(databases.keyCount == 40 && evictor.evictedKeys == 60)
        for database in 0..<4 { #expect(databases[database].count < 25, "database \(database) was spared") }
    }

    @Test func evictionStopsAtItsTimeLimitAndReportsRunning() {
        let (databases, evictor) = limited(to: 10, .allKeysRandom)
        databases.memory.tenacity = 0  // no time at all: one key, then the rest later
        for i in 0..<100 { databases[0].set(key(i), [1], expiresAt: nil) }
        #expect(evictor.perform(databases) == .running)
        #expect(databases.keyCount == 99)
        databases.memory.tenacity = 100
        #expect(evictor.perform(databases) == .ok)
        #expect(databases.keyCount == 10)
    }

    // While the loop's own turns evict (past a command's time limit), a
    // command evicts 16 keys at most: room for what it adds, not 500 us.
    @Test func whileTheLoopEvictsACommandEvictsSixteenKeysAtMost() {
        let dispatcher = connected()
        let databases = dispatcher.databases
        dispatcher.evictor = Evictor(usedMemory: { databases.keyCount * 100 })
        for i in 0..<100 { databases[0].set(key(i), [1], expiresAt: nil) }
        databases.memory.maxmemory = 10 * 100
        databases.memory.policy = .allKeysRandom
        databases.memory.tenacity = 100
        dispatcher.evictor.isContinuing = true
        #expect(run(dispatcher, "PING") == "+PONG\r\n")
        #expect(databases.keyCount == 84)
        dispatcher.evictor.isContinuing = false
        #expect(run(dispatcher, "PING") == "+PONG\r\n")
        #expect(databases.keyCount == 10)
    }

    @Test func noevictionRefusesWritesWithOOMAndLetsReadsThrough() {
        let dispatcher = connected()
        let databases = dispatcher.databases
        dispatcher.evictor = Evictor(usedMemory: { databases.keyCount * 100 })
        #expect(run(dispatcher, "SET", "a", "1") == "+OK\r\n")
        #expect(run(dispatcher, "CONFIG", "SET", "maxmemory", "100") == "+OK\r\n")
        let oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
        #expect(run(dispatcher, "SET", "b", "1") == "+OK\r\n")  // 100 bytes: at the limit, not over
        #expect(run(dispatcher, "SET", "c", "1") == oom)
        #expect(run(dispatcher, "LPUSH", "l", "1") == oom)
        #expect(run(dispatcher, "GET", "a") == "$1\r\n1\r\n")
        #expect(run(dispatcher, "DEL", "c") == ":0\r\n")
        #expect(databases.keyCount == 3 - 1)
        #expect(run(dispatcher, "INFO", "stats").contains("evicted_keys:0"))
        #expect(run(dispatcher, "DEL", "b") == ":1\r\n")
        #expect(run(dispatcher, "SET", "c", "1") == "+OK\r\n")
    }

    @Test func overTheLimitMultiQueuesNothingButDiscardAndExecAbortsOnADenyOOMCommand() {
        let dispatcher = connected()
        let databases = dispatcher.databases
        dispatcher.evictor = Evictor(usedMemory: { databases.keyCount * 100 })
        run(dispatcher, "SET", "x", "value")
        run(dispatcher, "SET", "y", "value")
        let oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
        // Queued before the limit: GET and PING run, SET aborts EXEC.
        #expect(run(dispatcher, "MULTI") == "+OK\r\n")
        #expect(run(dispatcher, "GET", "x") == "+QUEUED\r\n")
        #expect(run(dispatcher, "PING") == "+QUEUED\r\n")
        dispatcher.databases.memory.maxmemory = 100  // CONFIG SET by another client
        #expect(run(dispatcher, "EXEC") == "*2\r\n$5\r\nvalue\r\n+PONG\r\n")
        dispatcher.databases.memory.maxmemory = 0
        #expect(run(dispatcher, "MULTI") == "+OK\r\n")
        #expect(run(dispatcher, "SET", "x", "1") == "+QUEUED\r\n")
        dispatcher.databases.memory.maxmemory = 100
        #expect(
            run(dispatcher, "EXEC")
                == "-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n"
        )
        // Over the limit, even a read is refused in MULTI; DISCARD is not.
        #expect(run(dispatcher, "MULTI") == "+OK\r\n")
        #expect(run(dispatcher, "GET", "x") == oom)
        #expect(run(dispatcher, "DISCARD") == "+OK\r\n")
        #expect(run(dispatcher, "GET", "x") == "$5\r\nvalue\r\n")
        #expect(run(dispatcher, "INFO", "commandstats").contains("cmdstat_get:calls=2,"))
    }

    @Test func scriptsOverTheLimitMayReadButNotStartWriting() {
        let dispatcher = overTheLimit()
        let oom = "OOM command not allowed when used memory > 'maxmemory'."
        #expect(run(dispatcher, "EVAL", "return redis.call('get', KEYS[1])", "1", "x") == "$1\r\n1\r\n")
        #expect(run(dispatcher, "EVAL", "return redis.call('set', KEYS[1], 2)", "1", "x").hasPrefix("-" + oom))
        // Deleting first is a write: the script cannot stop halfway after it.
        #expect(
            run(dispatcher, "EVAL", "redis.call('del', KEYS[1]); return redis.call('set', KEYS[1], 2)", "1", "x")
                == "+OK\r\n")
        #expect(run(dispatcher, "EVAL", "#!lua\nreturn 1", "0") == "-" + oom + "\r\n")
        #expect(run(dispatcher, "EVAL", "#!lua flags=\nreturn 1", "0") == "-" + oom + "\r\n")  // none declared
        #expect(run(dispatcher, "EVAL", "#!lua flags=no-writes\nreturn 1", "0") == ":1\r\n")
        // A shebang load refuses is its own error, not OOM (as in Redis).
        #expect(
            run(dispatcher, "EVAL", "#!lua flags=bogus\nreturn 1", "0")
                == "-ERR Unexpected flag in script shebang: bogus\r\n")
        #expect(run(dispatcher, "EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'z', 1)", "0") == "+OK\r\n")
        // Queued, a script that may write makes EXEC a denyoom command.
        dispatcher.databases.memory.maxmemory = 0
        run(dispatcher, "MULTI")
        run(dispatcher, "GET", "x")
        run(dispatcher, "EVAL", "#!lua\nreturn 1", "0")
        dispatcher.databases.memory.maxmemory = 100
        #expect(
            run(dispatcher, "EXEC")
                == "-EXECABORT Transaction discarded because of: " + oom + "\r\n")
    }

    // Redis's SCRIPT_WRITE_DIRTY is set by a write that ran: a refused
    // write leaves the script as unwritten as before, so its next write
    // is refused too.
    @Test func aScriptWhoseWriteWasRefusedIsRefusedItsNextWriteToo() {
        let dispatcher = overTheLimit()
        let reply = run(
            dispatcher, "EVAL", "redis.pcall('set', KEYS[1], 2); return redis.call('set', KEYS[1], 3)", "1", "x")
        #expect(reply.hasPrefix("-OOM command not allowed"), "\(reply)")
        #expect(run(dispatcher, "GET", "x") == "$1\r\n1\r\n")
        let stats = run(dispatcher, "INFO", "errorstats")
        #expect(stats.contains("errorstat_OOM:count=2"), "\(stats)")
    }

    // A snapshot holds every key it saw: evicting would free nothing, and
    // would go on until the keyspace were empty. Eviction waits for it,
    // keeping the last outcome, and resumes after.
    @Test func evictionWaitsWhileASnapshotIsWritten() {
        let (databases, evictor) = limited(to: 50, .allKeysRandom)
        for i in 0..<40 { databases[0].set(key(i), [1], expiresAt: nil) }
        #expect(evictor.perform(databases) == .ok)
        databases.fence.open()
        for i in 40..<100 { databases[0].set(key(i), [1], expiresAt: nil) }
        #expect(evictor.perform(databases) == .ok)
        #expect(databases.keyCount == 100 && evictor.evictedKeys == 0)
        databases.fence.close()
        #expect(evictor.perform(databases) == .ok)
        #expect(databases.keyCount == 50 && evictor.evictedKeys == 50)
        databases.memory.policy = .noEviction
        databases[0].set(key(100), [1], expiresAt: nil)
        #expect(evictor.perform(databases) == .failed)
        databases.fence.open()
        #expect(evictor.perform(databases) == .failed, "the state before the snapshot holds")
        databases.fence.close()
    }

    @Test func objectIdletimeAndFreqAnswerUnderTheirPolicyOnly() {
        let dispatcher = connected()
        run(dispatcher, "SET", "k", "v")
        #expect(run(dispatcher, "OBJECT", "IDLETIME", "k") == ":0\r\n")
        #expect(run(dispatcher, "OBJECT", "FREQ", "k").hasPrefix("-ERR An LFU maxmemory policy is not selected"))
        #expect(restore(dispatcher, "k", idleSeconds: 1000) == "+OK\r\n")
        let idle = run(dispatcher, "OBJECT", "IDLETIME", "k")
        #expect(idle == ":1000\r\n" || idle == ":1001\r\n", "\(idle)")
        #expect(run(dispatcher, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu") == "+OK\r\n")
        #expect(run(dispatcher, "OBJECT", "IDLETIME", "k").hasPrefix("-ERR An LFU maxmemory policy is selected"))
        #expect(restore(dispatcher, "k", idleSeconds: 5, frequency: nil) == "+OK\r\n")  // ignored under LFU
        #expect(run(dispatcher, "OBJECT", "FREQ", "k") == ":5\r\n")
        #expect(restore(dispatcher, "k", frequency: 100) == "+OK\r\n")
        #expect(run(dispatcher, "OBJECT", "FREQ", "k") == ":100\r\n")
        #expect(
            run(dispatcher, "CONFIG", "SET", "maxmemory-policy", "lru")
                == "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction\r\n"
        )
        #expect(
            run(dispatcher, "CONFIG", "GET", "maxmemory-policy")
                == "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lfu\r\n")
    }

    // Redis writes each key's idle time (LRU) or counter (LFU) in its RDB
    // files, and reads them back: a restart keeps what eviction knows.
    @Test func snapshotsKeepIdleTimesUnderLRUAndCountersUnderLFU() throws {
        for policy in [EvictionPolicy.allKeysLRU, .volatileLFU, .noEviction] {
            let source = Databases()
            source.memory.policy = policy
            let now = unixMilliseconds()
            source.clock.fixed = now
            source[0].set(key(0), [1], expiresAt: nil)
            source[0].setAccess(
                key(0), policy.usesLFU ? MemoryPolicy.minutes(now) << 8 | 42 : MemoryPolicy.lruClock(now - 500_000))
            let out = RDBOutput()
            try RDBWriter.write(Snapshot(source), to: out)
            let target = Databases()
            target.memory.policy = policy
            _ = try RDBLoader.load(RDBInput(bytes: out.buffer), into: target, now: now)
            let access = target[0].lookup(key(0), now: now, touching: false)!.access
            switch policy {
            case .allKeysLRU: #expect(target.memory.idleMilliseconds(access, now: now) == 500_000)
            case .volatileLFU: #expect(target.memory.frequency(access, now: now) == 42)
            default: #expect(access == target.memory.initialAccess(now: now), "neither is written")
            }
        }
    }

    @Test func aTableEmptiedByEvictionGivesItsRoomBackShardByShard() {
        let keyspace = Keyspace()
        for i in 0..<200_000 { keyspace.set(key(i), [1], expiresAt: nil) }
        let peak = keyspace.tableCapacity
        for i in 0..<190_000 { _ = keyspace.evict(key(i), volatileOnly: false) }
        keyspace.shrinkIfSparse()
        #expect(keyspace.tableCapacity < peak / 4, "capacity \(keyspace.tableCapacity) of \(peak)")
        for i in 190_000..<200_000 { #expect(keyspace.lookup(key(i), now: 0, touching: false)?.value == [1]) }
    }
}

/// A dispatcher whose memory is 100 bytes a key, holding x and y ("1"),
/// limited to one key under noeviction: over the limit, nothing to evict.
private func overTheLimit() -> Dispatcher {
    let dispatcher = connected()
    let databases = dispatcher.databases
    dispatcher.evictor = Evictor(usedMemory: { databases.keyCount * 100 })
    run(dispatcher, "SET", "x", "1")
    run(dispatcher, "SET", "y", "1")
    run(dispatcher, "CONFIG", "SET", "maxmemory", "100")
    return dispatcher
}

/// RESTOREs `key` (REPLACE) from its own DUMP, with IDLETIME or FREQ.
@discardableResult
private func restore(_ dispatcher: Dispatcher, _ key: String, idleSeconds: Int? = nil, frequency: Int? = nil)
    -> String
{
    let entry = dispatcher.databases[0].lookup(Array(key.utf8), now: 0, touching: false)!
    var arguments = ["RESTORE", key, "0"].map { Array($0.utf8) } + [DumpPayload.dump(entry)]
    arguments.append(Array("REPLACE".utf8))
    if let idleSeconds { arguments += [Array("IDLETIME".utf8), Array(String(idleSeconds).utf8)] }
    if let frequency { arguments += [Array("FREQ".utf8), Array(String(frequency).utf8)] }
    return run(dispatcher, bytes: arguments)
}
