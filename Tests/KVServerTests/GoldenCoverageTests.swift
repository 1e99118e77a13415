// GoldenCoverageTests.swift: the golden corpus (GoldenReplies.swift, Redis
// 7.0.15's own bytes) reaches every hash, list, set and sorted-set command,
// the blocking pops among them, in RESP2 and in RESP3, and each of them on
// a key of another type (WRONGTYPE): a command added to those tables
// without a golden case fails here.
import Testing

@testable import KVServer

@Suite struct GoldenCoverageTests {
    @Test func goldenRepliesReachEveryCollectionCommandInBothProtocolsAndOnTheWrongType() {
        let families = hashCommands + setCommands + listCommands + sortedSetCommands + blockingCommands
        var resp2: Set<String> = []
        var resp3: Set<String> = []
        var wrongType: Set<String> = []
        for (name, request, _) in goldenReplies {
            let names = commandNames(bytes(request))
            if name.hasPrefix("resp3 ") { resp3.formUnion(names) } else { resp2.formUnion(names) }
            if name == "wrongtype every command" { wrongType.formUnion(names) }
        }
        #expect(families.count >= 90, "the collection tables shrank to \(families.count) commands")
        for command in families {
            #expect(resp2.contains(command.name), "\(command.name): no RESP2 golden case")
            #expect(resp3.contains(command.name), "\(command.name): no RESP3 golden case")
            #expect(wrongType.contains(command.name), "\(command.name): not in the WRONGTYPE case")
        }
    }
}

/// The lowercased names of the commands in a request stream: RESP arrays
/// (the first bulk of each) and inline lines (the first word of each).
private func commandNames(_ stream: [UInt8]) -> [String] {
    var names: [String] = []
    var index = 0
    func line() -> [UInt8] {
        let start = index
        while index < stream.count && stream[index] != 10 { index += 1 }
        let end = index > start && stream[index - 1] == 13 ? index - 1 : index
        index += 1
        return Array(stream[start..<end])
    }
    while index < stream.count {
        let header = line()
        if header.first == UInt8(ascii: "*"), let count = Int(String(decoding: header.dropFirst(), as: UTF8.self)) {
            for argument in 0..<max(count, 0) {
                guard let length = Int(String(decoding: line().dropFirst(), as: UTF8.self)), length >= 0,
                    index + length <= stream.count
                else { return names }
                if argument == 0 {
                    names.append(String(decoding: lowercased(Array(stream[index..<(index + length)])), as: UTF8.self))
                }
                index += length + 2
            }
        } else if let word = header.split(separator: UInt8(ascii: " ")).first {
            names.append(String(decoding: lowercased(Array(word)), as: UTF8.self))
        }
    }
    return names
}
