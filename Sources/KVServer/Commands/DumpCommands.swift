// DumpCommands.swift: DUMP and RESTORE, as Redis 7.0 answers them. DUMP's
// payload is the key's value in RDB (Persistence/DumpPayload.swift), so a
// payload moves between kvd and redis-server both ways: RESTORE reads what
// redis-server writes (listpacks, ziplists, intsets, zipmaps, quicklists,
// LZF-compressed strings, the encodings of older versions too), and kvd
// writes the plain encodings, which redis-server reads and converts.
//
// RESTORE checks in Redis's order, each with Redis's error: the options,
// then the key (BUSYKEY unless REPLACE), then the TTL, then the payload's
// version and checksum, then the value itself ("Bad data format" for
// anything it cannot read, an empty collection included). Every element
// of the value is decoded and checked on the way in, whatever Redis's
// sanitize-dump-payload would say: a set, hash or sorted set holding an
// element twice, or a NaN score, is refused in every encoding (Redis
// refuses them in the plain ones, and in the compact ones when it
// sanitizes). A large payload is decoded on the core, as in Redis: up to
// `--max-bulk` bytes, with several times that in memory while it is read.
// IDLETIME sets the key's access time under an LRU policy (or none), FREQ
// its counter under an LFU one; the other is checked and ignored, as in
// Redis (objectSetLRUOrLFU).
// A TTL already past stores nothing (and REPLACE has deleted the old
// value). A stream or a module value, which kvd cannot hold, is refused
// with an error naming it.

let dumpCommands: [Command] = [
    Command("dump", arity: 2, keys: .one) { ks, r, out in
        guard let entry = ks.lookup(r.raw(1), now: ks.now) else { return out.null() }
        out.bulk(DumpPayload.dump(entry))
    },
    Command("restore", arity: -4, keys: .one, restore),
]

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
private func restore(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    var replace = false, absolute = false
    var idleTime: Int?, frequency: Int?
    var index = 4
    while index < r.count {
        let option = r.raw(index)
        let hasValue = index + 1 < r.count
        if equalsIgnoringCase(option, "replace") {
            replace = true
        } else if equalsIgnoringCase(option, "absttl") {
            absolute = true
        } else if equalsIgnoringCase(option, "idletime") && hasValue && frequency == nil {
            guard let seconds = parseInteger(r.raw(index + 1)) else { return out.error(notAnInteger) }
            guard seconds >= 0 else { return out.error("ERR Invalid IDLETIME value, must be >= 0") }
            idleTime = seconds
            index += 1
        } else if equalsIgnoringCase(option, "freq") && hasValue && idleTime == nil {
            guard let count = parseInteger(r.raw(index + 1)) else { return out.error(notAnInteger) }
            guard (0...255).contains(count) else {
                return out.error("ERR Invalid FREQ value, must be >= 0 and <= 255")
            }
            frequency = count
            index += 1
        } else {
            return out.error("ERR syntax error")
        }
        index += 1
    }
    let key = r[1]
    let now = ks.now
    if !replace && ks.lookup(key, now: now) != nil { return out.error("BUSYKEY Target key name already exists.") }
    guard let ttl = parseInteger(r.raw(2)) else { return out.error(notAnInteger) }
    guard ttl >= 0 else { return out.error("ERR Invalid TTL value, must be >= 0") }
    let payload = r[3]
    guard DumpPayload.verifies(payload) else { return out.error("ERR DUMP payload version or checksum are wrong") }
    if let name = RDBFormat.unsupportedTypeName(payload[0]) {
        return out.error("ERR the DUMP payload holds \(name), which kvd does not support")
    }
    let value: RDBLoader.Value
    do {
        // From the whole payload, footer included, as Redis reads it: a
        // value that runs past its end takes the footer's bytes, as there.
        value = try RDBLoader.object(RDBInput(bytes: payload), key: key, ks.limits)
    } catch {
        return out.error("ERR Bad data format")
    }
    if case .empty = value { return out.error("ERR Bad data format") }
    // Redis adds the clock to a relative TTL without a check; so does this.
    let deadline: Int64? = ttl == 0 ? nil : absolute ? Int64(ttl) : Int64(ttl) &+ now
    if let deadline, deadline <= now {
        if replace && ks.remove(key) { ks.notify(.generic, "del", key) }
        return out.ok()
    }
    // What REPLACE lets go is deleted first, so the restored key is a new
    // one, as in Redis (one change, as Redis counts one).
    if replace {
        let mark = ks.changeMark
        ks.remove(key)
        ks.countChanges(0, since: mark)
    }
    switch value {
    case .string(let bytes): ks.set(key, bytes, expiresAt: deadline)
    case .collection(let collection): ks.store(key, collection, expiresAt: deadline)
    case .empty: break
    }
    // A restored key is a new one (Redis deletes what REPLACE replaces and
    // adds a new object), unless IDLETIME or FREQ says otherwise.
    ks.setAccess(
        key,
        ks.memory.restoredAccess(idleSeconds: idleTime, frequency: frequency, now: now)
            ?? ks.memory.initialAccess(now: now))
    ks.notify(.generic, "restore", key)
    out.ok()
}
