"""What the persistence checks share (tools/rdb-interop.py, tools/aof-interop.py):
a free port, waiting for a server, a dataset of every type in Redis's compact
and large encodings with expiries in several databases, and reading every key
back (TYPE, contents, PTTL) to compare two servers key by key."""
import os, random, socket, subprocess, time
import redis


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


def launch(work, processes, name, command):
    """Starts `command` on a free port (its log in `work`, the process kept in
    `processes` to be killed at the end); returns it, a client, the log's path."""
    port = free_port()
    log = os.path.join(work, f"{name}-{port}.log")
    process = subprocess.Popen([*command, "--port", str(port)], stdout=open(log, "w"), stderr=subprocess.STDOUT)
    processes.append(process)
    return process, wait(port, process, log), log


def stop(process):
    process.kill()
    process.wait(10)


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
                      "redis.register_function('interop_f', function(keys, args) return 'from ' .. args[1] end)\n"
                      "redis.register_function('interop_incr', function(keys, args) return redis.call('INCR', keys[1]) end)")
    # A function's writes are logged as their effects (an FCALL logged too would count twice on replay).
    for _ in range(2):
        r.execute_command("FCALL", "interop_incr", 1, "db0:fcall-counter")


def contents(r, key, kind):
    if kind == b"string": return r.get(key)
    if kind == b"hash": return r.hgetall(key)
    if kind == b"list": return r.lrange(key, 0, -1)
    if kind == b"set": return r.smembers(key)
    if kind == b"zset": return r.zrange(key, 0, -1, withscores=True)
    raise SystemExit(f"FAIL: unexpected type {kind!r} of {key!r}")


def sorted_functions(library):
    """A FUNCTION LIST entry with its functions in name order (Redis lists them in its dict's order)."""
    library = list(library)
    for index in range(0, len(library) - 1, 2):
        if library[index] == b"functions":
            library[index + 1] = sorted(library[index + 1], key=lambda function: function[1])
    return library


def dump(r):
    """Every database: key -> (type, contents, pttl), read in pipelines;
    under None, when the reading started and ended."""
    started = time.monotonic()
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
    libraries = [sorted_functions(library) for library in r.execute_command("FUNCTION", "LIST", "WITHCODE")]
    called = r.execute_command("FCALL", "interop_f", 0, "x") if libraries else None
    data[(-1, b"functions")] = (b"functions", (libraries, called), -1)
    data[None] = (started, time.monotonic())
    return data


def compare(expected, got, what):
    # A TTL counts down between the two reads, at most from the start of
    # the first dump to the end of the second: allow that, plus a second.
    slack = (got.pop(None)[1] - expected[None][0]) * 1000 + 1000
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
