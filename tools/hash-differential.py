#!/usr/bin/env python3
"""kvd's hashes answer as redis-server 7.0.15's, through their conversion.

The same seeded commands go to a kvd and a redis-server over raw RESP2 and
RESP3 connections (tools/differential.py), each reply compared byte for
byte: HSET (one field or two), HSETNX, HDEL, HINCRBY, HINCRBYFLOAT, HMGET,
HGET, HSTRLEN, HEXISTS, HLEN, OBJECT ENCODING, COPY, and the commands whose
order is the hash's (HGETALL, HKEYS, HVALS, HSCAN, HRANDFIELD with a count
past the size), and now and then DEL, so that a key is a listpack again.
After each command, OBJECT ENCODING of its key on both. Six keys of up to
60 fields, values of 1 to 305 bytes, under
hash-max-listpack-entries 40 and -value 300: keys turn from listpack
to hashtable at the same command on both servers, and lengths cross 254
and 255 (where kvd's packed form spends five bytes on a length). In
listpack form the order must be the same; in hashtable form each server
has its own, so those replies are compared as sorted elements. Then each
value goes by DUMP and RESTORE both ways, and must come back the same (a
listpack in the same order).
Usage: hash-differential.py path/to/kvd [seed] [count]
"""
import random, sys
import redis
from differential import redis_and_kvd

KVD = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261204
COUNT = int(sys.argv[3]) if len(sys.argv) > 3 else 8000
rng = random.Random(SEED)
ORDERED = {"HGETALL", "HKEYS", "HVALS", "HSCAN", "HRANDFIELD"}


def command(step):
    key = f"h{rng.randrange(6)}"
    field = f"f{rng.randrange(60)}"
    value = "x" * rng.choice([0, 1, 5, 253, 254, 255, 256, 300, 301]) + str(step)
    kind = rng.randrange(14)
    if rng.random() < 0.01:
        return ["DEL", key]  # so that keys go through their listpack form again
    if kind < 4:
        extra = [f"g{rng.randrange(60)}", "y"] if rng.random() < 0.3 else []
        return ["HSET", key, field, value] + extra
    if kind < 6:
        return ["HDEL", key, field] + ([f"f{rng.randrange(60)}"] if rng.random() < 0.5 else [])
    if kind == 6:
        return ["HINCRBY", key, f"n{rng.randrange(5)}", rng.randrange(-1000, 1000)]
    if kind == 7:
        return ["HMGET", key, field, f"f{rng.randrange(60)}", "n1"]
    if kind == 8:
        return ["HRANDFIELD", key, 1000] + (["WITHVALUES"] if rng.random() < 0.5 else [])
    if kind == 9:
        return ["OBJECT", "ENCODING", key]
    return rng.choice([
        ["HGETALL", key], ["HKEYS", key], ["HVALS", key], ["HSCAN", key, 0, "COUNT", 1000],
        ["HLEN", key], ["HSTRLEN", key, field], ["HEXISTS", key, field], ["HGET", key, field],
        ["HSETNX", key, field, value], ["HINCRBYFLOAT", key, "n2", "1.5"],
        ["COPY", key, f"h{rng.randrange(6)}", "REPLACE"],
    ])


def elements(reply):
    """A RESP reply's bulk strings, sorted: the content, without the order."""
    return sorted(part for part in reply.split(b"\r\n") if part and part[:1] not in b"*%$~>|")


def main():
    with redis_and_kvd(KVD, SEED, "hash-differential") as differential:
        redis_client, kvd_client = differential.clients
        for client in differential.clients:
            client.config_set("hash-max-listpack-entries", 40)
            client.config_set("hash-max-listpack-value", 300)
        conversions = 0
        for step in range(COUNT):
            request = command(step)
            protocol = 3 if step % 3 == 0 else 2
            encoding = redis_client.object("encoding", request[1])
            if request[0] in ORDERED and encoding == b"hashtable":
                differential.comparing = False
                replies = [connection.send(request) for connection in differential.connections[protocol]]
                differential.comparing = True
                if elements(replies[0]) != elements(replies[1]):
                    raise SystemExit(f"FAIL (seed {SEED}): {request!r} on a hashtable\n"
                                     f"  redis-server: {replies[0]!r}\n  kvd:          {replies[1]!r}")
            else:
                differential.both(*request, protocol=protocol)
            # Both servers hold the key in the same encoding after every command.
            after = differential.both("OBJECT", "ENCODING", request[1])
            if encoding == b"listpack" and after.endswith(b"hashtable\r\n"):
                conversions += 1
        # DUMP and RESTORE both ways: a listpack comes back in its order.
        restored = 0
        for index in range(6):
            key = f"h{index}"
            for source, target in ((kvd_client, redis_client), (redis_client, kvd_client)):
                payload = source.dump(key)
                if payload is None:
                    continue
                target.restore(f"restored-{key}", 0, payload, replace=True)
                restored += 1
            for name in (key, f"restored-{key}"):
                if redis_client.object("encoding", name) == b"hashtable":
                    differential.comparing = False
                    pair = [connection.send(["HGETALL", name]) for connection in differential.connections[2]]
                    differential.comparing = True
                    if elements(pair[0]) != elements(pair[1]):
                        raise SystemExit(f"FAIL (seed {SEED}): HGETALL {name} after RESTORE differs")
                else:
                    differential.both("HGETALL", name)
                differential.both("OBJECT", "ENCODING", name)
        if conversions == 0 or restored == 0:
            raise SystemExit(f"FAIL (seed {SEED}): the run made {conversions} conversions and {restored} restores")
        print(f"ok: {differential.checks} replies equal ({COUNT} commands on 6 hashes, {conversions} conversions "
              f"to hashtable, {restored} values moved by DUMP and RESTORE)")


if __name__ == "__main__":
    try:
        main()
    except redis.RedisError as error:
        raise SystemExit(f"FAIL (seed {SEED}): {error}")
