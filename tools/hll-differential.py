#!/usr/bin/env python3
"""kvd's HyperLogLogs are redis-server 7.0.15's, byte for byte.

The same seeded operations go to a kvd and a redis-server over raw RESP
connections (tools/differential.py), and every reply and every value must
be equal, byte for byte:
(a) PFADD batches of random elements (binary, empty, repeated) into several
    keys, under hll-sparse-max-bytes of 0, 200, 3000 (the default) and
    20000, so that the sparse opcodes split, merge and turn dense at the
    same adds; PFCOUNT after each (the cached count written back into the
    value), PFCOUNT of several keys, PFMERGE into new and existing keys
    (sparse and dense sources), PFDEBUG ENCODING, DECODE, GETREG, TODENSE.
(b) corrupt values: a HyperLogLog (its count cached or stale) with random
    bytes changed, cut or appended (SETRANGE, SET, APPEND), then PFCOUNT,
    PFADD, PFMERGE and PFDEBUG:
    both servers answer the same error or the same value.
(c) DUMP of each value restores in the other server to the same bytes.
Usage: hll-differential.py path/to/kvd [seed]
"""
import random, sys
from differential import redis_and_kvd

KVD = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261203
rng = random.Random(SEED)


def cut_short(value):
    """True when a sparse value ends in an XZERO missing its second byte:
    redis-server reads that byte from past its string (whatever an earlier
    change left there), so what it does next is not a reference."""
    if len(value) < 17 or value[4] != 1:
        return False
    position = 16
    while position < len(value):
        position += 2 if value[position] & 0xc0 == 0x40 else 1
    return position > len(value)


def same_value(key):
    both("GET", key)


def element():
    kind = rng.random()
    if kind < 0.05:
        return b""
    if kind < 0.25:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 24)))
    return str(rng.random()).encode()


with redis_and_kvd(KVD, SEED, "hll-differential") as differential:
    both = differential.both
    redis_client, kvd_client = differential.clients

    # (a) the operations
    for limit in (3000, 0, 200, 20000):
        both("FLUSHALL")
        both("CONFIG", "SET", "hll-sparse-max-bytes", str(limit))
        keys = [f"h{index}" for index in range(4)]
        for step in range(300):
            key = rng.choice(keys)
            size = rng.choice((0, 1, 3, 10, 50, 200))
            both("PFADD", key, *[element() for _ in range(size)])
            same_value(key)
            both("PFCOUNT", key)
            same_value(key)
            if step % 10 == 0:
                both("PFCOUNT", *rng.sample(keys + ["absent"], rng.randrange(2, 5)))
                both("PFDEBUG", "ENCODING", key)
                both("PFDEBUG", "DECODE", key)
            if step % 25 == 0:
                destination = rng.choice(keys + [f"m{step}"])
                both("PFMERGE", destination, *rng.sample(keys + ["absent"], rng.randrange(1, 4)))
                same_value(destination)
                both("PFCOUNT", destination)
            if step % 60 == 59:
                both("PFDEBUG", rng.choice(("GETREG", "TODENSE")), key)
                same_value(key)
        # A repeat adds nothing: 0, and the value (its cache) stays.
        both("PFADD", keys[0], "a", "b", "c")
        both("PFADD", keys[0], "a", "b", "c")
        same_value(keys[0])
    print(f"ok: PFADD, PFCOUNT, PFMERGE and PFDEBUG under four sparse limits, the same bytes ({differential.checks} checks)")

    # (b) corrupt values
    both("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
    corrupted = skipped = 0
    for trial in range(1500):
        both("DEL", "c", "d")
        both("PFADD", "c", *[element() for _ in range(rng.choice((0, 3, 40, 400, 3000)))])
        if rng.random() < 0.3:
            both("PFDEBUG", "TODENSE", "c")
        if rng.random() < 0.5:
            both("PFCOUNT", "c")  # a valid cached count, which the damage may leave in place
        value = redis_client.get("c")
        kind = rng.random()
        if kind < 0.6:
            for _ in range(rng.randrange(1, 4)):
                both("SETRANGE", "c", rng.randrange(len(value)), bytes([rng.randrange(256)]))
        elif kind < 0.8:
            both("SET", "c", value[: rng.randrange(len(value) + 1)])
        else:
            both("APPEND", "c", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))))
        corrupted += 1
        differential.comparing = not cut_short(redis_client.get("c"))
        skipped += not differential.comparing
        operation = rng.randrange(5)
        if operation == 0:
            both("PFCOUNT", "c")
        elif operation == 1:
            both("PFADD", "c", *[element() for _ in range(rng.randrange(1, 30))])
        elif operation == 2:
            both("PFADD", "d", "x", "y")
            both("PFMERGE", "d", "c")
            same_value("d")
        elif operation == 3:
            both("PFCOUNT", "c", "absent")
        else:
            both("PFDEBUG", rng.choice(("GETREG", "DECODE", "ENCODING", "TODENSE")), "c")
        same_value("c")
        differential.comparing = True
    both("PING")
    print(f"ok: {corrupted - skipped} corrupt values answered alike ({skipped} cut short in an XZERO run, not compared)")

    # (c) DUMP and RESTORE, both ways
    both("FLUSHALL")
    for index, size in enumerate((0, 5, 500, 5000)):
        both("PFADD", f"r{index}", *[element() for _ in range(size)])
        both("PFCOUNT", f"r{index}")
        for source, target in ((redis_client, kvd_client), (kvd_client, redis_client)):
            target.restore(f"copy{index}", 0, source.dump(f"r{index}"), replace=True)
        same_value(f"copy{index}")
        both("PFCOUNT", f"copy{index}")
    print(f"ok: DUMP and RESTORE move HyperLogLogs both ways ({differential.checks} checks in all)")
