// MemoryCommand.swift: MEMORY USAGE, an estimate of what one key costs in
// kvd's own layout (its bytes, plus a fixed overhead per key and per
// element: an array's header and its place in a table). Redis's figure
// comes from its allocator and differs; Redis's own suite only asks that
// it be a positive number. DOCTOR, MALLOC-STATS, PURGE and HELP answer as
// Redis built with libc malloc does; STATS is absent.
import CMalloc

let memoryCommands: [Command] = [
    Command("memory", arity: -2, keys: .none) { ks, r, out in
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "usage": memoryUsage(ks, r, &out)
        case "doctor" where r.count == 2: out.verbatim(memoryDoctorReport())
        // glibc's malloc, like Redis built with libc: no allocator report.
        case "malloc-stats" where r.count == 2: out.bulk("Stats not supported for the current allocator")
        case "purge" where r.count == 2:
            // Redis asks jemalloc to purge its dirty pages; glibc's equivalent.
            _ = malloc_trim(0)
            out.ok()
        case "help" where r.count == 2:
            out.help(
                "MEMORY",
                [
                    "DOCTOR", "    Return memory problems reports.",
                    "MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
                    "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
                    "STATS", "    Return information about the memory usage of the server.",
                    "USAGE <key> [SAMPLES <count>]",
                    "    Return memory in bytes used by <key> and its value. Nested values are",
                    "    sampled up to <count> times (default: 5, 0 means sample all).",
                ])
        case "doctor", "malloc-stats", "purge", "help":
            out.error("ERR wrong number of arguments for 'memory|\(sub)' command")
        default:
            out.error(
                bytes: Array("ERR unknown subcommand '".utf8) + r[1].prefix(128) + Array("'. Try MEMORY HELP.".utf8))
        }
    }
]

private func memoryUsage(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard r.count == 3 || (r.count == 5 && equalsIgnoringCase(r.raw(3), "samples")) else {
        return out.error(r.count == 2 ? "ERR wrong number of arguments for 'memory|usage' command" : "ERR syntax error")
    }
    if r.count == 5, parseInteger(r.raw(4)) == nil { return out.error(notAnInteger) }
    guard let entry = ks.lookup(r.raw(2), now: ks.now) else { return out.null() }
    out.integer(memoryEstimate(key: r.raw(2), entry))
}

/// MEMORY DOCTOR: Redis's report, from the checks kvd can make: too little
/// memory in use to judge (under 5 MB), and a resident size much larger
/// than what is allocated (over 1.4 times and 10 MB). Redis's checks of
/// the peak, the allocator's own fragmentation, client buffers and the
/// script cache are not made.
private func memoryDoctorReport() -> String {
    let allocated = allocatedBytes()
    let resident = residentBytes()
    guard allocated >= 5 * 1024 * 1024 else {
        return "Hi Sam, this instance is empty or is using very little memory, "
            + "my issues detector can't be used in these conditions. "
            + "Please, leave for your mission on Earth and fill it with some data. "
            + "The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
    }
    guard Double(resident) / Double(allocated) > 1.4, resident - allocated > 10 << 20 else {
        return "Hi Sam, I can't find any memory issue in your instance. "
            + "I can only account for what occurs on this base.\n"
    }
    return "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
        + " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"libc\".\n\n"
        + "I'm here to keep you safe, Sam. I want to help you.\n"
}

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
        total += list.allocatedBytes
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
