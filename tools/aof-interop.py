#!/usr/bin/env python3
"""The append-only file moves between kvd and redis-server 7.0.15 both ways.

(a) kvd with --appendonly yes --appendfsync always takes a dataset of every
    type (tools/persistence_data.py) and the writes whose log is their
    effect (SPOP, INCRBYFLOAT, HINCRBYFLOAT, relative expiries, GETEX, a
    script, MULTI/EXEC, blocking pops served at once and later, an expiry
    in the past), before and after a BGREWRITEAOF; killed with kill -9,
    redis-check-aof accepts its appendonlydir and redis-server started on it
    answers the same, key by key; kvd restarted on it does too.
(b) redis-server's appendonlydir (an RDB base with its compact encodings
    after BGREWRITEAOF, then an incr file) is loaded by kvd, key by key.
(c) a torn last command is cut off with aof-load-truncated yes (Redis's log
    lines) and refused with no; a MULTI without EXEC at the end is undone;
    bytes that are not RESP are refused, and so is a command kvd does not
    have (XADD: streams), which Redis refuses too.
(d) a write that fails (the incr file is /dev/full) sets
    aof_last_write_status:err and writes get Redis's MISCONF error.
(e) CONFIG SET appendonly yes starts the AOF with a rewrite; the data is
    all there after kill -9 and a restart with --appendonly yes.
(f) with aof-use-rdb-preamble no the base is RESP commands, which
    redis-check-aof, redis-server and kvd accept alike.
(h) a single-file appendonly.aof of Redis before 7.0 (an RDB preamble and
    commands after it) is moved into appendonlydir as its base and loaded,
    as Redis 7.0 upgrades it.
(g) a rewrite started while a BGSAVE of 180k elements is written and
    followed at once by writes, gives a base as of its start (the two
    copy-on-write views overlap): dump.rdb holds the data before the
    writes, the appendonlydir the data after, each loaded by redis-server.
Usage: aof-interop.py path/to/kvd
"""
import os, shutil, socket, subprocess, sys, tempfile, threading, time
import redis
from persistence_data import free_port, launch, stop, populate, dump, compare

KVD = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="aof-interop-")
PROCESSES = []


def start_kvd(directory, *extra):
    return launch(WORK, PROCESSES, "kvd", [KVD, "--dir", directory, "--save", "", "--appendonly", "yes", *extra])


def start_redis(directory):
    return launch(WORK, PROCESSES, "redis", ["redis-server", "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                                             "--appendonly", "yes", "--appendfsync", "always"])


def effects(r, port, tag):
    """Writes whose replay must use their effect, not their request."""
    r.sadd(f"{tag}:spop", *range(50))
    r.spop(f"{tag}:spop")
    r.spop(f"{tag}:spop", 5)
    r.sadd(f"{tag}:spop-all", 1, 2)
    r.spop(f"{tag}:spop-all", 10)
    r.set(f"{tag}:float", "10.5")
    r.incrbyfloat(f"{tag}:float", "0.1")
    r.hincrbyfloat(f"{tag}:hfloat", "f", "3.3")
    r.execute_command("SETEX", f"{tag}:setex", 1000, "v")
    r.execute_command("PSETEX", f"{tag}:psetex", 2_000_000, "v")
    r.set(f"{tag}:setpx", "v", px=3_000_000)
    r.set(f"{tag}:getex", "v")
    r.getex(f"{tag}:getex", ex=4000)
    r.set(f"{tag}:persist", "v", ex=100)
    r.getex(f"{tag}:persist", persist=True)
    r.set(f"{tag}:gone", "v")
    r.expire(f"{tag}:gone", -1)
    r.set(f"{tag}:expireat", "v")
    r.expireat(f"{tag}:expireat", int(time.time()) + 5000)
    r.eval("redis.call('sadd', KEYS[1], 'a', 'b', 'c', 'd'); redis.call('spop', KEYS[1]);"
           "redis.call('set', KEYS[2], 'x', 'EX', 600); return 1", 2, f"{tag}:script-set", f"{tag}:script-str")
    pipe = r.pipeline(transaction=True)
    pipe.incr(f"{tag}:multi")
    pipe.rpush(f"{tag}:multi-list", "a", "b")
    pipe.expire(f"{tag}:multi-list", 9000)
    pipe.execute()
    r.rpush(f"{tag}:blpop-now", "a", "b")
    r.blpop([f"{tag}:none", f"{tag}:blpop-now"], 1)
    r.rpush(f"{tag}:src", "1", "2", "3")
    r.blmove(f"{tag}:src", f"{tag}:dst", 1, "LEFT", "RIGHT")
    r.zadd(f"{tag}:zpop", {"a": 1, "b": 2, "c": 3})
    r.bzpopmax(f"{tag}:zpop", 1)
    # A pop served later: the client parks, another pushes.
    waiter = redis.Redis(port=port, protocol=2)
    got = []
    thread = threading.Thread(target=lambda: got.append(waiter.brpop(f"{tag}:later", 5)))
    thread.start()
    for _ in range(100):
        if r.info("clients")["blocked_clients"] == 1: break
        time.sleep(0.02)
    r.rpush(f"{tag}:later", "x", "y", "z")
    thread.join(10)
    assert got == [(f"{tag}:later".encode(), b"z")], got
    r.execute_command("SELECT", 5)
    r.set(f"{tag}:db5", "five")
    r.move(f"{tag}:db5", 6)
    r.execute_command("SELECT", 0)


def rewritten(r):
    """Waits for the rewrite under way (BGREWRITEAOF, CONFIG SET appendonly yes) to end."""
    for _ in range(200):
        if r.info("persistence")["aof_rewrite_in_progress"] == 0: return
        time.sleep(0.05)
    raise SystemExit("FAIL: the AOF rewrite never ended")


def rewritten_dataset(process, r, tag):
    """The dataset, a BGREWRITEAOF, then the effect writes; the server is killed; returns what it held."""
    populate(r)
    assert r.bgrewriteaof()
    rewritten(r)
    effects(r, port_of(r), tag)
    expected = dump(r)
    stop(process)
    return expected


def loaded_alike(directory, expected, what):
    """redis-check-aof accepts the directory, and redis-server then kvd started on it answer `expected`."""
    check_aof(directory, what)
    server, r, _ = start_redis(directory)
    compare(expected, dump(r), what + " loaded by redis-server 7.0.15")
    stop(server)
    kvd, r, _ = start_kvd(directory)
    compare(expected, dump(r), what + " loaded by kvd after kill -9")
    stop(kvd)


def check_aof(directory, what):
    manifest = os.path.join(directory, "appendonlydir", "appendonly.aof.manifest")
    check = subprocess.run(["redis-check-aof", manifest], capture_output=True, text=True)
    if check.returncode != 0 or "All AOF files and manifest are valid" not in check.stdout:
        raise SystemExit(f"FAIL: redis-check-aof refuses {what}:\n" + check.stdout + check.stderr)
    print(f"ok: redis-check-aof accepts {what}")


def port_of(r):
    return r.connection_pool.connection_kwargs["port"]


def run_kvd(directory, *extra):
    return subprocess.run([KVD, "--port", str(free_port()), "--dir", directory, "--save", "", "--appendonly", "yes",
                           *extra], capture_output=True, text=True, timeout=30)


def incr_path(directory):
    folder = os.path.join(directory, "appendonlydir")
    manifest = open(os.path.join(folder, "appendonly.aof.manifest")).read().split("\n")
    last = [line for line in manifest if line.endswith("type i")][-1]
    return os.path.join(folder, last.split()[1])


try:
    # (a) kvd -> redis-server, with a rewrite in the middle
    a = os.path.join(WORK, "a"); os.mkdir(a)
    kvd, r, _ = start_kvd(a, "--appendfsync", "always")
    populate(r)
    effects(r, port_of(r), "before")
    assert r.bgrewriteaof()
    rewritten(r)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    effects(r, port_of(r), "after")
    r.delete("db0:str")
    expected = dump(r)
    stop(kvd)
    loaded_alike(a, expected, "kvd's appendonlydir (RDB base after BGREWRITEAOF, then an incr file)")

    # (b) redis-server -> kvd
    b = os.path.join(WORK, "b"); os.mkdir(b)
    expected = rewritten_dataset(*start_redis(b)[:2], "redis")
    kvd, r, _ = start_kvd(b)
    compare(expected, dump(r), "redis-server's appendonlydir (listpacks, intsets in its base) loaded by kvd")
    stop(kvd)

    # (c) torn tails and garbage
    c = os.path.join(WORK, "c"); os.mkdir(c)
    kvd, r, _ = start_kvd(c, "--appendfsync", "always")
    r.set("kept", "1")
    stop(kvd)
    incr = incr_path(c)
    whole = open(incr, "rb").read()
    open(incr, "ab").write(b"*3\r\n$3\r\nSET\r\n$4\r\nlost\r\n$5\r\nhal")
    run = run_kvd(c, "--aof-load-truncated", "no")
    if run.returncode == 0 or "Unexpected end of file reading the append only file" not in run.stdout:
        raise SystemExit(f"FAIL: a torn AOF with aof-load-truncated no: status {run.returncode}:\n{run.stdout}")
    print("ok: a torn AOF is refused with aof-load-truncated no")
    kvd, r, log = start_kvd(c)
    if r.get("kept") != b"1" or r.exists("lost") or "!!! Truncating the AOF" not in open(log).read():
        raise SystemExit("FAIL: a torn AOF was not loaded up to its last whole command")
    stop(kvd)
    if open(incr, "rb").read() != whole:
        raise SystemExit("FAIL: the torn tail was not cut off the file")
    print("ok: a torn AOF is loaded up to its last whole command, and the tail cut off, with aof-load-truncated yes")
    open(incr, "ab").write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$7\r\nhalfway\r\n$1\r\n1\r\n")
    kvd, r, log = start_kvd(c)
    if r.exists("halfway") or "Revert incomplete MULTI/EXEC transaction" not in open(log).read():
        raise SystemExit("FAIL: a MULTI without EXEC at the end was not undone")
    stop(kvd)
    print("ok: a MULTI without its EXEC at the end of the AOF is undone")
    valid = open(incr, "rb").read()
    open(incr, "ab").write(b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\na\r\n$1\r\n1\r\n")
    run = run_kvd(c)
    if run.returncode == 0 or "Unknown command 'XADD' reading the append only file" not in run.stdout:
        raise SystemExit(f"FAIL: an AOF with a command kvd lacks: status {run.returncode}:\n{run.stdout}")
    print("ok: an AOF holding a command kvd does not have (XADD) is refused, not skipped")
    open(incr, "wb").write(valid)
    open(incr, "ab").write(b"this is not RESP\r\n")
    run = run_kvd(c)
    if run.returncode == 0 or "Bad file format reading the append only file" not in run.stdout:
        raise SystemExit(f"FAIL: an AOF with garbage: status {run.returncode}:\n{run.stdout}")
    print("ok: an AOF holding bytes that are not RESP is refused")

    # (d) a failing write: MISCONF
    d = os.path.join(WORK, "d"); os.mkdir(d)
    kvd, r, _ = start_kvd(d)
    r.set("x", "1")
    # A transaction that queued a write before the failure.
    queued = socket.create_connection(("127.0.0.1", r.connection_pool.connection_kwargs["port"]), timeout=30)
    queued.sendall(b"MULTI\r\nSET y 1\r\n")
    answered = b""
    while answered.count(b"\r\n") < 2:
        answered += queued.recv(4096)
    if answered != b"+OK\r\n+QUEUED\r\n":
        raise SystemExit(f"FAIL: MULTI and SET answered {answered!r}")
    # The rewrite's new incr file (seq 2) is /dev/full: every write after it fails.
    os.symlink("/dev/full", os.path.join(d, "appendonlydir", "appendonly.aof.2.incr.aof"))
    assert r.bgrewriteaof()
    rewritten(r)  # the rewrite has ended, its new incr file in use
    try:
        r.set("x", "2")
    except redis.ResponseError:
        pass
    misconf = "MISCONF Errors writing to the AOF file: No space left on device"
    try:
        r.set("x", "3")
        raise SystemExit("FAIL: a write ran while the AOF could not be written")
    except redis.ResponseError as error:
        if str(error) != misconf:
            raise SystemExit(f"FAIL: a write while the AOF fails answered {error}")
    if r.info("persistence")["aof_last_write_status"] != "err":
        raise SystemExit("FAIL: aof_last_write_status is not err")
    # Its EXEC is aborted, as Redis's execCommandAbort aborts it.
    queued.sendall(b"EXEC\r\n")
    answered = b""
    while not answered.endswith(b"\r\n"):
        answered += queued.recv(4096)
    if answered != b"-EXECABORT Transaction discarded because of: " + misconf.encode() + b"\r\n":
        raise SystemExit(f"FAIL: an EXEC that writes, while the AOF fails, answered {answered!r}")
    stop(kvd)
    print("ok: a failing AOF write: aof_last_write_status:err, MISCONF for writes, EXECABORT for an EXEC that writes")

    # (e) CONFIG SET appendonly yes at run time
    e = os.path.join(WORK, "e"); os.mkdir(e)
    kvd, r, _ = launch(WORK, PROCESSES, "kvd", [KVD, "--dir", e, "--save", ""])
    populate(r)
    r.config_set("appendonly", "yes")
    rewritten(r)
    # Off and on again: what was written meanwhile comes back through the new base.
    r.config_set("appendonly", "no")
    r.set("while-off", "1")
    r.config_set("appendonly", "yes")
    rewritten(r)
    if r.config_get("appendonly") != {"appendonly": "yes"}:
        raise SystemExit(f"FAIL: CONFIG GET appendonly says {r.config_get('appendonly')}")
    effects(r, port_of(r), "on")
    expected = dump(r)
    stop(kvd)
    check_aof(e, "the appendonlydir CONFIG SET appendonly yes started")
    kvd, r, _ = start_kvd(e)
    compare(expected, dump(r), "the AOF started by CONFIG SET appendonly yes, after kill -9")
    stop(kvd)

    # (f) a RESP base (aof-use-rdb-preamble no)
    g = os.path.join(WORK, "resp"); os.mkdir(g)
    expected = rewritten_dataset(*start_kvd(g, "--aof-use-rdb-preamble", "no")[:2], "resp")
    if not any(name.endswith(".base.aof") for name in os.listdir(os.path.join(g, "appendonlydir"))):
        raise SystemExit("FAIL: aof-use-rdb-preamble no wrote no RESP base")
    loaded_alike(g, expected, "kvd's appendonlydir with a RESP base (aof-use-rdb-preamble no)")

    # (h) a single-file AOF of Redis before 7.0 (an RDB preamble, then commands) is moved into the directory
    h = os.path.join(WORK, "h"); os.mkdir(h)
    kvd, r, _ = launch(WORK, PROCESSES, "kvd", [KVD, "--dir", h, "--save", ""])
    populate(r)
    r.save()
    r.set("tail", "1")
    r.rpush("db0:list-small", "tail")
    expected = dump(r)
    stop(kvd)
    tail = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$4\r\ntail\r\n$1\r\n1\r\n"
    tail += b"*3\r\n$5\r\nRPUSH\r\n$14\r\ndb0:list-small\r\n$4\r\ntail\r\n"
    with open(os.path.join(h, "appendonly.aof"), "wb") as single:
        single.write(open(os.path.join(h, "dump.rdb"), "rb").read() + tail)
    os.unlink(os.path.join(h, "dump.rdb"))
    kvd, r, log = start_kvd(h)
    compare(expected, dump(r), "a single-file AOF (RDB preamble and commands) upgraded and loaded by kvd")
    stop(kvd)
    if "Successfully migrated an old-style AOF" not in open(log).read():
        raise SystemExit("FAIL: the single-file AOF was not migrated")
    loaded_alike(h, expected, "the appendonlydir kvd made of a single-file AOF")

    # (g) a rewrite's point in time while writes go on, overlapping a BGSAVE
    f = os.path.join(WORK, "f"); os.mkdir(f)
    kvd, r, _ = launch(WORK, PROCESSES, "kvd", [KVD, "--dir", f, "--save", ""])
    r.rpush("list", *range(100_000))
    r.hset("hash", mapping={f"f{i}": i for i in range(50_000)})
    r.mset({f"k{i}": i for i in range(30_000)})
    before = dump(r)
    assert r.bgsave()
    r.config_set("appendonly", "yes")  # its rewrite's view overlaps the BGSAVE's
    r.rpush("list", "after"); r.hset("hash", "after", 1); r.set("k1", "after"); r.delete("k2"); r.set("new", 1)
    for _ in range(400):
        info = r.info("persistence")
        if info["rdb_bgsave_in_progress"] == 0 and info["aof_rewrite_in_progress"] == 0: break
        time.sleep(0.05)
    assert info["rdb_last_bgsave_status"] == "ok" and info["aof_last_bgrewrite_status"] == "ok", info
    after = dump(r)
    stop(kvd)
    snap = os.path.join(WORK, "f-rdb"); os.mkdir(snap)
    shutil.copy(os.path.join(f, "dump.rdb"), os.path.join(snap, "dump.rdb"))
    server, r, _ = launch(WORK, PROCESSES, "redis", ["redis-server", "--bind", "127.0.0.1", "--dir", snap, "--save", "",
                                                     "--appendonly", "no"])
    compare(before, dump(r), "a BGSAVE overlapping an AOF rewrite, both while the keys changed, holds its start")
    stop(server)
    check_aof(f, "the appendonlydir of a rewrite that ran while the keys changed")
    server, r, _ = start_redis(f)
    compare(after, dump(r), "that appendonlydir loaded by redis-server 7.0.15 (base as of the rewrite + incr)")
    stop(server)
finally:
    for process in PROCESSES:
        if process.poll() is None:
            process.kill()
    shutil.rmtree(WORK, ignore_errors=True)
