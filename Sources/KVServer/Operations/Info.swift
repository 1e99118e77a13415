// Info.swift: INFO, in Redis 7.0's sections and order. Each section is one
// row of `Info.sections`: its name, whether a plain INFO shows it, and the
// core's own lines; whoever runs the core (Server: ServerInfo.swift) adds
// the lines only it knows to the sections of the same name, and sections
// of its own (kvd's loops) after Redis's. Adding a section is adding a row.
import CMalloc
import Glibc

let infoCommands: [Command] = [
    Command("info", arity: -1, keys: .none) { dispatcher, _, r, out in dispatcher.info.reply(r, dispatcher, &out) },
    // ROLE: a master with no replicas, at replication offset 0.
    Command("role", arity: 1, keys: .none) { _, _, out in
        out.arrayHeader(3)
        out.bulk("master")
        out.integer(0)
        out.arrayHeader(0)
    },
]

/// One INFO section: its name, whether INFO with no argument (or
/// `default`) shows it, and the core's lines for it.
struct InfoSection: Sendable {
    let name: String
    let inDefault: Bool
    let lines: @Sendable (Dispatcher) -> [String]
}

/// INFO's sources. Core loop only, with the dispatcher.
struct Info {
    /// The sections that describe the server (not the keyspace), from
    /// whoever runs it.
    let serverSections: @Sendable () -> [(section: String, lines: [String])]
    /// A random 40-hex-digit id for this run (run_id, master_replid).
    let runID = randomHex(40)
    let replicationID = randomHex(40)

    /// Redis 7.0's sections, in its order.
    static let sections: [InfoSection] = [
        InfoSection(name: "Server", inDefault: true) { _ in [] },
        InfoSection(name: "Clients", inDefault: true) { dispatcher in
            [
                "maxclients:\(dispatcher.settings.maxClients.load(ordering: .relaxed))",
                // Clients held by CLIENT PAUSE count as blocked, as in Redis.
                "blocked_clients:\(dispatcher.blocked.count + dispatcher.pause.held.count)", "tracking_clients:0",
            ]
        },
        InfoSection(name: "Memory", inDefault: true) {
            memoryLines($0.databases.memory) + $0.scripts.infoLines($0.databases.functions)
        },
        InfoSection(name: "Persistence", inDefault: true) {
            $0.persistence.infoLines($0.databases) + $0.appendOnly.infoLines()
        },
        InfoSection(name: "Stats", inDefault: true) { dispatcher in
            [
                "total_commands_processed:\(dispatcher.stats.commandsProcessed)",
                "expired_keys:\(dispatcher.databases.expiredKeys)",
                "evicted_keys:\(dispatcher.evictor.evictedKeys)",
                "keyspace_hits:\(dispatcher.databases.reads.hits)",
                "keyspace_misses:\(dispatcher.databases.reads.misses)",
                "total_error_replies:\(dispatcher.stats.totalErrorReplies)",
                "reclaimed_buffers:\(Reclaimer.reclaimed)",
            ]
        },
        InfoSection(name: "Replication", inDefault: true) { dispatcher in
            [
                "role:master", "connected_slaves:0", "master_failover_state:no-failover",
                "master_replid:\(dispatcher.info.replicationID)",
                "master_replid2:0000000000000000000000000000000000000000", "master_repl_offset:0",
                "second_repl_offset:-1", "repl_backlog_active:0", "repl_backlog_size:1048576",
                "repl_backlog_first_byte_offset:0", "repl_backlog_histlen:0",
            ]
        },
        InfoSection(name: "CPU", inDefault: true) { _ in cpuLines() },
        InfoSection(name: "Modules", inDefault: true) { _ in [] },
        InfoSection(name: "Commandstats", inDefault: false) { $0.stats.commandStatsLines() },
        InfoSection(name: "Errorstats", inDefault: true) { $0.stats.errorStatsLines() },
        InfoSection(name: "Latencystats", inDefault: false) { $0.stats.latencyStatsLines() },
        InfoSection(name: "Cluster", inDefault: true) { _ in ["cluster_enabled:0"] },
        InfoSection(name: "Keyspace", inDefault: true) { dispatcher in
            let now = dispatcher.databases.clock.now
            return dispatcher.databases.enumerated().compactMap { index, db in
                db.count == 0
                    ? nil
                    : "db\(index):keys=\(db.count),expires=\(db.expiresCount),avg_ttl=\(db.averageTTL(now: now))"
            }
        },
    ]

    /// INFO [section ...]: the sections asked for, in Redis's order and
    /// text format; `all` is every section, `everything` too (kvd has no
    /// modules), `default` (or no argument) the default ones.
    func reply(_ r: Request, _ dispatcher: Dispatcher, _ out: inout ReplyWriter) {
        var wanted = Set(r.dropFirst().map { String(decoding: lowercased($0), as: UTF8.self) })
        if wanted.isEmpty { wanted = ["default"] }
        let all = wanted.contains("all") || wanted.contains("everything")
        let defaults = wanted.contains("default")
        var fromServer = serverSections()
        var chosen: [(name: String, lines: [String])] = []
        func take(_ name: String) -> [String] {
            guard let index = fromServer.firstIndex(where: { $0.section == name }) else { return [] }
            return fromServer.remove(at: index).lines
        }
        for section in Info.sections {
            let lines = take(section.name)
            guard all || (defaults && section.inDefault) || wanted.contains(section.name.lowercased()) else {
                continue
            }
            chosen.append((section.name, lines + section.lines(dispatcher)))
        }
        // kvd's own sections (its loops): with ALL or by name.
        for section in fromServer where all || wanted.contains(section.section.lowercased()) {
            chosen.append((section.section, section.lines))
        }
        var text = ""
        for (name, lines) in chosen {
            if !text.isEmpty { text += "\r\n" }
            text += "# \(name)\r\n"
            for line in lines { text += line + "\r\n" }
        }
        out.verbatim(text)
    }
}

/// Redis's bytesToHuman: B under 1 KiB, then K, M, G, T, P with two decimals.
func humanBytes(_ bytes: Int) -> String {
    guard bytes >= 1024 else { return "\(bytes)B" }
    var value = Double(bytes) / 1024
    for unit in ["K", "M", "G", "T"] {
        if value < 1024 { return fixed(value, 2) + unit }
        value /= 1024
    }
    return fixed(value, 2) + "P"
}

/// The bytes the allocator has handed out and not had back, Redis's
/// used_memory: counted by kvd's executable as it allocates
/// (CHeapAccounting), else a sanitizer's own count, else glibc's
/// mallinfo2 (small blocks in use plus large mapped ones; a walk of the
/// free lists, in kvd-allocations only).
func allocatedBytes() -> Int {
    Int(kvd_allocated_bytes())
}

/// The process's resident set size, from /proc/self/statm.
func residentBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = read(fd, &buffer, buffer.count)
    guard count > 0 else { return 0 }
    let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
    return pages * sysconf(Int32(_SC_PAGESIZE))
}

private func memoryLines(_ policy: MemoryPolicy) -> [String] {
    let used = allocatedBytes()
    let resident = residentBytes()
    let system = sysconf(Int32(_SC_PHYS_PAGES)) * sysconf(Int32(_SC_PAGESIZE))
    return [
        "used_memory:\(used)", "used_memory_human:\(humanBytes(used))", "used_memory_rss:\(resident)",
        "used_memory_rss_human:\(humanBytes(resident))", "total_system_memory:\(system)",
        "total_system_memory_human:\(humanBytes(system))", "maxmemory:\(policy.maxmemory)",
        "maxmemory_human:\(humanBytes(policy.maxmemory))", "maxmemory_policy:\(policy.policy.name)",
        // What eviction leaves out of used_memory: what the reclaiming
        // thread has yet to free (Storage/Eviction/Evictor.swift).
        "mem_not_counted_for_evict:\(Reclaimer.pendingBytes)",
        "mem_fragmentation_ratio:\(fixed(used > 0 ? Double(resident) / Double(used) : 0, 2))",
        "mem_allocator:libc", "lazyfree_pending_objects:\(Reclaimer.pending)",
    ]
}

private func cpuLines() -> [String] {
    func seconds(_ time: timeval) -> String {
        let micros = String(time.tv_usec)
        return "\(time.tv_sec)." + String(repeating: "0", count: max(0, 6 - micros.count)) + micros
    }
    var process = rusage()
    var children = rusage()
    var thread = rusage()
    getrusage(RUSAGE_SELF.rawValue, &process)
    getrusage(RUSAGE_CHILDREN.rawValue, &children)
    // Linux's RUSAGE_THREAD (1), which Glibc hides without _GNU_SOURCE:
    // INFO runs on the core loop's thread, kvd's counterpart of Redis's main thread.
    getrusage(1, &thread)
    return [
        "used_cpu_sys:\(seconds(process.ru_stime))", "used_cpu_user:\(seconds(process.ru_utime))",
        "used_cpu_sys_children:\(seconds(children.ru_stime))",
        "used_cpu_user_children:\(seconds(children.ru_utime))",
        "used_cpu_sys_main_thread:\(seconds(thread.ru_stime))",
        "used_cpu_user_main_thread:\(seconds(thread.ru_utime))",
    ]
}

/// `count` random hexadecimal digits.
private func randomHex(_ count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
}
