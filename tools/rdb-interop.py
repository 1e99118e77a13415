#!/usr/bin/env python3
"""dump.rdb moves between kvd and redis-server 7.0.15 in both directions.

(a) kvd SAVEs a dataset of every type, in the sizes Redis keeps compact
    (listpack, intset) and the large ones (hashtable, skiplist, quicklist
    with plain nodes), with expiries, in several databases;
    redis-check-rdb accepts the file, and a redis-server started on it
    answers the same, key by key (TYPE, whole contents, PTTL within the time between the reads, plus a second).
(b) redis-server SAVEs the same dataset (its compact encodings, LZF and
    integer-encoded strings) and kvd started on it answers the same.
    Both datasets hold a function library (FUNCTION LOAD; Redis saves its
    code LZF-compressed): FUNCTION LIST WITHCODE and an FCALL answer the
    same after the move, both ways.
(c) kvd refuses to start on a truncated file and on one with a wrong
    checksum, with a message that says which; a stream is refused by name.
(d) BGSAVE writes the data as of its start while writes go on, and
    SIGTERM saves a snapshot that the next start loads, as SHUTDOWN does
    (SHUTDOWN NOSAVE does not).
    A BGSAVE interrupted by kill -9 leaves the previous dump.rdb whole.
(e) a BGSAVE that cannot write (its directory is gone) sets
    rdb_last_bgsave_status:err, and writes and PING get Redis's MISCONF
    error until a BGSAVE succeeds (or stop-writes-on-bgsave-error is no).
(f) DUMP and RESTORE move the same dataset key by key, with its TTLs
    (PTTL as RESTORE's TTL), FUNCTION DUMP and RESTORE its library:
    redis-server's payloads (its compact
    encodings) restored into kvd, and kvd's restored into redis-server,
    answer the same; redis-server's RESTORE of a stream is refused by kvd,
    naming it.
(g) hostile payloads: every corrupt one in Redis's own
    tests/integration/corrupt-dump.tcl (vendored in compat/), as written and
    resealed with a valid checksum (many were written for a server that
    skips it), then 20,000 seeded mutations of redis-server's payloads
    (bytes flipped, cut, inserted, repeated) with a valid checksum: kvd
    answers each RESTORE with OK or an error, reads back whatever it
    accepted (its count agrees with its contents, a sorted set is in order
    without NaN), and keeps answering.
Usage: rdb-interop.py path/to/kvd
"""
import os, random, re, shutil, socket, subprocess, sys, tempfile, time
import redis
from persistence_data import free_port, launch, stop, populate, dump, compare, contents

KVD = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="rdb-interop-")
PROCESSES = []


def start_kvd(directory, *extra):
    return launch(WORK, PROCESSES, "kvd", [KVD, "--dir", directory, *extra])


def start_redis(directory):
    return launch(WORK, PROCESSES, "redis",
                  ["redis-server", "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--appendonly", "no"])


try:
    # (a) kvd -> redis-server
    a = os.path.join(WORK, "a"); os.mkdir(a)
    kvd, r, _ = start_kvd(a, "--save", "")
    populate(r)
    expected = dump(r)
    assert r.save() is True
    stop(kvd)
    check = subprocess.run(["redis-check-rdb", os.path.join(a, "dump.rdb")], capture_output=True, text=True)
    if check.returncode != 0 or "RDB looks OK" not in check.stdout:
        raise SystemExit("FAIL: redis-check-rdb refuses kvd's dump.rdb:\n" + check.stdout + check.stderr)
    print("ok: redis-check-rdb accepts kvd's dump.rdb")
    server, r, _ = start_redis(a)
    compare(expected, dump(r), "kvd's SAVE loaded by redis-server 7.0.15")
    encodings = {key: r.object("encoding", key) for key in (b"db0:hash-small", b"db0:set-intset", b"db0:zset-large")}
    stop(server)

    # (b) redis-server -> kvd
    b = os.path.join(WORK, "b"); os.mkdir(b)
    server, r, _ = start_redis(b)
    populate(r)
    expected = dump(r)
    if r.object("encoding", b"db0:hash-small") != b"listpack" or r.object("encoding", b"db0:set-intset") != b"intset":
        raise SystemExit("FAIL: redis-server did not use its compact encodings")
    assert r.save() is True
    stop(server)
    kvd, r, _ = start_kvd(b, "--save", "")
    compare(expected, dump(r), "redis-server's SAVE (listpacks, intsets, quicklists, LZF) loaded by kvd")
    stop(kvd)

    # (c) refusals
    rdb = open(os.path.join(b, "dump.rdb"), "rb").read()
    for name, data, message in [
        ("truncated", rdb[: len(rdb) // 2], "unexpected end of file"),
        # one letter of a string value changed: the file parses, its checksum does not match
        ("altered", rdb.replace(b"hello", b"jello", 1), "wrong RDB checksum"),
    ]:
        c = os.path.join(WORK, name); os.mkdir(c)
        open(os.path.join(c, "dump.rdb"), "wb").write(data)
        run = subprocess.run([KVD, "--port", str(free_port()), "--dir", c], capture_output=True, text=True, timeout=30)
        if run.returncode == 0 or message not in run.stdout + run.stderr:
            raise SystemExit(f"FAIL: kvd on a {name} dump.rdb: status {run.returncode}, said:\n{run.stdout}{run.stderr}")
        print(f"ok: kvd refuses a {name} dump.rdb: {(run.stdout + run.stderr).strip().splitlines()[-1]}")
    s = os.path.join(WORK, "stream"); os.mkdir(s)
    server, r, _ = start_redis(s)
    r.xadd("events", {"a": "1"})
    r.save()
    stop(server)
    run = subprocess.run([KVD, "--port", str(free_port()), "--dir", s], capture_output=True, text=True, timeout=30)
    if run.returncode == 0 or "a stream" not in run.stdout:
        raise SystemExit(f"FAIL: kvd on a dump.rdb with a stream: status {run.returncode}, said:\n{run.stdout}")
    print("ok: kvd refuses a stream by name")

    # (d) BGSAVE's point in time, and the snapshot at SIGTERM
    d = os.path.join(WORK, "d"); os.mkdir(d)
    kvd, r, log = start_kvd(d)
    r.rpush("list", *range(100_000))
    r.hset("hash", mapping={f"f{i}": i for i in range(50_000)})
    r.mset({f"k{i}": i for i in range(100_000)})
    before = dump(r)
    assert r.bgsave()
    # Change everything the snapshot holds while it is written.
    r.rpush("list", "after"); r.hset("hash", "after", 1); r.set("k1", "after"); r.delete("k2"); r.set("new", 1)
    for _ in range(200):
        if r.info("persistence")["rdb_bgsave_in_progress"] == 0: break
        time.sleep(0.05)
    info = r.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok", info
    after = dump(r)
    snap = os.path.join(WORK, "bgsave"); os.mkdir(snap)
    shutil.copy(os.path.join(d, "dump.rdb"), os.path.join(snap, "dump.rdb"))
    server, r2, _ = start_redis(snap)
    compare(before, dump(r2), "kvd's BGSAVE, written while the keys changed, holds the data as of its start")
    stop(server)
    r.set("at-exit", "saved")
    after[(0, b"at-exit")] = (b"string", b"saved", -1)
    kvd.terminate()
    kvd.wait(30)
    kvd, r, _ = start_kvd(d, "--save", "")
    compare(after, dump(r), "the snapshot kvd saved on SIGTERM, loaded at the next start")
    stop(kvd)
    # SHUTDOWN NOSAVE exits without saving; SHUTDOWN saves (save points are set) and exits.
    for command, kept in ((("SHUTDOWN", "NOSAVE"), False), (("SHUTDOWN",), True)):
        kvd, r, _ = start_kvd(d)
        r.set("by-shutdown", "1")
        try:
            r.execute_command(*command)
        except redis.ConnectionError:
            pass
        kvd.wait(30)
        kvd, r, _ = start_kvd(d, "--save", "")
        if (r.get("by-shutdown") is not None) != kept:
            raise SystemExit(f"FAIL: {' '.join(command)} {'lost' if kept else 'saved'} the last write")
        r.delete("by-shutdown")
        r.save()
        stop(kvd)
    print("ok: SHUTDOWN saves and exits, SHUTDOWN NOSAVE exits without saving")
    # (d') a BGSAVE killed mid-write (kill -9) leaves the previous dump.rdb whole
    k = os.path.join(WORK, "k"); os.mkdir(k)
    kvd, r, _ = start_kvd(k, "--save", "")
    r.mset({f"k{i}": i for i in range(50_000)})
    # Killed 50 ms into its write; if this machine stalled the check past
    # the BGSAVE's end, that dump is the one to keep, and it goes again.
    for attempt in range(3):
        r.save()
        saved = dump(r)
        r.mset({f"k{i}": f"changed {attempt}" for i in range(300_000)})
        r.bgsave()
        time.sleep(0.05)
        if r.info("persistence")["rdb_bgsave_in_progress"] == 1:
            break
    else:
        raise SystemExit("FAIL: the BGSAVE to interrupt was over before the kill, three times")
    stop(kvd)
    kvd, r, _ = start_kvd(k, "--save", "")
    compare(saved, dump(r), "the dump.rdb a BGSAVE killed by kill -9 was replacing")
    stop(kvd)

    # (e) a failed BGSAVE stops writes
    e = os.path.join(WORK, "e"); os.mkdir(e)
    kvd, r, _ = start_kvd(e)
    r.set("x", 1)
    os.rmdir(e)

    def bgsave_status():
        assert r.bgsave()
        for _ in range(200):
            info = r.info("persistence")
            if info["rdb_bgsave_in_progress"] == 0: return info["rdb_last_bgsave_status"]
            time.sleep(0.05)
        raise SystemExit("FAIL: BGSAVE never finished")
    if bgsave_status() != "err":
        raise SystemExit("FAIL: a BGSAVE into a missing directory did not fail")
    misconf = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
               "Commands that may modify the data set are disabled, because this instance is configured to report "
               "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). "
               "Please check the Redis logs for details about the RDB error.")
    for command in (("SET", "x", 2), ("PING",), ("LPUSH", "l", 1)):
        try:
            r.execute_command(*command)
            raise SystemExit(f"FAIL: {command[0]} ran after a failed BGSAVE")
        except redis.ResponseError as error:
            if str(error) != misconf:
                raise SystemExit(f"FAIL: {command[0]} after a failed BGSAVE answered {error}")
    assert r.get("x") == b"1"
    r.config_set("stop-writes-on-bgsave-error", "no")
    assert r.set("x", 3)
    r.config_set("stop-writes-on-bgsave-error", "yes")
    os.mkdir(e)
    if bgsave_status() != "ok" or not r.set("x", 4):
        raise SystemExit("FAIL: writes stayed refused after a BGSAVE succeeded")
    stop(kvd)
    print("ok: a failed BGSAVE: rdb_last_bgsave_status:err, MISCONF for writes and PING, lifted by a good BGSAVE")

    # (f) DUMP and RESTORE, key by key, both ways
    def move_by_dump(source, target):
        """Every key of `source`'s databases, DUMPed and RESTOREd into
        `target`, and its function libraries (FUNCTION DUMP and RESTORE)."""
        target.function_restore(source.function_dump(), "REPLACE")
        for db in range(16):
            source.execute_command("SELECT", db)
            target.execute_command("SELECT", db)
            for key in source.keys(b"*"):
                ttl = source.pttl(key)
                target.restore(key, max(ttl, 0), source.dump(key))
    f = os.path.join(WORK, "f"); os.mkdir(f)
    server, r, _ = start_redis(f)
    populate(r)
    expected = dump(r)
    kvd, k, _ = start_kvd(f, "--save", "")
    move_by_dump(r, k)
    compare(expected, dump(k), "redis-server's DUMP of every key, RESTOREd into kvd")
    r.flushall()
    move_by_dump(k, r)
    compare(expected, dump(r), "kvd's DUMP of every key, RESTOREd into redis-server")
    r.execute_command("SELECT", 0)
    r.xadd("events", {"a": "1"})
    try:
        k.restore("events", 0, r.dump("events"))
        raise SystemExit("FAIL: kvd RESTOREd a stream")
    except redis.ResponseError as error:
        if "a stream" not in str(error):
            raise SystemExit(f"FAIL: kvd's RESTORE of a stream answered {error}")
    stop(kvd)
    stop(server)
    print("ok: DUMP/RESTORE move every key both ways between kvd and redis-server; a stream is refused by name")

    # (g) hostile payloads
    CRC_TABLE = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
        CRC_TABLE.append(crc)

    def sealed(body):
        body += b"\x0a\x00"
        crc = 0
        for byte in body:
            crc = CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
        return body + crc.to_bytes(8, "little")

    COUNTS = {b"list": "LLEN", b"set": "SCARD", b"hash": "HLEN", b"zset": "ZCARD"}

    def read_back(client, key, what):
        """Reads an accepted key in full: its count agrees with what comes
        back, and a sorted set comes back in order, with no NaN score."""
        kind = client.type(key)
        if kind == b"none":
            return
        whole = contents(client, key, kind)
        if kind in COUNTS and client.execute_command(COUNTS[kind], key) != len(whole):
            raise SystemExit(f"FAIL: {what}: {key} holds {len(whole)} elements, its {COUNTS[kind]} says otherwise")
        if kind == b"zset" and (any(score != score for _, score in whole)
                                or [(score, member) for member, score in whole]
                                != sorted((score, member) for member, score in whole)):
            raise SystemExit(f"FAIL: {what}: {key} is out of order or holds NaN: {whole[:8]}")

    def restore_all(client, payloads, what):
        """RESTOREs each payload (pipelined), reads back what was accepted; kvd must keep answering."""
        accepted = 0
        for start in range(0, len(payloads), 500):
            pipe = client.pipeline(transaction=False)
            for index, payload in enumerate(payloads[start:start + 500]):
                pipe.restore(f"h{index}", 0, payload, replace=True)
            for reply in pipe.execute(raise_on_error=False):
                if isinstance(reply, redis.ResponseError):
                    continue
                if reply not in (b"OK", True):
                    raise SystemExit(f"FAIL: {what}: RESTORE answered {reply!r}")
                accepted += 1
            for index in range(min(500, len(payloads) - start)):
                read_back(client, f"h{index}", what)
            client.flushall()
            if not client.ping():
                raise SystemExit(f"FAIL: {what}: kvd stopped answering")
        return accepted

    g = os.path.join(WORK, "g"); os.mkdir(g)
    kvd, k, _ = start_kvd(g, "--save", "")
    corrupt = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compat", "redis-7.0.15", "tests",
                                "integration", "corrupt-dump.tcl")).read()

    def tcl_bytes(text):
        """A Tcl double-quoted string's bytes: \\xNN, octal, \\n and kin."""
        out, index = bytearray(), 0
        escapes = {"n": 10, "r": 13, "t": 9, "a": 7, "b": 8, "f": 12, "v": 11}
        while index < len(text):
            char = text[index]
            if char != "\\":
                out += char.encode("latin-1"); index += 1; continue
            following = text[index + 1]
            hexes = re.match(r"x([0-9A-Fa-f]{1,2})", text[index + 1:])
            octal = re.match(r"[0-7]{1,3}", text[index + 1:])
            if hexes:
                out.append(int(hexes.group(1), 16)); index += 1 + len(hexes.group(0))
            elif octal:
                out.append(int(octal.group(0), 8) & 0xFF); index += 1 + len(octal.group(0))
            else:
                out.append(escapes.get(following, ord(following))); index += 2
        return bytes(out)

    # Every RESTORE's payload and every payload set aside for one, in any
    # case; many were written for a server that skips the checksum
    # (debug set-skip-checksum-validation), so each goes in as written and
    # resealed with a valid checksum, which takes it to the decoders.
    quoted = re.findall(r'(?:restore\s+\S+\s+\d+\s+|set corrupt_payload_\d+ )"((?:\\.|[^"\\])*)"', corrupt, re.I)
    written = list(dict.fromkeys(tcl_bytes(q) for q in quoted))
    if len(written) < 60:
        raise SystemExit(f"FAIL: found {len(written)} payloads in corrupt-dump.tcl")
    tcl = written + [sealed(payload[:-10]) for payload in written if len(payload) > 10]
    accepted = restore_all(k, tcl, "corrupt-dump.tcl's payloads")
    print(f"ok: kvd survives the {len(written)} corrupt payloads of Redis's corrupt-dump.tcl, as written and resealed"
          f" ({accepted} of {len(tcl)} accepted and read back whole)")
    server, r, _ = start_redis(g)
    populate(r)
    seeds = []
    for db in range(16):
        r.execute_command("SELECT", db)
        seeds += [payload for payload in (r.dump(key) for key in r.keys(b"*")) if len(payload) < 4096]
    stop(server)
    rnd = random.Random(7)
    mutated = []
    for _ in range(20_000):
        body = bytearray(rnd.choice(seeds)[:-10])
        for _ in range(rnd.randint(1, 3)):
            at = rnd.randrange(len(body))
            choice = rnd.randrange(4)
            if choice == 0: body[at] = rnd.randrange(256)
            elif choice == 1: del body[at:at + rnd.randint(1, 8)]
            elif choice == 2: body[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4)))
            else: body[at:at] = body[at:at + rnd.randint(1, 16)]
            if not body: body = bytearray(b"\x00")
        mutated.append(sealed(bytes(body)))
    accepted = restore_all(k, mutated, "mutated payloads")
    stop(kvd)
    print(f"ok: kvd survives 20,000 mutated payloads with valid checksums ({accepted} accepted and read back)")
finally:
    for process in PROCESSES:
        if process.poll() is None:
            process.kill()
    shutil.rmtree(WORK, ignore_errors=True)
