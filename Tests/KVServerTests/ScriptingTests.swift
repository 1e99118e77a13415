// ScriptingTests.swift: the conversions a Lua script goes through, driven
// through the dispatcher with no socket: Lua values to replies (numbers
// truncated, arrays cut at the first nil, RESP3's tables falling back for a
// RESP2 client), replies to Lua values (what redis.call hands the script,
// in RESP2 and after redis.setresp(3)), errors with Redis's positions, the
// read-only variants, the sandbox, and Redis's rand48. The byte-exact
// comparisons with Redis 7.0 are in the golden cases.
import Testing

@testable import KVServer

@Suite struct ScriptingTests {
    /// A dispatcher with one client (RESP2 unless `resp3`), and a function
    /// that runs one command as that client and returns its reply as text.
    private func client(resp3: Bool = false) -> ([String]) -> String {
        let dispatcher = Dispatcher()
        dispatcher.clientConnected(ClientInfo(id: 1, address: "", localAddress: "", fd: -1, kill: {}))
        if resp3 { _ = run(dispatcher, ["HELLO", "3"]) }
        return { run(dispatcher, $0) }
    }

    private func run(_ dispatcher: Dispatcher, _ arguments: [String]) -> String {
        var batch = RequestBatch()
        for argument in arguments { batch.appendArgument(Array(argument.utf8)) }
        batch.endRequest()
        let (replies, _) = dispatcher.execute(batch, client: 1)
        return String(decoding: replies.chunks.flatMap { $0 }, as: UTF8.self)
    }

    @Test func luaNumbersBecomeTruncatedIntegersAndArraysEndAtTheFirstNil() {
        let call = client()
        #expect(call(["EVAL", "return 3.99", "0"]) == ":3\r\n")
        #expect(call(["EVAL", "return -3.99", "0"]) == ":-3\r\n")
        #expect(call(["EVAL", "return {1, 'a', false, nil, 5}", "0"]) == "*3\r\n:1\r\n$1\r\na\r\n$-1\r\n")
        #expect(call(["EVAL", "return true", "0"]) == ":1\r\n")
        #expect(call(["EVAL", "return {}", "0"]) == "*0\r\n")
        #expect(luaInteger(.infinity) == Int.min && luaInteger(.nan) == Int.min && luaInteger(1e30) == Int.min)
    }

    @Test func commandRepliesReachLuaAsRedisTypesThem() {
        let call = client()
        _ = call(["SET", "s", "abc"])
        let types =
            "local r = {} for _, c in ipairs({{'incr', 'n'}, {'get', 's'}, {'get', 'none'}, {'set', 'k', 'v'}, {'mget', 's'}}) do local v = redis.call(unpack(c)) r[#r + 1] = type(v) end return r"
        #expect(
            call(["EVAL", types, "0"])
                == "*5\r\n$6\r\nnumber\r\n$6\r\nstring\r\n$7\r\nboolean\r\n$5\r\ntable\r\n$5\r\ntable\r\n")
        #expect(call(["EVAL", "return redis.call('set', 'k', 'v').ok", "0"]) == "$2\r\nOK\r\n")
        #expect(
            call(["EVAL", "return redis.pcall('incr', 's').err", "0"])
                == "$43\r\nERR value is not an integer or out of range\r\n")
        // Numbers travel as %.17g, not Lua's 14 digits.
        #expect(
            call(["EVAL", "redis.call('set', 'p', 0.1) return redis.call('get', 'p')", "0"])
                == "$19\r\n0.10000000000000001\r\n")
    }

    @Test func resp3RepliesReachLuaAsTablesAndFallBackForResp2Clients() {
        let call = client()
        _ = call(["MSET", "a", "ohmytext", "b", "mynewtext"])
        // LCS IDX is a map in RESP3: the script sees {map = {...}}.
        #expect(call(["EVAL", "redis.setresp(3) return redis.call('lcs', 'a', 'b', 'idx').map.len", "0"]) == ":6\r\n")
        #expect(call(["EVAL", "redis.setresp(3) return redis.call('get', 'none') == nil", "0"]) == ":1\r\n")
        // A RESP2 client gets RESP2's forms of RESP3 results.
        #expect(call(["EVAL", "return {double = 1.5}", "0"]) == "$3\r\n1.5\r\n")
        #expect(call(["EVAL", "return {map = {k = 'v'}}", "0"]) == "*2\r\n$1\r\nk\r\n$1\r\nv\r\n")
        #expect(call(["EVAL", "redis.setresp(3) return {true, false}", "0"]) == "*2\r\n:1\r\n:0\r\n")
        let resp3 = client(resp3: true)
        #expect(resp3(["EVAL", "return {double = 1.5}", "0"]) == ",1.5\r\n")
        #expect(resp3(["EVAL", "return {map = {k = 'v'}}", "0"]) == "%1\r\n$1\r\nk\r\n$1\r\nv\r\n")
        #expect(resp3(["EVAL", "redis.setresp(3) return {true, false}", "0"]) == "*2\r\n#t\r\n#f\r\n")
        #expect(resp3(["EVAL", "return false", "0"]) == "_\r\n")
    }

    /// Regression: the conversion recursed once per level, and a table that
    /// contains itself overflowed the core's thread stack and killed kvd.
    @Test func aTableThatContainsItselfEndsWhereRedissLuaStackEnds() {
        let call = client()
        let reply = call(["EVAL", "local a = {}; local b = {a}; a[1] = b; return a", "0"])
        // redis-server 7.0.15 sends 7995 levels, then the error.
        #expect(reply == String(repeating: "*1\r\n", count: 7995) + "-ERR reached lua stack limit\r\n")
        #expect(call(["PING"]) == "+PONG\r\n")
    }

    /// Regression: reading an error table's fields ran its __index
    /// metamethod outside any pcall, and one that raised aborted the process
    /// (as it aborts redis-server 7.0.15).
    @Test func anErrorTableWhoseMetamethodsRaiseIsAnsweredNotFatal() {
        let call = client()
        let raising = "{__index = function() error('boom') end}"
        #expect(call(["EVAL", "return setmetatable({err = 'E x'}, \(raising))", "0"]) == "-E x\r\n")
        #expect(call(["EVAL", "error(setmetatable({err = 'E y'}, \(raising)))", "0"]).hasPrefix("-E y script: "))
        #expect(call(["PING"]) == "+PONG\r\n")
    }

    @Test func errorsCarryRedissCodeAndTheScriptsLine() {
        let call = client()
        let sha = sha1Hex(Array("\n\nerror('boom')".utf8))
        #expect(
            call(["EVAL", "\n\nerror('boom')", "0"])
                == "-ERR user_script:3: boom script: \(sha), on @user_script:3.\r\n")
        #expect(call(["EVAL", "return redis.error_reply('MINE bad')", "0"]) == "-MINE bad\r\n")
        #expect(call(["EVAL", "return {err = 'x\\ny'}", "0"]) == "-x y\r\n")
        #expect(
            call(["EVALSHA", String(repeating: "0", count: 40), "0"])
                == "-NOSCRIPT No matching script. Please use EVAL.\r\n")
    }

    @Test func readOnlyScriptsRefuseWrites() {
        let call = client()
        #expect(
            call(["EVAL_RO", "return redis.call('set', 'a', 1)", "0"]).hasPrefix(
                "-ERR Write commands are not allowed from read-only scripts."))
        #expect(call(["EVAL_RO", "return redis.call('get', 'a')", "0"]) == "$-1\r\n")
        #expect(
            call(["EVAL_RO", "#!lua\nreturn 1", "0"])
                == "-ERR Can not execute a script with write flag using *_ro command.\r\n")
        #expect(
            call(["EVAL", "#!lua flags=no-writes\nreturn redis.pcall('del', 'a').err", "0"])
                == "$58\r\nERR Write commands are not allowed from read-only scripts.\r\n")
    }

    // The collection commands keep Redis 7.0's flags in scripts: writes are
    // refused to read-only scripts, the blocking pops Redis marks noscript
    // are refused, and the ones it allows answer an empty wait at once.
    @Test func collectionCommandsKeepTheirScriptFlags() {
        let call = client()
        for write in ["hset', 'h', 'f', 'v", "lpush', 'l', 'x", "sadd', 's', 'm", "zadd', 'z', '1', 'm"] {
            #expect(
                call(["EVAL_RO", "return redis.call('\(write)')", "0"]).hasPrefix(
                    "-ERR Write commands are not allowed from read-only scripts."), "\(write)")
        }
        #expect(
            call(["EVAL", "return redis.call('blpop', 'empty', 0)", "0"]).hasPrefix(
                "-ERR This Redis command is not allowed from script"))
        #expect(call(["EVAL", "return redis.call('blmpop', 0, 1, 'empty', 'LEFT')", "0"]) == "$-1\r\n")
    }

    @Test func theSandboxKeepsGlobalsAndTheSystemOutOfReach() {
        let call = client()
        for script in [
            "x = 1", "redis.call = nil", "string.len = nil", "getmetatable('').__index.len = nil",
            "setmetatable(_G, {})",
        ] {
            #expect(call(["EVAL", script, "0"]).contains("Attempt to modify a readonly table"), "\(script)")
        }
        for name in ["os", "io", "require", "dofile", "loadfile", "print", "debug", "setfenv"] {
            #expect(call(["EVAL", "return \(name)", "0"]).contains("nonexistent global variable '\(name)'"), "\(name)")
        }
        #expect(call(["EVAL", "return loadstring(string.dump(function() end))", "0"]) == "$-1\r\n")
        // What one script changes, the next one does not see.
        #expect(call(["EVAL", "return tostring(redis.call ~= nil and string.len ~= nil)", "0"]) == "$4\r\ntrue\r\n")
    }

    @Test func scriptsAreCachedBySha1UntilFlushed() {
        let call = client()
        #expect(sha1Hex([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(sha1Hex(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(call(["SCRIPT", "LOAD", "return 7"]) == "$40\r\n\(sha1Hex(Array("return 7".utf8)))\r\n")
        #expect(call(["EVALSHA", sha1Hex(Array("return 7".utf8)).uppercased(), "0"]) == ":7\r\n")
        #expect(call(["SCRIPT", "FLUSH"]) == "+OK\r\n")
        #expect(call(["SCRIPT", "EXISTS", sha1Hex(Array("return 7".utf8))]) == "*1\r\n:0\r\n")
    }

    @Test func mathRandomDrawsRedisssRand48Sequence() {
        // The numbers redis-server 7.0.15 returns for the same script.
        let call = client()
        let script = "math.randomseed(42) return {math.random(1000000), math.random(1000000), math.random(1000000)}"
        #expect(call(["EVAL", script, "0"]) == "*3\r\n:744526\r\n:342702\r\n:111086\r\n")
    }

    @Test func aCallWhoseReplyPassesTheOutputLimitRaisesInsteadOfFillingMemory() {
        let call = client()
        #expect(call(["CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"]) == "+OK\r\n")
        #expect(call(["SADD", "s", "a"]) == ":1\r\n")
        #expect(call(["HSET", "h", "f", "v"]) == ":1\r\n")
        #expect(call(["ZADD", "z", "1", "m"]) == ":1\r\n")
        for (command, key) in [("srandmember", "s"), ("hrandfield", "h"), ("zrandmember", "z")] {
            let script = "return #redis.call('\(command)', KEYS[1], -10000000)"
            let reply = call(["EVAL", script, "1", key])
            #expect(
                reply.hasPrefix(
                    "-ERR kvd: the reply of '\(command)' passed the client output buffer limit (1048576 bytes) script: "
                ),
                "\(reply.prefix(200))")
        }
        // pcall gets it as an error table; a reply under the limit is whole.
        let guarded = "local r = redis.pcall('srandmember', KEYS[1], -10000000) return r['err']"
        #expect(call(["EVAL", guarded, "1", "s"]).hasPrefix("$"))
        #expect(call(["EVAL", "return #redis.call('srandmember', KEYS[1], -1000)", "1", "s"]) == ":1000\r\n")
    }

    @Test func aScriptInsideMultiRunsAtExec() {
        let call = client()
        #expect(call(["MULTI"]) == "+OK\r\n")
        #expect(call(["EVAL", "return redis.call('incr', KEYS[1])", "1", "n"]) == "+QUEUED\r\n")
        #expect(call(["EXEC"]) == "*1\r\n:1\r\n")
    }

    @Test func functionRestoreAddsEveryLibraryOrNoneUnderItsPolicy() {
        let dispatcher = Dispatcher()
        dispatcher.clientConnected(ClientInfo(id: 1, address: "", localAddress: "", fd: -1, kill: {}))
        let call = { (arguments: [[UInt8]]) -> [UInt8] in
            var batch = RequestBatch()
            for argument in arguments { batch.appendArgument(argument) }
            batch.endRequest()
            return dispatcher.execute(batch, client: 1).0.chunks.flatMap { $0 }
        }
        let text = { (arguments: [String]) -> String in
            String(decoding: call(arguments.map { Array($0.utf8) }), as: UTF8.self)
        }
        let library = { (name: String, function: String, value: Int) in
            "#!lua name=\(name)\nredis.register_function('\(function)', function() return \(value) end)"
        }
        #expect(text(["FUNCTION", "LOAD", library("a", "f", 1)]) == "$1\r\na\r\n")
        let dump = call([Array("FUNCTION".utf8), Array("DUMP".utf8)])
        let payload = Array(dump[(dump.firstIndex(of: 10)! + 1)..<(dump.count - 2)])
        let restore = { (policy: String) -> String in
            String(
                decoding: call([Array("FUNCTION".utf8), Array("RESTORE".utf8), payload, Array(policy.utf8)]),
                as: UTF8.self)
        }
        // APPEND (the default) refuses a library that is there, and changes nothing.
        #expect(restore("APPEND") == "-ERR Library a already exists\r\n")
        #expect(restore("REPLACE") == "+OK\r\n")
        // A function another library holds blocks the whole restore.
        #expect(text(["FUNCTION", "FLUSH"]) == "+OK\r\n")
        #expect(text(["FUNCTION", "LOAD", library("b", "F", 2)]) == "$1\r\nb\r\n")
        #expect(restore("REPLACE") == "-ERR Function f already exists\r\n")
        #expect(text(["FCALL", "f", "0"]) == ":2\r\n")
        // FLUSH drops what was there first.
        #expect(restore("FLUSH") == "+OK\r\n")
        #expect(text(["FCALL", "f", "0"]) == ":1\r\n")
        #expect(text(["FUNCTION", "STATS"]).contains("libraries_count\r\n:1\r\n"))
        // A payload whose checksum does not match is refused before anything is read.
        var altered = payload
        altered[altered.count - 12] ^= 1
        #expect(
            String(decoding: call([Array("FUNCTION".utf8), Array("RESTORE".utf8), altered]), as: UTF8.self)
                == "-ERR DUMP payload version or checksum are wrong\r\n")
    }

    @Test func functionRestoreOfAnLZFStringClaimingGigabytesIsRefused() {
        // One library whose code is an LZF string of 2 compressed bytes that
        // claims 8 GB expanded (the most a length may say), then the RDB
        // version and a valid CRC-64: any client can send this.
        var payload: [UInt8] = [RDBFormat.function2, 0xC3, 0x02, 0x81]
        payload += withUnsafeBytes(of: UInt64(Int32.max) * 4) { Array($0.reversed()) }
        payload += [0x00, UInt8(ascii: "a"), 10, 0]
        var crc = CRC64()
        crc.update(payload)
        payload += withUnsafeBytes(of: crc.value.littleEndian) { Array($0) }
        let dispatcher = Dispatcher()
        dispatcher.clientConnected(ClientInfo(id: 1, address: "", localAddress: "", fd: -1, kill: {}))
        let call = { (arguments: [[UInt8]]) -> String in
            var batch = RequestBatch()
            for argument in arguments { batch.appendArgument(argument) }
            batch.endRequest()
            return String(decoding: dispatcher.execute(batch, client: 1).0.chunks.flatMap { $0 }, as: UTF8.self)
        }
        #expect(
            call([Array("FUNCTION".utf8), Array("RESTORE".utf8), payload]) == "-ERR Failed loading library payload\r\n")
        #expect(call([Array("FUNCTION".utf8), Array("LIST".utf8)]) == "*0\r\n")
    }

    @Test func aLibraryWhoseCodeRunsPastHalfASecondIsStoppedAndNotLoaded() {
        let call = client()
        let started = monotonicMilliseconds()
        let reply = call(["FUNCTION", "LOAD", "#!lua name=slow\nwhile true do end"])
        #expect(reply == "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n")
        #expect((500..<5000).contains(monotonicMilliseconds() - started))
        #expect(call(["FUNCTION", "LIST"]) == "*0\r\n")
    }

    @Test func functionsGetKeysAndArgumentsAsTablesAndKeepTheLibrarysLocals() {
        let call = client()
        let code = """
            #!lua name=lib
            local prefix = 'got '
            redis.register_function('echo', function(keys, args) return {prefix .. keys[1], args[1], #keys, #args} end)
            """
        #expect(call(["FUNCTION", "LOAD", code]) == "$3\r\nlib\r\n")
        #expect(call(["FCALL", "ECHO", "1", "k", "a", "b"]) == "*4\r\n$5\r\ngot k\r\n$1\r\na\r\n:1\r\n:2\r\n")
        // EVAL's KEYS and ARGV are not a function's, and SCRIPT FLUSH leaves functions alone.
        #expect(call(["SCRIPT", "FLUSH"]) == "+OK\r\n")
        #expect(call(["FCALL", "echo", "1", "k"]) == "*1\r\n$5\r\ngot k\r\n")  // args[1] is nil: the array ends
        #expect(call(["FLUSHALL"]) == "+OK\r\n")
        #expect(call(["FUNCTION", "LIST"]).hasPrefix("*1\r\n"))
    }
}
