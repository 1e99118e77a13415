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
Usage: rdb-interop.py path/to/kvd
"""
import os, random, re, shutil, socket, subprocess, sys, tempfile, time
import redis

KVD = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="rdb-interop-")
PROCESSES = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait(port, process, log):
    for _ in range(200):
        if process.poll() is not None:
            raise SystemExit(f"FAIL: the server on {port} exited:\n" + open(log).read())
        try:
            redis.Redis(port=port, protocol=2).ping()
            return redis.Redis(port=port, protocol=2, decode_responses=False)
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit(f"FAIL: nothing answers on {port}")


def start_kvd(directory, *extra):
    port = free_port()
    log = os.path.join(WORK, f"kvd-{port}.log")
    process = subprocess.Popen([KVD, "--port", str(port), "--dir", directory, *extra],
                               stdout=open(log, "w"), stderr=subprocess.STDOUT)
    PROCESSES.append(process)
    return process, wait(port, process, log), log


def start_redis(directory):
    port = free_port()
    log = os.path.join(WORK, f"redis-{port}.log")
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
                                "--save", "", "--appendonly", "no"],
                               stdout=open(log, "w"), stderr=subprocess.STDOUT)
    PROCESSES.append(process)
    return process, wait(port, process, log), log


def populate(r):
    rnd = random.Random(31)
    for db in (0, 3, 15):
        r.execute_command("SELECT", db)
        p = f"db{db}:".encode()
        r.set(p + b"str", b"hello")
        r.set(p + b"int", b"12345")
        r.set(p + b"negint", b"-7")
        r.set(p + b"bigint", b"9223372036854775807")
        r.set(p + b"binary", bytes(range(256)))
        r.set(p + b"compressible", b"abc" * 1000)
        r.set(p + b"large", bytes(rnd.getrandbits(8) for _ in range(100_000)))
        r.set(p + b"empty", b"")
        r.set(p + b"volatile", b"v", px=3_600_000)
        r.set(p + b"volatile-far", b"v", pxat=4_102_444_800_000)
        r.hset(p + b"hash-small", mapping={b"f1": b"v1", b"f2": b"22", b"f3": b"-3"})
        r.hset(p + b"hash-large", mapping={f"field{i}".encode(): f"value{i}".encode() * (i % 5 + 1) for i in range(300)})
        r.hset(p + b"hash-longvalue", mapping={b"f": b"x" * 100})
        r.rpush(p + b"list-small", b"a", b"1", b"-2", b"c" * 30)
        r.rpush(p + b"list-large", *[f"item{i}".encode() for i in range(2000)])
        r.rpush(p + b"list-plain", b"small", b"y" * 20_000, b"z")
        r.sadd(p + b"set-intset", 1, 2, 3, -100, 65536, 4_294_967_296)
        r.sadd(p + b"set-strings", b"a", b"b", b"c")
        r.sadd(p + b"set-large", *range(1000))
        r.zadd(p + b"zset-small", {b"a": 1, b"b": 2.5, b"c": -3, b"inf": float("inf"), b"ninf": float("-inf")})
        r.zadd(p + b"zset-large", {f"m{i}".encode(): i / 7 for i in range(500)})
        r.zadd(p + b"zset-longmember", {b"m" * 100: 1})
        r.expire(p + b"hash-small", 7200)
        r.pexpire(p + b"list-large", 9_000_000)
        r.expire(p + b"set-large", 100_000)
        r.expire(p + b"zset-small", 5000)
    r.execute_command("SELECT", 0)
    r.execute_command("FUNCTION", "LOAD", "#!lua name=interop\n-- " + "padding " * 30 + "\n"
                      "redis.register_function('interop_f', function(keys, args) return 'from ' .. args[1] end)")


def contents(r, key, kind):
    if kind == b"string": return r.get(key)
    if kind == b"hash": return r.hgetall(key)
    if kind == b"list": return r.lrange(key, 0, -1)
    if kind == b"set": return r.smembers(key)
    if kind == b"zset": return r.zrange(key, 0, -1, withscores=True)
    raise SystemExit(f"FAIL: unexpected type {kind!r} of {key!r}")


def dump(r):
    """Every database: key -> (type, contents, pttl), read in pipelines."""
    data = {}
    for db in range(16):
        r.execute_command("SELECT", db)
        keys = r.keys(b"*")
        pipe = r.pipeline(transaction=False)
        for key in keys: pipe.type(key)
        kinds = pipe.execute()
        pipe = r.pipeline(transaction=False)
        for key, kind in zip(keys, kinds):
            contents(pipe, key, kind)
            pipe.pttl(key)
        replies = pipe.execute()
        for index, (key, kind) in enumerate(zip(keys, kinds)):
            value = replies[2 * index]
            data[(db, key)] = (kind, sorted(value) if kind == b"set" else value, replies[2 * index + 1])
    r.execute_command("SELECT", 0)
    libraries = r.execute_command("FUNCTION", "LIST", "WITHCODE")
    called = r.execute_command("FCALL", "interop_f", 0, "x") if libraries else None
    data[(-1, b"functions")] = (b"functions", (libraries, called), -1)
    data[None] = time.monotonic()
    return data


def compare(expected, got, what):
    # A TTL counts down between the two reads: allow that time, plus a second.
    slack = (got.pop(None) - expected[None]) * 1000 + 1000
    expected = {key: value for key, value in expected.items() if key is not None}
    if set(expected) != set(got):
        missing = sorted(set(expected) - set(got))[:5]
        extra = sorted(set(got) - set(expected))[:5]
        raise SystemExit(f"FAIL {what}: keys differ; missing {missing}, extra {extra}")
    for key, (kind, value, ttl) in expected.items():
        gkind, gvalue, gttl = got[key]
        if (kind, value) != (gkind, gvalue):
            raise SystemExit(f"FAIL {what}: {key} is {gkind!r} {str(gvalue)[:200]}, expected {kind!r} {str(value)[:200]}")
        if (ttl < 0) != (gttl < 0) or abs(ttl - gttl) > slack:
            raise SystemExit(f"FAIL {what}: {key} has PTTL {gttl}, expected {ttl}")
    keys = [key for key in expected if key[0] >= 0]
    functions = " and the function library" if expected.get((-1, b"functions"), (0, ([], 0)))[1][0] else ""
    print(f"ok: {what}: {len(keys)} keys, in {len({db for db, _ in keys})} databases{functions}, answer the same")


def stop(process):
    process.kill()
    process.wait(10)


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
    after[None] = time.monotonic()
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
    r.save()
    saved = dump(r)
    r.mset({f"k{i}": "changed" for i in range(300_000)})
    r.bgsave()
    time.sleep(0.05)
    if r.info("persistence")["rdb_bgsave_in_progress"] != 1:
        raise SystemExit("FAIL: the BGSAVE to interrupt was over before the kill")
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
finally:
    for process in PROCESSES:
        if process.poll() is None:
            process.kill()
    shutil.rmtree(WORK, ignore_errors=True)
