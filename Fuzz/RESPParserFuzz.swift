// RESPParserFuzz.swift: libFuzzer target for kvd's request parser (and the
// KEYS glob). Built by fuzz.sh together with the parser's own sources.
//
// Properties checked on every input, besides "never crashes, never hangs":
// - the outcomes do not depend on how the bytes are split into reads;
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
