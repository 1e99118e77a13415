// KeyCommands.swift: Redis 7.0's generic key commands beyond the core ones:
// RENAME, RENAMENX, UNLINK, TOUCH, TYPE, SCAN, RANDOMKEY, OBJECT and TIME.
// (Those that cross databases, MOVE and COPY, are in SessionCommands.swift.)
import Glibc

let keyCommands: [Command] = [
    Command("rename", arity: 3, keys: .all) { ks, r, out in rename(ks, r, onlyIfAbsent: false, &out) },
    Command("renamenx", arity: 3, keys: .all) { ks, r, out in rename(ks, r, onlyIfAbsent: true, &out) },
    // UNLINK frees in the background in Redis; here freeing is a release,
    // so it is DEL. TOUCH counts what exists, as EXISTS does, and is a use
    // of each key (its access word), which EXISTS is not.
    Command("unlink", arity: -2, keys: .all, del),
    Command("touch", arity: -2, keys: .all) { ks, r, out in
        let now = ks.now
        out.integer((1..<r.count).reduce(0) { $0 + (ks.lookup(r.raw($1), now: now) == nil ? 0 : 1) })
    },
    Command("type", arity: 2, keys: .one) { ks, r, out in
        guard let entry = ks.lookup(r[1], now: ks.now, touching: false) else { return out.simple("none") }
        out.simple(entry.collection?.typeName ?? "string")
    },
    Command("scan", arity: -2, keys: .none, scan),
    Command("randomkey", arity: 1, keys: .none) { ks, _, out in
        if let key = ks.randomKey(now: ks.now) { out.bulk(key) } else { out.null() }
    },
    Command("object", arity: -2, keys: .none, object),
    Command("time", arity: 1, keys: .none) { _, _, out in
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        out.arrayHeader(2)
        out.bulk(decimalBytes(now.tv_sec))
        out.bulk(decimalBytes(now.tv_nsec / 1000))
    },
]

/// RENAME and RENAMENX: the value and its expiry move to the new name.
private func rename(_ ks: Keyspace, _ r: Request, onlyIfAbsent: Bool, _ out: inout ReplyWriter) {
    let now = ks.now
    guard let entry = ks.lookup(r[1], now: now) else { return out.error("ERR no such key") }
    if r[1] == r[2] { return onlyIfAbsent ? out.integer(0) : out.ok() }
    // A new name that is due expires here (an `expired` event), as Redis's lookup of it.
    if ks.lookup(r[2], now: now) != nil && onlyIfAbsent { return out.integer(0) }
    let mark = ks.changeMark
    // The old value at the new name goes first, so the name is a new key
    // (Redis deletes it, then adds the moved value: a "new" event).
    ks.remove(r[2])
    ks.put(r[2], entry)
    ks.remove(r[1])
    ks.countChanges(1, since: mark)
    ks.notify(.generic, "rename_from", r.raw(1))
    ks.notify(.generic, "rename_to", r.raw(2))
    if onlyIfAbsent { out.integer(1) } else { out.ok() }
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The cursor is a
/// position in the keyspace's slots (see Keyspace.scanSlots); TYPE keeps the
/// keys whose TYPE is that name.
private func scan(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    guard let cursor = parseScanCursor(r.raw(1)) else { return out.error("ERR invalid cursor") }
    var pattern: [UInt8]?
    var count = 10
    var type: [UInt8]?
    var index = 2
    while index < r.count {
        guard index + 1 < r.count else { return out.error("ERR syntax error") }
        let value = r[index + 1]
        if equalsIgnoringCase(r[index], "count") {
            guard let parsed = parseInteger(value) else { return out.error(notAnInteger) }
            guard parsed >= 1 else { return out.error("ERR syntax error") }
            count = parsed
        } else if equalsIgnoringCase(r[index], "match") {
            pattern = value == [UInt8(ascii: "*")] ? nil : value
        } else if equalsIgnoringCase(r[index], "type") {
            type = lowercased(value)
        } else {
            return out.error("ERR syntax error")
        }
        index += 2
    }
    // Redis's order: MATCH, then TYPE (a read of the key, which expires it
    // if it is due), then the key expires if it is due.
    let now = ks.now
    let (next, visited) = ks.scanSlots(cursor: Int(cursor), count: count)
    var keys: [[UInt8]] = []
    for key in visited {
        if let pattern, !globMatch(pattern, key) { continue }
        if let type {
            guard let entry = ks.lookup(key, now: now, touching: false, use: .read) else { continue }
            let name = entry.collection?.typeName ?? "string"
            guard name.withUTF8Buffer({ $0.elementsEqual(type) }) else { continue }
        } else if ks.hasExpired(key, now: now) {
            _ = ks.lookup(key, now: now, touching: false, use: .uncounted)
            continue
        }
        keys.append(key)
    }
    out.arrayHeader(2)
    out.bulk(decimalBytes(next))
    out.arrayHeader(keys.count)
    for key in keys { out.bulk(key) }
}

/// OBJECT ENCODING | REFCOUNT | FREQ | IDLETIME | HELP.
private func object(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    // The dispatcher refused any other subcommand, and any other count.
    let sub = String(decoding: lowercased(r[1]), as: UTF8.self)
    if sub == "help" {
        return out.help(
            "OBJECT",
            [
                "ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
                "    associated with a <key>.",
                "FREQ <key>", "    Return the access frequency index of the <key>. The returned integer is",
                "    proportional to the logarithm of the recent access frequency of the key.",
                "IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
                "    seconds elapsed since the last access to the key.",
                "REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
                "    <key>.",
            ])
    }
    let now = ks.now
    guard let entry = ks.lookup(r[2], now: now, touching: false, use: .readQuietly) else { return out.null() }
    switch sub {
    case "encoding":
        if let collection = entry.collection { return out.bulk(String(describing: collection.encoding)) }
        out.bulk(entry.form.encoding(of: entry.value))
    case "refcount":
        // Every value is owned by its key alone. Redis answers INT_MAX for
        // an integer it shares (0-9999, written when the policy let it
        // share, and not a COPY).
        let shared =
            entry.collection == nil && entry.form == .encoded && entry.value.count <= 4
            && parseInteger(entry.value).map { (0..<10_000).contains($0) } == true
        out.integer(shared ? Int(Int32.max) : 1)
    case "freq":
        guard ks.memory.policy.usesLFU else {
            return out.error(
                "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
            )
        }
        out.integer(Int(ks.memory.frequency(entry.access, now: now)))
    default:  // idletime
        guard !ks.memory.policy.usesLFU else {
            return out.error(
                "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
            )
        }
        out.integer(Int(ks.memory.idleMilliseconds(entry.access, now: now) / 1000))
    }
}
