// RESPParserFuzz.swift: libFuzzer target for kvd's request parser (and the
// KEYS glob). Built by fuzz.sh together with the parser's own sources.
//
// Properties checked on every input, besides "never crashes, never hangs":
// - the outcomes do not depend on how the bytes are split into reads;
// - nor on whether requests are taken one by one (`next`) or into a batch
//   that shares the parser's buffer (`nextRequest(into:sharing:)`, what a
//   connection on the core loop does), with a large bulk's bytes received
//   straight into it (`receiveLargeBulk`, at most 5 bytes at a time);
// - every request has at least one argument;
// - a protocol error ends the stream (nothing is parsed after it).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESPParser(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    guard let first = bytes.first else { return 0 }
    var limits = RESPLimits()
    limits.maxBulk = 1 << 16
    limits.maxArguments = 512
    limits.maxInline = 1024
    limits.largeBulk = 32  // so that the path of a large last argument is fuzzed too

    let whole = outcomes(of: [Array(bytes.dropFirst())], limits: limits)
    // Split the same bytes into reads of a size the first byte chooses.
    let chunk = Int(first % 17) + 1
    var pieces: [[UInt8]] = []
    var index = 1
    while index < bytes.count {
        pieces.append(Array(bytes[index..<min(index + chunk, bytes.count)]))
        index += chunk
    }
    let split = outcomes(of: pieces, limits: limits)
    precondition(whole == split, "parser outcomes depend on how the input was split into reads")
    let batched = sharedBatchOutcomes(of: pieces, limits: limits)
    precondition(whole == batched, "parser outcomes differ when batches share the parser's buffer")

    // The glob matcher on a pattern and a string cut from the input.
    let cut = bytes.count / 2
    _ = globMatch(Array(bytes[..<cut].prefix(64)), Array(bytes[cut...].prefix(256)))
    return 0
}

private func outcomes(of reads: [[UInt8]], limits: RESPLimits) -> [RESPParser.Outcome] {
    var parser = RESPParser(limits: limits)
    var seen: [RESPParser.Outcome] = []
    for read in reads {
        parser.append(read)
        while true {
            let outcome = parser.next()
            if outcome == .incomplete { break }
            if case .request(let arguments) = outcome {
                precondition(!arguments.isEmpty, "an empty request was returned")
            }
            seen.append(outcome)
            if case .protocolError = outcome { return seen }
        }
    }
    return seen
}

/// The same outcomes, taken read by read into one batch that shares the
/// parser's buffer, emptied after each read as a connection does; bytes
/// that a large bulk is waiting for go straight into it, as a connection
/// reads them.
private func sharedBatchOutcomes(of reads: [[UInt8]], limits: RESPLimits) -> [RESPParser.Outcome] {
    var parser = RESPParser(limits: limits)
    var batch = RequestBatch()
    var seen: [RESPParser.Outcome] = []
    for read in reads {
        var rest = read[...]
        while !rest.isEmpty,
            let count = parser.receiveLargeBulk(
                atMost: 5,
                { room in
                    let count = min(room.count, rest.count)
                    room.copyBytes(from: rest.prefix(count))
                    return count
                })
        {
            rest = rest.dropFirst(count)
        }
        parser.append(Array(rest))
        var step = RESPParser.Step.appended
        while step == .appended { step = parser.nextRequest(into: &batch, sharing: true) }
        batch.forEach { request in
            seen.append(.request(Array(request)))
            return true
        }
        batch.removeAll()
        if case .protocolError(let message) = step {
            seen.append(.protocolError(message))
            return seen
        }
    }
    return seen
}
