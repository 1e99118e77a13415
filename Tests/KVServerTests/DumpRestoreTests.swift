// DumpRestoreTests.swift: what the golden replies cannot show about DUMP
// and RESTORE (tools/redis-golden.py records their replies from
// redis-server; tools/rdb-interop.py moves every key both ways): a
// RESTORE ... REPLACE counts one change, as Redis's dirty++; a hash with a
// field twice, which Redis 7.0 takes into a small hash unless it
// sanitizes, is refused (kvd's hash would hold one field fewer than the
// payload says); a restored list releases a client parked on the key.
import Glibc
import TestKit
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(2))) struct DumpRestoreTests {
    /// `body` (a value as a payload holds it: type, then value) with DUMP's footer.
    private func payload(_ body: [UInt8]) -> [UInt8] {
        DumpPayload.sealed { out in try out.bytes(body) }
    }

    private func string(_ text: String) -> [UInt8] { [0, UInt8(text.utf8.count)] + Array(text.utf8) }

    @Test func restoreWithReplaceCountsOneChangeAsRedisDoes() {
        let dispatcher = connected()
        run(dispatcher, "SET", "k", "old")
        let before = dispatcher.databases.fence.changes
        #expect(
            run(dispatcher, bytes: [Array("RESTORE".utf8), [107], [48], payload(string("new")), Array("REPLACE".utf8)])
                == "+OK\r\n")
        #expect(dispatcher.databases.fence.changes - before == 1)
        #expect(run(dispatcher, "GET", "k") == "$3\r\nnew\r\n")
    }

    @Test func aHashWithAFieldTwiceIsRefused() {
        let dispatcher = connected()
        let twice: [UInt8] = [4, 2, 1, 102, 1, 118, 1, 102, 1, 119]  // HASH, 2 pairs: f v, f w
        let once: [UInt8] = [4, 2, 1, 102, 1, 118, 1, 103, 1, 119]  // f v, g w
        #expect(
            run(dispatcher, bytes: [Array("RESTORE".utf8), [104], [48], payload(twice)]) == "-ERR Bad data format\r\n")
        #expect(run(dispatcher, "EXISTS", "h") == ":0\r\n")
        #expect(run(dispatcher, bytes: [Array("RESTORE".utf8), [104], [48], payload(once)]) == "+OK\r\n")
        #expect(run(dispatcher, "HLEN", "h") == ":2\r\n")
    }

    @Test(arguments: [0, 2]) func aRestoredListReleasesAClientParkedOnTheKey(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let waiter = try TestClient(port: server.port)
            let restorer = try TestClient(port: server.port)
            waiter.send("BLPOP q 0\r\n")
            #expect(eventually { blockedClients(restorer) == 1 })
            let list = payload([1, 2, 1, 97, 1, 98])  // LIST, 2 elements: a b
            _ = restorer.send(
                bytes("*4\r\n$7\r\nRESTORE\r\n$1\r\nq\r\n$1\r\n0\r\n$\(list.count)\r\n") + list + bytes("\r\n"))
            #expect(restorer.readLine() == "+OK\r\n")
            let popped = "*2\r\n$1\r\nq\r\n$1\r\na\r\n"
            #expect(waiter.read(count: bytes(popped).count) == bytes(popped))
            #expect(restorer.roundTrip("LLEN q\r\n", replyBytes: 4) == ":1\r\n")
        }
    }
}
