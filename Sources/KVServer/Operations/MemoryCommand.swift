// MemoryCommand.swift: MEMORY USAGE, an estimate of what one key costs in
// kvd's own layout (its bytes, plus a fixed overhead per key and per
// element: an array's header and its place in a table). Redis's figure
// comes from its allocator and differs; Redis's own suite only asks that
// it be a positive number. The other MEMORY subcommands are absent.

let memoryCommands: [Command] = [
    Command("memory", arity: -2, keys: .none) { ks, r, out in
        guard equalsIgnoringCase(r.raw(1), "usage") else {
            return out.error(
                bytes: Array("ERR unknown subcommand '".utf8) + r[1].prefix(128) + Array("'. Try MEMORY HELP.".utf8))
        }
        guard r.count == 3 || (r.count == 5 && equalsIgnoringCase(r.raw(3), "samples")) else {
            return out.error(
                r.count == 2 ? "ERR wrong number of arguments for 'memory|usage' command" : "ERR syntax error")
        }
        if r.count == 5, parseInteger(r.raw(4)) == nil { return out.error(notAnInteger) }
        guard let entry = ks.lookup(r.raw(2), now: ks.now) else { return out.null() }
        out.integer(memoryEstimate(key: r.raw(2), entry))
    }
]

/// Bytes per key beyond its name and value (its table entry, its slot,
/// the arrays' headers), and per collection element.
private let keyOverhead = 96
private let elementOverhead = 48

private func memoryEstimate(key: UnsafeRawBufferPointer, _ entry: Keyspace.Entry) -> Int {
    var total = keyOverhead + key.count + entry.value.capacity
    switch entry.collection {
    case .hash(let hash):
        for position in 0..<hash.count {
            let (field, value) = hash.entry(at: position)
            total += 2 * elementOverhead + field.count + value.count
        }
    case .set(let set):
        for position in 0..<set.count { total += elementOverhead + set[position].count }
    case .list(let list):
        for index in 0..<list.count { total += elementOverhead + list[index].count }
    case .sortedSet(let sortedSet):
        var node = sortedSet.order.first
        while let current = node {
            total += 3 * elementOverhead + current.member.count
            node = current.forward[0]
        }
    case nil:
        break
    }
    return total
}
