// BusyScriptTests.swift: a script past busy-reply-threshold, on both
// topologies: the other clients get Redis's BUSY at once (not a late run),
// SCRIPT KILL stops a script that has not written and is refused for one
// that has, SHUTDOWN NOSAVE ends the daemon, and a script that allocates
// without bound fails at kvd's Lua heap limit while kvd serves on.
import Foundation
import Testing

@testable import KVServer

private let busy = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"

/// Sends one command as a RESP array.
private func send(_ client: TestClient, _ parts: String...) {
    var request = "*\(parts.count)\r\n"
    for part in parts { request += "$\(part.utf8.count)\r\n\(part)\r\n" }
    client.send(request)
}

/// One command whose reply is a single line.
private func call(_ client: TestClient, _ parts: String...) -> String {
    var request = "*\(parts.count)\r\n"
    for part in parts { request += "$\(part.utf8.count)\r\n\(part)\r\n" }
    client.send(request)
    return client.readLine()
}

/// Waits (bounded) until the core's script is busy. (A request sent before
/// that waits behind the script, which may never end.)
private func waitUntilBusy(_ server: Server) -> Bool {
    eventually(within: 10) { server.hop.scripts.isBusy }
}

@Suite(.timeLimit(.minutes(3))) struct BusyScriptTests {
    @Test(arguments: [0, 2]) func otherClientsGetBusyAndScriptKillStopsAReadOnlyScript(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let caller = try TestClient(port: server.port)
            let other = try TestClient(port: server.port)
            #expect(call(other, "CONFIG", "SET", "busy-reply-threshold", "50") == "+OK\r\n")
            #expect(call(other, "SCRIPT", "KILL") == "-NOTBUSY No scripts in execution right now.\r\n")
            send(caller, "EVAL", "while true do end", "0")
            #expect(waitUntilBusy(server))
            #expect(call(other, "GET", "x") == busy)
            // A client that connects meanwhile is accepted and answered too.
            let late = try TestClient(port: server.port)
            #expect(call(late, "PING") == busy)
            // A command kvd does not know is refused as Redis refuses it, before the busy gate.
            #expect(call(other, "NOSUCH").hasPrefix("-ERR unknown command 'NOSUCH'"))
            // So is a subcommand with the wrong count, from Redis's table.
            #expect(call(other, "FUNCTION", "LOAD") == "-ERR wrong number of arguments for 'function|load' command\r\n")
            #expect(
                call(other, "SCRIPT", "KILL", "x") == "-ERR wrong number of arguments for 'script|kill' command\r\n")
            #expect(
                call(other, "CONFIG", "HELP", "x") == "-ERR wrong number of arguments for 'config|help' command\r\n")
            #expect(call(other, "SCRIPT", "KILL") == "+OK\r\n")
            #expect(
                caller.readLine()
                    == "-ERR Script killed by user with SCRIPT KILL... script: 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n"
            )
            #expect(call(other, "PING") == "+PONG\r\n")
            #expect(call(caller, "PING") == "+PONG\r\n")
            #expect(call(other, "SCRIPT", "KILL") == "-NOTBUSY No scripts in execution right now.\r\n")
        }
    }

    @Test(arguments: [0, 2]) func aBusyFunctionIsAnsweredLikeABusyScriptAndStoppedByFunctionKill(ioThreads: Int) throws
    {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let caller = try TestClient(port: server.port)
            let other = try TestClient(port: server.port)
            #expect(call(other, "CONFIG", "SET", "busy-reply-threshold", "50") == "+OK\r\n")
            let library = "#!lua name=spinner\nredis.register_function('spin', function() while true do end end)"
            #expect(call(other, "FUNCTION", "LOAD", library) == "$7\r\n")
            #expect(other.readLine() == "spinner\r\n")
            send(caller, "FCALL", "spin", "0")
            #expect(waitUntilBusy(server))
            let functionBusy =
                "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
            #expect(call(other, "GET", "x") == functionBusy)
            // FUNCTION STATS is answered during it, naming the function and its FCALL.
            send(other, "FUNCTION", "STATS")
            var stats = (0..<32).map { _ in other.readLine() }
            if stats[19].hasPrefix(":") { stats[19] = ":(duration)\r\n" }
            let expected = [
                "*4", "$14", "running_script", "*6", "$4", "name", "$4", "spin", "$7", "command", "*3", "$5", "FCALL",
                "$4", "spin", "$1", "0", "$11", "duration_ms", ":(duration)", "$7", "engines", "*2", "$3", "LUA", "*4",
                "$15", "libraries_count", ":1", "$15", "functions_count", ":1",
            ]
            #expect(stats == expected.map { $0 + "\r\n" }, "\(stats)")
            #expect(call(other, "PING") == functionBusy, "FUNCTION STATS left part of its reply unread")
            // Each KILL refuses the other's kind of script.
            #expect(call(other, "SCRIPT", "KILL") == functionBusy)
            #expect(call(other, "FUNCTION", "KILL") == "+OK\r\n")
            #expect(caller.readLine().hasPrefix("-ERR Script killed by user with SCRIPT KILL..."))
            #expect(call(caller, "PING") == "+PONG\r\n")
            #expect(call(other, "FUNCTION", "KILL") == "-NOTBUSY No scripts in execution right now.\r\n")
        }
    }

    @Test(arguments: [0, 2]) func aScriptThatWroteIsUnkillableAndFinishesItsWork(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let caller = try TestClient(port: server.port)
            let other = try TestClient(port: server.port)
            #expect(call(other, "CONFIG", "SET", "busy-reply-threshold", "50") == "+OK\r\n")
            // Writes, then runs for two to three seconds by the server's clock,
            // mostly in plain Lua (so that the hook runs often, also when a
            // sanitizer slows every call down).
            send(
                caller, "EVAL",
                "redis.call('set', 'k', 'v') local t = redis.call('time')[1] + 3 local i = 0 "
                    + "while i % 10000 ~= 0 or tonumber(redis.call('time')[1]) < tonumber(t) do i = i + 1 end "
                    + "return 'done'", "0")
            #expect(waitUntilBusy(server))
            #expect(call(other, "SCRIPT", "KILL").hasPrefix("-UNKILLABLE Sorry the script already executed write"))
            #expect(call(other, "SET", "k", "other") == busy)
            #expect(caller.readLine() == "$4\r\n")
            #expect(caller.readLine() == "done\r\n")
            // The write refused while it was busy did not run late.
            #expect(call(other, "GET", "k") == "$1\r\n")
            #expect(other.readLine() == "v\r\n")
        }
    }

    @Test(arguments: [0, 2]) func aTransactionMeetingABusyScriptRunsWholeOrNotAtAll(ioThreads: Int) throws {
        try withServer({ $0.ioThreads = ioThreads }) { server in
            let caller = try TestClient(port: server.port)
            let queued = try TestClient(port: server.port)
            let opened = try TestClient(port: server.port)
            #expect(call(queued, "CONFIG", "SET", "busy-reply-threshold", "50") == "+OK\r\n")
            #expect(call(queued, "SET", "x", "1") == "+OK\r\n")
            #expect(call(queued, "MULTI") == "+OK\r\n")
            #expect(call(queued, "INCR", "x") == "+QUEUED\r\n")
            send(caller, "EVAL", "while true do end", "0")
            #expect(waitUntilBusy(server))
            // As in Redis: MULTI passes, a command inside it is refused
            // (which dooms the transaction), EXEC aborts it.
            #expect(call(opened, "MULTI") == "+OK\r\n")
            #expect(call(opened, "MULTI") == "-ERR MULTI calls can not be nested\r\n")
            #expect(call(opened, "INCR", "x") == busy)
            #expect(call(queued, "EXEC") == "-EXECABORT Transaction discarded because of: \(busy.dropFirst())")
            #expect(call(queued, "DISCARD") == "-ERR DISCARD without MULTI\r\n")
            #expect(call(queued, "SCRIPT", "KILL") == "+OK\r\n")
            #expect(caller.readLine().hasPrefix("-ERR Script killed by user"))
            // The core applied what was answered: one client is out of its
            // transaction, the other is in one that EXEC aborts.
            #expect(call(queued, "PING") == "+PONG\r\n")
            #expect(call(opened, "INCR", "x") == "+QUEUED\r\n")
            #expect(call(opened, "EXEC") == "-EXECABORT Transaction discarded because of previous errors.\r\n")
            #expect(call(opened, "GET", "x") == "$1\r\n")
            #expect(opened.readLine() == "1\r\n")
        }
    }

    @Test(arguments: ["0", "2"]) func shutdownNosaveEndsADaemonHeldByABusyScript(ioThreads: String) throws {
        let (process, output, port) = try launchKVD(["--port", "0", "--io-threads", ioThreads])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let caller = try TestClient(port: port)
        let other = try TestClient(port: port)
        #expect(call(other, "CONFIG", "SET", "busy-reply-threshold", "50") == "+OK\r\n")
        send(caller, "EVAL", "redis.call('set', 'k', 'v') while true do end", "0")
        // Out of process: the script has passed 50 ms once kvd logs it so.
        #expect(readOutput(output, until: "slow script detected").contains("slow script detected"))
        #expect(call(other, "SHUTDOWN") == busy)  // without NOSAVE, as in Redis
        send(other, "SHUTDOWN", "NOSAVE")
        #expect(eventually(within: 10) { !process.isRunning })
        #expect(process.terminationStatus == 0)
        #expect(caller.readAll().isEmpty)
    }

    @Test func theLogNamesABusyScriptAndTheSlowJobThatRanIt() throws {
        let (process, output, port) = try launchKVD(["--port", "0", "--io-threads", "1"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let caller = try TestClient(port: port)
        let other = try TestClient(port: port)
        #expect(call(other, "CONFIG", "SET", "busy-reply-threshold", "50") == "+OK\r\n")
        send(caller, "EVAL", "while true do end", "0")
        let sha = "694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7"
        let log = readOutput(output, until: "Script name is: \(sha).")
        #expect(log.contains("kvd: slow script detected: still in execution after "))
        #expect(call(other, "SCRIPT", "KILL") == "+OK\r\n")
        #expect(caller.readLine().hasPrefix("-ERR Script killed by user with SCRIPT KILL..."))
        let report = readOutput(output, until: "running script \(sha)\n")
        #expect(report.contains("kvd: slow job KVServer/CoreHop.swift:"))
        #expect(report.contains("running script \(sha)\n"))
    }

    @Test func aScriptThatAllocatesWithoutBoundFailsAtItsHeapLimitAndKvdServesOn() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            let reply = call(
                client, "EVAL", "local t = {} local i = 0 while true do i = i + 1 t[i] = i end", "0")
            #expect(reply.hasPrefix("-ERR Error running script "))
            #expect(reply.hasSuffix(", not enough memory (kvd allows a script 256 MB of Lua heap)\r\n"))
            #expect(call(client, "EVAL", "return #string.rep('x', 1000000)", "0") == ":1000000\r\n")
            #expect(call(client, "PING") == "+PONG\r\n")
        }
    }
}
