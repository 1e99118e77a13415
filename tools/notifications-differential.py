#!/usr/bin/env python3
"""kvd publishes keyspace notifications as redis-server 7.0.15 publishes them,
and counts INFO's keyspace_hits and keyspace_misses as it counts them.

Both servers get `notify-keyspace-events AKEnm` (every class: each change
on both channels, new keys and key misses) and a subscriber to every
keyspace and keyevent channel. The same seeded commands of every type as
changes-differential.py's (tools/seeded_commands.py), read commands of
every type, and a few that delete through an expiry in the past or
replace with RESTORE, go to both; after each command a PUBLISH on a
channel of its own marks the end of its events, and the events each
server published for the command (channel and message, in order) must be
equal, and so must the command's change to keyspace_hits and
keyspace_misses (which reads Redis counts: its lookupKeyRead, not its
lookupKeyWrite). Expirations are compared apart, as a
whole at the end, by key: when a key that is due goes (lazily, or by an
expiry cycle) depends on each server's timing, not on the command. Then clients
parked on BLPOP, BLMOVE, BLMPOP, BZPOPMIN and BZMPOP are served by another
client's push, and the events of the push and the pops must be equal.
Usage: notifications-differential.py path/to/kvd [seed] [commands]
"""
import collections, re, time
from differential import PARKED_CASES, Raw, encode, park, redis_and_kvd
import seeded_commands
from seeded_commands import key, members, rng, ttl

KVD, SEED, COUNT = seeded_commands.from_command_line(20261204, 5000)


def fields(frame):
    """The bulks of a RESP2 array of bulks, as bytes."""
    lines = frame.split(b"\r\n")
    assert lines[0].startswith(b"*"), frame
    parts, index = [], 1
    while len(parts) < int(lines[0][1:]):
        if lines[index].startswith(b"$"):
            parts.append(lines[index + 1])
            index += 2
        else:
            parts.append(lines[index][1:])
            index += 1
    return parts


class Listener:
    """A subscriber to every keyspace and keyevent channel, and to `sync`."""

    def __init__(self, port):
        self.raw = Raw(port, 2)
        self.raw.socket.sendall(encode(["PSUBSCRIBE", "__key*__:*"]))
        self.raw.reply()
        self.raw.socket.sendall(encode(["SUBSCRIBE", "sync"]))
        self.raw.reply()

    def until(self, marker):
        """The events up to the `sync` message `marker`, as (channel, message)."""
        events = []
        while True:
            parts = fields(self.raw.reply())
            if parts[0] == b"message" and parts[1] == b"sync":
                if parts[2] != marker.encode():
                    raise SystemExit(f"FAIL: sync message {parts[2]!r} where {marker} was due")
                return events
            assert parts[0] == b"pmessage", parts
            events.append((parts[2], parts[3]))


def expiration(event):
    channel, message = event
    return message == b"expired" or channel.endswith(b"__:expired")


def expired_key(event):
    """The key an expiration event names, and the channel's kind: not its
    database (SWAPDB may take a key that is due but not yet reclaimed to
    another database in one server and not in the other)."""
    channel, message = event
    if channel.startswith(b"__keyspace@"):
        return (b"keyspace", channel.split(b"__:", 1)[1])
    return (b"keyevent", message)


with redis_and_kvd(KVD, SEED, "notifications-differential") as differential:
    connections = differential.connections[2]
    differential.both("CONFIG", "SET", "notify-keyspace-events", "AKEnm")
    differential.both("FLUSHALL")
    differential.both("SELECT", "0")
    # A DUMP payload for RESTORE, from redis-server: both must take it.
    connections[0].send(["RPUSH", "payload", "a", "b"])
    redis_client = differential.clients[0]
    payload = redis_client.dump("payload")
    connections[0].send(["DEL", "payload"])
    listeners = [Listener(port) for port in differential.ports]
    markers = 0

    def sync():
        """Every event published so far, by server."""
        global markers
        markers += 1
        for connection in connections:
            connection.send(["PUBLISH", "sync", str(markers)])
        return [listener.until(str(markers)) for listener in listeners]

    def reads(connection):
        text = connection.send(["INFO", "stats"]).decode()
        return tuple(int(re.search(rf"keyspace_{kind}:(\d+)", text).group(1)) for kind in ("hits", "misses"))

    extra = [
        # Reads of every type, their keys present, absent, due or of another type.
        lambda: [rng.choice(("GET", "STRLEN", "TYPE", "TTL", "PTTL", "EXISTS", "TOUCH", "GETBIT", "BITCOUNT")),
                 key(rng.choice("snhle"))],
        lambda: ["MGET", key("s"), key("e"), key("h")],
        lambda: ["EXISTS", key("s"), key("e"), key("n")],
        lambda: [rng.choice(("GETRANGE", "SUBSTR")), key("s"), "0", "-1"],
        lambda: ["BITPOS", key(rng.choice("bs")), "1"],
        lambda: [rng.choice(("EXPIRETIME", "PEXPIRETIME")), key(rng.choice("se"))],
        lambda: ["EXISTS", key("s"), key("s"), key("s")],
        lambda: ["OBJECT", "FREQ", key("s")],
        lambda: [None, "OBJECT", "IDLETIME", key("s")],
        lambda: [None, "HRANDFIELD", key("h"), rng.choice(("1", "-2", "0"))],
        lambda: [None, "SRANDMEMBER", key("t"), rng.choice(("1", "-2", "0"))],
        lambda: [None, "ZRANDMEMBER", key("z"), rng.choice(("1", "-2", "0"))],
        lambda: [None, rng.choice(("HSCAN", "SSCAN", "ZSCAN")), key(rng.choice("htzs")), "0"]
                + rng.choice(([], ["COUNT", "0"], ["MATCH", "m*"], ["BOGUS"])),
        lambda: [rng.choice(("ZRANGEBYSCORE", "ZREVRANGEBYSCORE")), key("z"), "+inf", "-inf"],
        lambda: ["ZREVRANGE", key("z"), "0", "-1"],
        lambda: ["ZREVRANK", key("z"), members((1, 1))[0]],
        lambda: ["ZLEXCOUNT", key("x"), "-", "+"],
        lambda: ["LPOS", key("l"), members((1, 1))[0], "RANK", "-1", "COUNT", "0", "MAXLEN", "5"],
        lambda: ["GEOHASH", key("g"), "m1", "m2"],
        lambda: ["GEORADIUSBYMEMBER", key("g"), members((1, 1))[0], "500", "km"]
                + rng.choice(([], ["STORE", key("z")])),
        lambda: ["GEORADIUS", key("g"), "13.5", "38.5", "200", "km", "STORE", key("z")],
        lambda: ["EVAL", "return {redis.call('get', KEYS[1]), redis.call('exists', KEYS[2])}", "2",
                 key("s"), key("h")],
        lambda: ["SET", f"m{rng.randrange(6)}", str(rng.randrange(9))],
        lambda: ["SORT", key("l"), "BY", "*", "GET", "*", "GET", "#"],
        lambda: ["SORT", key("l"), "BY", "*", "GET", "*", "STORE", key("l")],
        lambda: ["LCS", key("s"), key("s")],
        lambda: [rng.choice(("HGET", "HEXISTS", "HSTRLEN")), key("h"), members((1, 1))[0]],
        lambda: [rng.choice(("HGETALL", "HLEN", "HKEYS", "HVALS")), key(rng.choice("hs"))],
        lambda: ["HMGET", key("h"), "a", "b"],
        lambda: [rng.choice(("LLEN",)), key(rng.choice("ls"))],
        lambda: ["LRANGE", key("l"), "0", "-1"],
        lambda: ["LINDEX", key("l"), "0"],
        lambda: ["LPOS", key("l"), members((1, 1))[0]],
        # A set's order is its hash table's, in both: not compared.
        lambda: [None, "SMEMBERS", key(rng.choice("ts"))],
        lambda: ["SCARD", key(rng.choice("ts"))],
        lambda: ["SISMEMBER", key("t"), members((1, 1))[0]],
        lambda: ["SMISMEMBER", key("t"), "m1", "m2"],
        lambda: [None, rng.choice(("SUNION", "SINTER", "SDIFF")), key("t"), key("t")],
        lambda: ["SINTERCARD", "2", key("t"), key("t")],
        lambda: [rng.choice(("ZCARD",)), key(rng.choice("zs"))],
        lambda: ["ZSCORE", key("z"), members((1, 1))[0]],
        lambda: ["ZRANK", key("z"), members((1, 1))[0]],
        lambda: ["ZRANGE", key("z"), "0", "-1", "WITHSCORES"],
        lambda: ["ZCOUNT", key("z"), "-inf", "+inf"],
        lambda: ["ZMSCORE", key("z"), "m1", "m2"],
        lambda: [rng.choice(("ZUNION", "ZINTER", "ZDIFF")), "2", key("z"), key("z")],
        lambda: ["ZINTERCARD", "2", key("z"), key("z")],
        lambda: ["PFCOUNT", key("p")],
        lambda: ["PFCOUNT", key("p"), key("p")],
        lambda: ["BITFIELD", key("b"), "GET", "u4", "0"],
        lambda: ["BITFIELD_RO", key("b"), "GET", "u4", "0"],
        lambda: ["SORT_RO", key(rng.choice("lt")), "ALPHA"],
        lambda: ["SORT", key("l"), "BY", "nosort", "GET", "s*", "GET", "#"],
        lambda: ["GEOPOS", key("g"), "m1"],
        lambda: ["GEODIST", key("g"), "m1", "m2"],
        lambda: ["GEOSEARCH", key("g"), "FROMLONLAT", "13.5", "38.5", "BYRADIUS", "200", "km"],
        lambda: ["GEORADIUS", key("g"), "13.5", "38.5", "200", "km"],
        lambda: [None, "DUMP", key(rng.choice("slhe"))],
        # A string's encoding after APPEND or SETRANGE differs (kvd keeps no raw/embstr).
        lambda: [None, "OBJECT", "ENCODING", key(rng.choice("sle"))],
        lambda: [None, "MEMORY", "USAGE", key(rng.choice("sle"))],
        lambda: [None, "SCAN", "0", "COUNT", "100"],
        lambda: [None, "SCAN", "0", "TYPE", "string", "COUNT", "100"],
        lambda: [None, "RANDOMKEY"],
        lambda: ["WATCH", key("s")],
        lambda: ["UNWATCH"],
        lambda: ["SET", key("s"), "v", "GET"],
        lambda: ["GETDEL", key("s")],
        lambda: ["GETEX", key("s")],
        lambda: ["EXPIRE", key("s"), "-1"],
        lambda: ["GETEX", key("s"), "PXAT", "1"],
        lambda: ["GETEX", key("s"), "PX", ttl()],
        lambda: ["RESTORE", key(rng.choice("sl")), "0", payload, "REPLACE"],
        lambda: ["RESTORE", key("l"), "0", payload],
        lambda: ["RENAME", key("s"), key("h")],
        lambda: ["SET", key("s"), "v", "KEEPTTL"],
        lambda: ["SET", key("e"), "w"],
        lambda: ["EXPIRE", key("e"), "100"],
        lambda: ["RENAME", key("s"), key("e")],
    ]
    expirations = [collections.Counter(), collections.Counter()]
    differing = {}
    compared = 0
    sync()
    counted = [reads(connection) for connection in connections]
    for _ in range(COUNT):
        command = rng.choice(extra)() if rng.random() < 0.3 else seeded_commands.command()
        random_reply = command[0] is None
        command = command[1:] if random_reply else command
        differential.comparing = not random_reply
        if command[0] in ("FLUSHDB", "FLUSHALL", "SCAN", "RANDOMKEY"):
            # A flush drops an expired key that no expiry cycle reclaimed
            # yet without an event, and SCAN and RANDOMKEY meet it or not
            # as each server's expiry cycles ran: those expire first, in
            # both (the e keys' 1 ms, the s keys' GETEX PX).
            for database in ("1", "0"):  # SWAPDB takes keys to 1
                differential.both("SELECT", database)
                differential.both("EXISTS", "e0", "e1", "e2", "s0", "s1", "s2")
            counted = [reads(connection) for connection in connections]
        seeded_commands.run(differential, command)
        events = sync()
        for server, published in enumerate(events):
            expirations[server].update(expired_key(event) for event in published if expiration(event))
        kept = [[event for event in published if not expiration(event)] for published in events]
        compared += len(kept[0])
        now = [reads(connection) for connection in connections]
        deltas = [tuple(after - before for after, before in zip(now[server], counted[server])) for server in (0, 1)]
        counted = now
        if kept[0] != kept[1] or deltas[0] != deltas[1]:
            differing.setdefault(command[0], []).append((command, [kept[0] + [deltas[0]], kept[1] + [deltas[1]]]))
    # Every key still due expires now, in both, for the expirations' count.
    time.sleep(0.05)
    for database in ("1", "0"):
        differential.both("SELECT", database)
        differential.both("EXISTS", "e0", "e1", "e2")
    for server, published in enumerate(sync()):
        expirations[server].update(expired_key(event) for event in published if expiration(event))
    if differing:
        for name, found in sorted(differing.items()):
            print(f"{name}: {len(found)} call(s) published differently, e.g.")
            for command, (redis_events, kvd_events) in found[:3]:
                shown = [argument if isinstance(argument, str) else "<payload>" for argument in command]
                print(f"  {' '.join(shown)}:\n    redis-server {redis_events}\n    kvd          {kvd_events}")
        calls = sum(len(found) for found in differing.values())
        raise SystemExit(f"FAIL (seed {SEED}): {calls} of {COUNT} commands published other events in kvd "
                         f"({len(differing)} commands)")
    if expirations[0] != expirations[1]:
        raise SystemExit(f"FAIL (seed {SEED}): expirations published differ: redis-server "
                         f"{dict(expirations[0])}, kvd {dict(expirations[1])}")
    print(f"ok: {COUNT} commands of every type, each publishing the events redis-server publishes "
          f"({compared} events, and {sum(expirations[0].values())} of expirations, alike; "
          f"{differential.checks} replies equal)")

    # A parked client served by another's push.
    for block, push in PARKED_CASES:
        for connection in connections:
            connection.send(["DEL", "q", "z", "d"])
        sync()
        counted = [reads(connection) for connection in connections]
        parked = []
        for port, pusher in zip(differential.ports, connections):
            client = park(port, pusher, block)
            pusher.send(push)
            client.reply()
            parked.append(client)
        events = sync()
        for client in parked:
            client.socket.close()
        for server, connection in enumerate(connections):
            events[server].append(tuple(a - b for a, b in zip(reads(connection), counted[server])))
        if events[0] != events[1]:
            raise SystemExit(f"FAIL: {' '.join(block)} served by {' '.join(push)}: redis-server published "
                             f"{events[0]}, kvd {events[1]}")
    print(f"ok: {len(PARKED_CASES)} parked clients served by a push, publishing the events redis-server publishes "
          "and counting the same keyspace hits and misses")
