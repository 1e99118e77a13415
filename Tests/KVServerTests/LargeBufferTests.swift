// LargeBufferTests.swift: large buffers (at least Reclaimer.threshold) are
// freed on the reclaiming thread, and giant arguments do not stall other
// clients meanwhile.
//
// Serialized: the giant arguments need the memory to themselves.
import Foundation
import MainLoop
import TestKit
import Testing

@testable import KVServer

@Suite(.serialized, .timeLimit(.minutes(5))) struct LargeBufferTests {
    // Freeing a 300 MB value is a 20 ms munmap: a deleted or overwritten
    // large value goes to the reclaiming thread, a small one stays put.
    // Counted in a process of its own (an exit test): Reclaimer.reclaimed
    // is process-wide, and the suites running beside this one hand large
    // buffers over too. There each value must move it by exactly one.
    @Test func largeValuesAreFreedOnTheReclaimingThread() async {
        var small = [UInt8](repeating: 1, count: 100)
        Reclaimer.release(&small)
        #expect(small.count == 100, "a small buffer was taken")
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let keyspace = Keyspace()
            let large = [UInt8](repeating: 2, count: 4 << 20)
            for round in 0..<2 {
                let before = Reclaimer.reclaimed
                keyspace.set(Array("big".utf8), large + [UInt8(round)], expiresAt: nil)
                if round == 0 {
                    guard keyspace.remove(Array("big".utf8)) else { fatalError("round 0: nothing removed") }
                } else {
                    keyspace.set(Array("big".utf8), [3], expiresAt: nil)  // overwritten
                    guard keyspace.lookup(Array("big".utf8), now: 0)?.value == [3] else {
                        fatalError("round 1: the value was not overwritten")
                    }
                }
                var waited = 0
                while Reclaimer.reclaimed == before && waited < 5_000 {
                    usleep(1_000)
                    waited += 1
                }
                print("round \(round): \(Reclaimer.reclaimed - before) hand-overs")
            }
            // The reclaiming thread runs at idle priority (SCHED_IDLE is
            // policy 5, the 41st field of its stat line).
            print("policy \(reclaimingThreadPolicy().map(String.init) ?? "unknown")")
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(output == "round 0: 1 hand-overs\nround 1: 1 hand-overs\npolicy 5\n", "\(output)")
    }

    // INFO's lazyfree_pending_objects and mem_not_counted_for_evict: what
    // was handed to the reclaiming thread and not freed yet, and its bytes. Held up by a loop of the test's own (a
    // process of its own: the count is process-wide), a hand-over is
    // pending; let go, it is freed and the count goes back.
    @Test func aBufferHandedOverIsPendingUntilTheReclaimingThreadHasFreedIt() async {
        await #expect(processExitsWith: .success) {
            let loop = try! EventLoop.spawn(name: "held")
            let gate = DispatchSemaphore(value: 0)
            try! loop.post { gate.wait() }
            let before = (Reclaimer.pending, Reclaimer.reclaimed, Reclaimer.pendingBytes)
            Reclaimer.hand(loop, Doomed([UInt8](repeating: 1, count: 4 << 20)), bytes: 4 << 20)
            guard Reclaimer.pending == before.0 + 1, Reclaimer.reclaimed == before.1,
                Reclaimer.pendingBytes == before.2 + 4 << 20
            else { fatalError("not pending") }
            gate.signal()
            var waited = 0
            while Reclaimer.pending != before.0 && waited < 5_000 {
                usleep(1_000)
                waited += 1
            }
            guard Reclaimer.pending == before.0, Reclaimer.reclaimed == before.1 + 1,
                Reclaimer.pendingBytes == before.2
            else { fatalError("not freed") }
        }
    }

    // A 100 MB key in EXISTS, a 100 MB command name and a 100 MB
    // subcommand name: the core hashes the key in one pass and does not
    // hash or copy the names at all, so a canary on another connection is
    // not held up.
    // The server runs in this process, beside every other suite: a stall of
    // the process is not its doing, so the bound must hold in one of two
    // attacks (a server that blocks on the giant misses it in both).
    @Test func giantArgumentsDoNotStallOtherClients() throws {
        try withServer { server in
            let port = server.port
            let giant = [UInt8](repeating: UInt8(ascii: "k"), count: 100 * 1024 * 1024)
            let bound = 0.5 * Double(sanitizerFactor)
            var worstOfAttack = Double.infinity
            for _ in 0..<2 where worstOfAttack >= bound {
                let attacker = try TestClient(port: server.port)
                let done = Locked(false)
                let worst = Locked(0.0)
                let pinger = TestThread {
                    guard let canary = try? TestClient(port: port) else { return worst.set(99) }
                    while !done.get() {
                        let sent = Date()
                        _ = canary.roundTrip("PING\r\n", replyBytes: 7)
                        let waited = Date().timeIntervalSince(sent)
                        worst.update { $0 = max($0, waited) }
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                }
                attacker.send(multibulk([bytes("EXISTS"), giant]))
                #expect(attacker.readLine() == ":0\r\n")
                attacker.send(multibulk([giant]))
                #expect(attacker.readLine().hasPrefix("-ERR unknown command 'kkkk"))
                attacker.send(multibulk([bytes("CLIENT"), giant]))
                #expect(attacker.readLine().hasPrefix("-ERR unknown subcommand 'kkkk"))
                done.set(true)
                pinger.join("the canary")
                worstOfAttack = worst.get()
            }
            #expect(worstOfAttack < bound, "the canary waited \(worstOfAttack) s for a PONG, in both attacks")
        }
    }
}

/// The scheduling policy of this process's reclaiming thread, if it runs.
private func reclaimingThreadPolicy() -> Int? {
    guard let tasks = opendir("/proc/self/task") else { return nil }
    defer { closedir(tasks) }
    while let entry = readdir(tasks) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        guard let name = readSmallFile("/proc/self/task/\(tid)/comm"), name.hasPrefix("kvd-reclaim"),
            let stat = readSmallFile("/proc/self/task/\(tid)/stat")
        else { continue }
        let fields = stat.split(separator: ")").last!.split(separator: " ")
        return Int(fields[38])  // fields after "comm)": state is field 3, policy is field 41
    }
    return nil
}

private func readSmallFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = fread(&buffer, 1, buffer.count - 1, file)
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
