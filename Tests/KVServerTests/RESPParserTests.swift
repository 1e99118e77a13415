// RESPParserTests.swift: the request parser's framing, limits and errors.
import Testing

@testable import KVServer

@Suite(.timeLimit(.minutes(5))) struct RESPParserTests {
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
        #expect(
            parse("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n") == [
                .request([bytes("GET"), bytes("k")]), .request([bytes("PING")]), .incomplete,
            ])
    }

    // What a connection on the core loop does: the batch points into the
    // parser's buffer (multibulk arguments are not copied; an inline one,
    // unescaped, is), and the parser's bytes move on only after it is emptied.
    @Test func aBatchSharingTheParsersBufferHoldsTheSameRequests() {
        var parser = RESPParser()
        var batch = RequestBatch()
        var seen: [[[UInt8]]] = []
        for chunk in ["*2\r\n$3\r\nGET\r\n$1\r\nk\r\nset \"a b\" c\r\n*1\r\n$4\r\nPI", "NG\r\n*1\r\n$-0\r\n\r\n"] {
            parser.append(bytes(chunk))
            while parser.nextRequest(into: &batch, sharing: true) == .appended {}
            #expect(batch.sharesBytes)
            batch.forEach { request in
                seen.append(Array(request))
                return true
            }
            batch.removeAll()
            #expect(!batch.sharesBytes)
        }
        #expect(
            seen == [
                [bytes("GET"), bytes("k")], [bytes("set"), bytes("a b"), bytes("c")], [bytes("PING")], [[]],
            ])
        // A request still arriving is not shared: an empty batch that held the
        // buffer would make each append copy all of it (quadratic in a large
        // argument's size; make hostile showed it).
        parser.append(bytes("*2\r\n$3\r\nSET\r\n$100000\r\n" + String(repeating: "x", count: 50_000)))
        #expect(parser.nextRequest(into: &batch, sharing: true) == .incomplete)
        #expect(!batch.sharesBytes && batch.count == 0)
    }

    // A large bulk that ends its request is read into an array of its own,
    // which the batch keeps whole (SET stores it without a copy); what
    // follows it in the same reads is parsed after it, in order.
    @Test func aLargeLastArgumentArrivesIntoAnArrayOfItsOwn() {
        var limits = RESPLimits()
        limits.largeBulk = 16
        var parser = RESPParser(limits: limits)
        let value = String(repeating: "v", count: 40)
        let stream = bytes("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40\r\n\(value)\r\n*1\r\n$4\r\nPING\r\n")
        var batch = RequestBatch()
        var seen: [[[UInt8]]] = []
        var ownedCounts: [Int?] = []
        for index in stride(from: 0, to: stream.count, by: 7) {
            parser.append(Array(stream[index..<min(index + 7, stream.count)]))
            while parser.nextRequest(into: &batch, sharing: true) == .appended {}
            batch.forEach { request in
                seen.append(Array(request))
                ownedCounts.append(request.ownedArgument(request.count - 1)?.count)
                return true
            }
            batch.removeAll()
        }
        #expect(seen == [[bytes("SET"), bytes("k"), bytes(value)], [bytes("PING")]])
        #expect(ownedCounts == [40, nil])
        #expect(parser.bufferedCount == 0)
    }

    // A connection reads a large bulk straight into its array: never more
    // than the room left (what follows it stays in the socket), never more
    // than asked per read, and nothing is received when no bulk is arriving.
    @Test func aLargeBulkIsReceivedStraightIntoItsArray() {
        var limits = RESPLimits()
        limits.largeBulk = 16
        var parser = RESPParser(limits: limits)
        var batch = RequestBatch()
        var called = false
        #expect(
            parser.receiveLargeBulk(atMost: 8) { _ in
                called = true; return 0
            } == nil && !called)
        parser.append(bytes("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40\r\nvvvv"))
        #expect(parser.nextRequest(into: &batch, sharing: true) == .incomplete)
        var socket = bytes(String(repeating: "w", count: 36) + "\r\n*1\r\n$4\r\nPING\r\n")[...]
        var rooms: [Int] = []
        while let count = parser.receiveLargeBulk(
            atMost: 8,
            { room in
                rooms.append(room.count)
                let count = min(room.count, socket.count)
                room.copyBytes(from: socket.prefix(count))
                return count
            })
        {
            socket = socket.dropFirst(count)
        }
        #expect(rooms == [8, 8, 8, 8, 6], "the rooms offered were \(rooms)")
        #expect(parser.nextRequest(into: &batch, sharing: true) == .appended)
        parser.append(Array(socket))
        #expect(parser.nextRequest(into: &batch, sharing: false) == .appended)
        var seen: [[[UInt8]]] = []
        batch.forEach { request in
            seen.append(Array(request))
            return true
        }
        #expect(
            seen == [[bytes("SET"), bytes("k"), bytes("vvvv" + String(repeating: "w", count: 36))], [bytes("PING")]])
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
        #expect(
            parse("*" + String(repeating: "1", count: 17), limits: limits) == [
                .protocolError("too big mbulk count string")
            ])
    }

    /// Regression (found by the fuzzer, Fuzz/RESPParserFuzz.swift): a line
    /// longer than the inline limit was refused when its newline had not
    /// arrived yet, but parsed when it had, so the outcome depended on how
    /// the bytes were split into reads.
    @Test func theOutcomeDoesNotDependOnHowReadsAreSplit() {
        let input = hexBytes(
            "00224343a543434378434343fe2a5c5c545c785c7878431c545c5c045c43432d2a5c5c545c785c78000000007843010000095c785c785c5c545c785c784343a5437843a543785c5c545c785c784343a5434343432a5c43432a5c5c5c545c5c04435c545c5c045c5c54ff785ce8780000000000095c785c785c5c54010000000000000078435c545c5ca543785c5c545c785c786343a5434343432a5c43432a5c5c545c785c7878435c545c5c045c43432a5c415c545c785c787843430d000000000000002a3f5c43432a5c5c545c785c7878435c545c5c045c43432d2a5c5c545c785c78784301000000000000095c785c785c5c545c785c784343a543784b5c545c5c045c43432d2a785c545c785c785c5c545c785c784343a543785c545c5c045c43432d2a5c5c545c785c6e78435c54605c045c5c545c785ce8785c5c545c785c784343a5434343432a5c43432a5c5c545c785c7878435c545c5c045c43432a5c415c545c785c787843432a3f5c43432a5c5c545c785c7878435c545c5c045c43432d2a5c5c545c785c78784301000000000000095c785c785c5c54010000000000000078435c545c5c045c43432d2a785c545c785c785c5c545c785c784343a543785c5c545c785c784343a5434343432a5c43432a5c5c045c5c54ff785ce8780000000000095c785c785c5c54010000000000000078435c545c5ca543785c5c545c785c786343a5434343432a5c43432a5c5c545c785c7878435c545c5c045c43432a5c415c545c785c787843430d000000000000002a3f5c43432a5c5c545c785c7878435c545c5c045c43432d2a5c5c545c785c78784301000000000000095c785c785c5c545c785c784343a543784b5c545c5c045c43432d2a785c545c785c785c5c545c785c784343a543785c545c5c045c43432d2a5c5c545c785c6e78435c54605c045c5c545c785ce8785c5c545c785c784343a5434343432a5c43432a5c5c545c785c7878435c545c5c045c43432a5c415c545c785c787843432a3f5c43432a5c5c545c785c7878435c545c5c045c43432d2a5c5c545c785c78784301000000000000095c785c785c5c54010000000000000078435c545c5c045c43432d2a785c545c785c785c5c545c785c784343a543785c5c545c785c784343a5434343432a5c43432a5c5c545c785c7878435c545c5c045c43432a5c415c545c785c787843432a3f5c43432a5c5c545c785c7878435c545c5c045c435c545c785c7878435c545c5c045c43432a5c415c545c785c787843432a3f5c43432a5c5c545c785c7878435c545c5c045c43432d2a5c5c430100005c5c545c785c784343a543785c545c5c045c43432d2a5c5c545c785c6e78435c095c545c785c78784301000000000000095c785c5c045c43432d2a785c545c785c785c5c545c785c784343a543785c78784378435e545c5c045c0ae3"
        )
        var limits = RESPLimits()
        limits.maxBulk = 1 << 16
        limits.maxArguments = 512
        limits.maxInline = 1024
        func outcomes(_ reads: [[UInt8]]) -> [RESPParser.Outcome] {
            var parser = RESPParser(limits: limits)
            var seen: [RESPParser.Outcome] = []
            for read in reads {
                parser.append(read)
                while true {
                    let outcome = parser.next()
                    if outcome == .incomplete { break }
                    seen.append(outcome)
                    if case .protocolError = outcome { return seen }
                }
            }
            return seen
        }
        let whole = outcomes([Array(input.dropFirst())])
        #expect(whole == outcomes(input.dropFirst().map { [$0] }))
        #expect(whole == [.protocolError("too big inline request")])
        var short = RESPLimits()
        short.maxInline = 8
        #expect(parse("PING PING PING\r\n", limits: short) == [.protocolError("too big inline request")])
    }

    // The common request takes a one-pass path (parseCanonicalMultibulk);
    // everything else the general one, and every request when no bulk may be
    // read whole (`largeBulk` 0 turns the one-pass path off). Both must give
    // the same outcomes, errors included, under tight and loose limits, for
    // well-formed requests (multibulk and inline, several to a batch, read
    // in pieces) and for every byte of them changed, removed or doubled.
    @Test func theOnePassPathAndTheGeneralOneAgree() {
        var random = SeededGenerator(seed: 0x5EED_0001)
        func outcomes(_ input: [UInt8], _ limits: RESPLimits, shared: Bool, piece: Int) -> [String] {
            var parser = RESPParser(limits: limits)
            var seen: [String] = []
            var offset = 0
            while offset < input.count {
                parser.append(Array(input[offset..<Swift.min(offset + piece, input.count)]))
                offset += piece
                var batch = RequestBatch()
                var step = parser.nextRequest(into: &batch, sharing: shared)
                while step == .appended { step = parser.nextRequest(into: &batch, sharing: shared) }
                batch.forEach { request in
                    seen.append(Array(request).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "|"))
                    return true
                }
                if case .protocolError = step {
                    seen.append("\(step)")
                    return seen
                }
            }
            return seen
        }
        let alphabet = Array("*$-\r\n0123456789abc".utf8)
        for round in 0..<3_000 {
            var limits = RESPLimits()
            limits.maxInline = [3, 4, 8, 64 * 1024][Int.random(in: 0..<4, using: &random)]
            limits.maxArguments = [2, 5, 33, Int(Int32.max)][Int.random(in: 0..<4, using: &random)]
            limits.maxBulk = [3, 8, 512 * 1024 * 1024][Int.random(in: 0..<3, using: &random)]
            var general = limits
            general.largeBulk = 0
            var wire: [UInt8] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                if Int.random(in: 0..<5, using: &random) == 0 {
                    wire += bytes("PING a\r\n")
                    continue
                }
                let count = Int.random(in: 1...40, using: &random)
                wire += bytes("*\(count)\r\n")
                for _ in 0..<count {
                    let argument = (0..<Int.random(in: 0...12, using: &random)).map { _ in
                        alphabet.randomElement(using: &random)!
                    }
                    wire += bytes("$\(argument.count)\r\n") + argument + bytes("\r\n")
                }
            }
            if round % 3 != 0 {
                let at = Int.random(in: 0..<wire.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: wire[at] = alphabet.randomElement(using: &random)!
                case 1: wire.remove(at: at)
                default: wire.insert(wire[at], at: at)
                }
            }
            let piece = [wire.count, 1, 7][round % 3]
            for shared in [false, true] {
                let fast = outcomes(wire, limits, shared: shared, piece: piece)
                let slow = outcomes(wire, general, shared: shared, piece: piece)
                #expect(
                    fast == slow,
                    "round \(round), limits \(limits), pieces of \(piece): \(String(decoding: wire, as: UTF8.self).debugDescription)"
                )
                if fast != slow { return }
            }
        }
    }

    @Test func aLargeRequestArrivingInManyReadsParsesExactlyOnce() {
        // A small request first, so the buffer is compacted while the large one
        // is still incomplete and the resumed checks must follow the shift.
        let arguments = (0..<20_000).map { Array("arg\($0)".utf8) }
        var wire = bytes("PING\r\n*\(arguments.count + 1)\r\n$4\r\nMSET\r\n")
        for argument in arguments { wire += bytes("$\(argument.count)\r\n") + argument + [13, 10] }
        var parser = RESPParser()
        var seen: [RESPParser.Outcome] = []
        var index = 0
        while index < wire.count {
            parser.append(Array(wire[index..<min(index + 97, wire.count)]))
            index += 97
            while case let outcome = parser.next(), outcome != .incomplete { seen.append(outcome) }
        }
        #expect(seen == [.request([bytes("PING")]), .request([bytes("MSET")] + arguments)])
        #expect(parser.bufferedCount == 0)
    }

    @Test func inlineQuotingFollowsRedis() {
        #expect(
            parse("SET \"a b\" 'c d' \"\\x41\\n\"\r\n").first
                == .request([bytes("SET"), bytes("a b"), bytes("c d"), [0x41, 0x0a]]))
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
        let options = try #require(
            try ServerOptions.parse(["--port", "7000", "--io-threads", "3", "--max-clients", "5"]))
        #expect(options.port == 7000 && options.ioThreads == 3 && options.maxClients == 5)
        #expect(try ServerOptions.parse(["--help"]) == nil)
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--port", "99999"]) }
        #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(["--bogus"]) }
    }
}

/// Bytes from a hex string (for fuzzer-found inputs).
func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
