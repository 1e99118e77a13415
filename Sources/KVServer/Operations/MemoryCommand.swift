// MemoryCommand.swift: MEMORY USAGE, an estimate of what one key costs in
// kvd's own layout (its bytes, plus a fixed overhead per key and per
// element: an array's header and its place in a table), from the first
// SAMPLES elements (5 by default, 0 for all) scaled to the whole, as Redis
// samples. Redis's figure comes from its allocator and differs; Redis's
// own suite only asks that it be a positive number. MEMORY STATS has
// Redis's fields, from glibc's counters and those estimates (see
// `memoryStats`). DOCTOR, MALLOC-STATS, PURGE and HELP answer as Redis
// built with libc malloc does.
import CMalloc

let memoryCommands: [Command] = [
    Command("memory", arity: -2, keys: .none) { dispatcher, session, r, out in
        let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
        switch sub {
        case "usage": memoryUsage(dispatcher.databases[session.database], r, &out)
        case "stats": memoryStats(dispatcher, &out)
        case "doctor": out.verbatim(memoryDoctorReport())
        // glibc's malloc, like Redis built with libc: no allocator report.
        case "malloc-stats": out.bulk("Stats not supported for the current allocator")
        case "purge":
            // Redis asks jemalloc to purge its dirty pages; glibc's equivalent.
            _ = malloc_trim(0)
            out.ok()
        case "help":
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
        default:
            out.unknownSubcommand(r, of: "MEMORY")
        }
    }
]

private func memoryUsage(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    // SAMPLES as often as given, each read in turn, as Redis reads them.
    var samples = 5
    var index = 3
    while index < r.count {
        guard equalsIgnoringCase(r.raw(index), "samples") && index + 1 < r.count else {
            return out.error("ERR syntax error")
        }
        guard let count = parseInteger(r.raw(index + 1)) else { return out.error(notAnInteger) }
        guard count >= 0 else { return out.error("ERR syntax error") }
        samples = count == 0 ? Int.max : count
        index += 2
    }
    // The key as it is, due or not, and no read: Redis finds it in its
    // dictionary, without a lookup (no expiry, no keyspace hit or miss).
    guard let entry = ks.lookup(r.raw(2), now: .min, touching: false, use: .uncounted) else { return out.null() }
    out.integer(memoryEstimate(key: r.raw(2), entry, samples: samples))
}

/// The allocator's figures MEMORY STATS needs that only time gives: what
/// was allocated when the server started, and the most seen since (read
/// whenever MEMORY STATS runs: kvd has no periodic job to read it, as
/// Redis's cron does, so a peak between two calls is missed).
final class MemoryFigures {
    let startupAllocated = allocatedBytes()
    private(set) var peakAllocated = 0

    /// Allocated bytes now, noted as the peak if it is one.
    func sample() -> Int {
        let now = allocatedBytes()
        peakAllocated = max(peakAllocated, now)
        return now
    }
}

/// MEMORY STATS: Redis 7.0's fields in its order. kvd's figures: the
/// heap's (counted by kvd's malloc, as INFO's used_memory) and the
/// resident size; clients.normal the bytes CLIENT LIST shows queued in and
/// out; per database (only those with keys, as Redis) its keys' and
/// expiries' table overhead as MEMORY USAGE estimates it; aof.buffer the
/// append-only file's bytes not written yet. Replication and cluster links
/// are 0 (kvd has none); so are lua.caches and functions.caches, as kvd
/// keeps scripts and functions compiled in their Lua heaps, which INFO's
/// used_memory_vm_total counts together, not apart. With glibc's malloc Redis reports the allocator's
/// active and resident bytes as the process's resident size, and so does
/// kvd.
private func memoryStats(_ dispatcher: Dispatcher, _ out: inout ReplyWriter) {
    let total = dispatcher.memory.sample()
    let peak = dispatcher.memory.peakAllocated
    let startup = dispatcher.memory.startupAllocated
    let resident = residentBytes()
    let clients = dispatcher.sessions.all.reduce(0) {
        $0 + $1.info.figures.unsentBytes + $1.info.figures.unreadBytes
    }
    let databases = (0..<Databases.selectable).map { dispatcher.databases[$0] }.enumerated().filter { $0.1.count > 0 }
    let tables = databases.map {
        (index: $0.0, main: $0.1.count * keyOverhead, expires: $0.1.expiresCount * keyOverhead)
    }
    let overhead = startup + clients + tables.reduce(0) { $0 + $1.main + $1.expires }
    let keys = databases.reduce(0) { $0 + $1.1.count }
    let net = max(total - startup, 0)
    let dataset = max(total - overhead, 0)
    func ratio(_ a: Int, _ b: Int) -> Double { b > 0 ? Double(a) / Double(b) : 0 }
    func double(_ value: Double) { withScoreText(value) { out.double(text: $0) } }
    out.mapHeader(27 + tables.count)
    for (name, value) in [
        ("peak.allocated", peak), ("total.allocated", total), ("startup.allocated", startup),
        ("replication.backlog", 0), ("clients.slaves", 0), ("clients.normal", clients), ("cluster.links", 0),
        ("aof.buffer", dispatcher.appendOnly.bufferedBytes), ("lua.caches", 0), ("functions.caches", 0),
    ] {
        out.bulk(name)
        out.integer(value)
    }
    for table in tables {
        out.bulk("db.\(table.index)")
        out.mapHeader(3)
        out.bulk("overhead.hashtable.main")
        out.integer(table.main)
        out.bulk("overhead.hashtable.expires")
        out.integer(table.expires)
        out.bulk("overhead.hashtable.slot-to-keys")
        out.integer(0)
    }
    out.bulk("overhead.total")
    out.integer(overhead)
    out.bulk("keys.count")
    out.integer(keys)
    out.bulk("keys.bytes-per-key")
    out.integer(keys > 0 ? net / keys : 0)
    out.bulk("dataset.bytes")
    out.integer(dataset)
    out.bulk("dataset.percentage")
    double(ratio(dataset, net) * 100)
    out.bulk("peak.percentage")
    double(ratio(total, peak) * 100)
    // Redis with libc: allocated is what is in use, active and resident
    // the process's resident size; so allocator-rss and rss-overhead are
    // 1 and 0, and the fragmentation is resident over allocated.
    out.bulk("allocator.allocated")
    out.integer(total)
    out.bulk("allocator.active")
    out.integer(resident)
    out.bulk("allocator.resident")
    out.integer(resident)
    out.bulk("allocator-fragmentation.ratio")
    double(ratio(resident, total))
    out.bulk("allocator-fragmentation.bytes")
    out.integer(resident - total)
    out.bulk("allocator-rss.ratio")
    double(1)
    out.bulk("allocator-rss.bytes")
    out.integer(0)
    out.bulk("rss-overhead.ratio")
    double(1)
    out.bulk("rss-overhead.bytes")
    out.integer(0)
    out.bulk("fragmentation")
    double(ratio(resident, total))
    out.bulk("fragmentation.bytes")
    out.integer(resident - total)
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

private func memoryEstimate(key: UnsafeRawBufferPointer, _ entry: Keyspace.Entry, samples: Int) -> Int {
    /// The first `samples` of `count` elements' sizes, scaled to all of them.
    func scaled(_ count: Int, _ size: (Int) -> Int) -> Int {
        let taken = min(count, samples)
        guard taken > 0 else { return 0 }
        let sum = (0..<taken).reduce(0) { $0 + size($1) }
        return taken == count ? sum : Int(Double(sum) / Double(taken) * Double(count))
    }
    var total = keyOverhead + key.count + entry.value.capacity
    switch entry.collection {
    case .hash(let hash):
        let entries = hash.reader()
        // A compact hash's pair costs its bytes and its two lengths.
        let overhead = hash.isCompact ? 2 : 2 * elementOverhead
        total += scaled(hash.count) {
            let (field, value) = entries[$0]
            return overhead + field.count + value.count
        }
    case .set(let set):
        total += scaled(set.count) { elementOverhead + set[$0].count }
    case .list(let list):
        total += scaled(list.count) { elementOverhead + list[$0].count }
    case .sortedSet(let sortedSet):
        var node = sortedSet.order.first
        total += scaled(sortedSet.count) { _ in
            defer { node = node?.next }
            return 3 * elementOverhead + (node?.memberBytes.count ?? 0)
        }
    case nil:
        break
    }
    return total
}
