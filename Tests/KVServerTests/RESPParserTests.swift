// RESPParserTests.swift: the request parser's framing, limits and errors.
import Testing
@testable import KVServer

@Suite struct RESPParserTests {
    func parse(_ text: String, limits: RESPLimits = RESPLimits()) -> [RESPParser.Outcome] {
        var parser = RESPParser(limits: limits)
        parser.append(bytes(text))
        var outcomes: [RESPParser.Outcome] = []
        while true {
            let outcome = parser.next()
            outcomes.append(outcome)
            if outcome == .incomplete { return outcomes }
            if case .protocolError = outcome { return outcomes }
        }
    }

    @Test func multibulkAndInlineRequestsParse() {
        #expect(parse("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n") == [
            .request([bytes("GET"), bytes("k")]), .request([bytes("PING")]), .incomplete])
    }

    @Test func partialInputWaitsForTheRest() {
        var parser = RESPParser()
        for chunk in ["*2\r\n$3\r\nSE", "T\r\n$5\r\nhel", "lo\r\n"] {
            #expect(parser.next() == .incomplete)
            parser.append(bytes(chunk))
        }
        #expect(parser.next() == .request([bytes("SET"), bytes("hello")]))
    }

    @Test func anAnnouncedHugeBulkIsNotAllocatedUpFront() {
        var parser = RESPParser()
        parser.append(bytes("*2\r\n$3\r\nSET\r\n$500000000\r\nabc"))
        #expect(parser.next() == .incomplete)
        #expect(parser.bufferedCount < 64)
    }

    @Test func lengthsAboveTheLimitsAreProtocolErrors() {
        var limits = RESPLimits()
        limits.maxBulk = 10
        limits.maxArguments = 3
        #expect(parse("*1\r\n$11\r\n", limits: limits) == [.protocolError("invalid bulk length")])
        #expect(parse("*4\r\n", limits: limits) == [.protocolError("invalid multibulk length")])
        #expect(parse("*x\r\n") == [.protocolError("invalid multibulk length")])
        #expect(parse("*1\r\n$-1\r\n") == [.protocolError("invalid bulk length")])
        #expect(parse("*1\r\n+OK\r\n") == [.protocolError("expected '$', got '+'")])
        #expect(parse("SET \"a b\r\n") == [.protocolError("unbalanced quotes in request")])
    }

    @Test func unterminatedLinesAreBounded() {
        var limits = RESPLimits()
        limits.maxInline = 16
        #expect(parse(String(repeating: "A", count: 17), limits: limits) == [.protocolError("too big inline request")])
        #expect(parse("*" + String(repeating: "1", count: 17), limits: limits) == [.protocolError("too big mbulk count string")])
    }

    @Test func inlineQuotingFollowsRedis() {
        #expect(parse("SET \"a b\" 'c d' \"\\x41\\n\"\r\n").first == .request([bytes("SET"), bytes("a b"), bytes("c d"), [0x41, 0x0a]]))
    }

    @Test func emptyRequestsAreSkipped() {
        #expect(parse("\r\n*0\r\nPING\r\n") == [.request([bytes("PING")]), .incomplete])
    }

    @Test func globMatchesLikeRedis() {
        #expect(globMatch(bytes("h?llo"), bytes("hello")))
        #expect(globMatch(bytes("h[^e]llo"), bytes("hallo")))
        #expect(!globMatch(bytes("h[^e]llo"), bytes("hello")))
        #expect(globMatch(bytes("h[a-b]llo"), bytes("hallo")))
        #expect(globMatch(bytes("*"), bytes("")))
        #expect(globMatch(bytes("h\\*"), bytes("h*")))
        #expect(!globMatch(bytes("h\\*"), bytes("hx")))
        // A hostile pattern ends (bounded recursion) instead of hanging or crashing.
        #expect(!globMatch(bytes(String(repeating: "*a", count: 40) + "b"), bytes(String(repeating: "a", count: 60))))
    }

    @Test func optionsParseAndRefuseBadValues() throws {
        let options = try #require(try ServerOptions.parse(["--port", "7000", "--io-threads", "3", "--max-clients", "5"]))
        #expect(options.port == 7000 && options.ioThreads == 3 && options.maxClients == 5)
        #expect(try ServerOptions.parse(["--help"]) == nil)
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--port", "99999"]) }
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--bogus"]) }
    }
}
