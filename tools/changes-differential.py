#!/usr/bin/env python3
"""kvd counts changes as redis-server 7.0.15 counts them (its `server.dirty`).

INFO's `rdb_changes_since_last_save` is what the `save` points compare
with their threshold, so a server that counts one change where Redis
counts ten snapshots later. The same seeded commands of every type go to a
kvd and a redis-server over raw RESP2 connections, on a few keys and
members so that commands add, update, remove, create and empty; after each
command, both replies must be equal byte for byte (but for the few whose
reply is random) and so must the change in `rdb_changes_since_last_save`.
Every command that differs is listed, each with its first differing calls.
Then clients parked on BLPOP, BLMOVE, BLMPOP, BZPOPMIN and BZMPOP are
served by another client's push: Redis counts the push, and the pops of
all but the first two.
Usage: changes-differential.py path/to/kvd [seed] [commands]
"""
import re
from differential import PARKED_CASES, park, redis_and_kvd
import seeded_commands

KVD, SEED, COUNT = seeded_commands.from_command_line(20261203, 6000)


def changes(connection):
    text = connection.send(["INFO", "persistence"]).decode()
    return int(re.search(r"rdb_changes_since_last_save:(\d+)", text).group(1))


with redis_and_kvd(KVD, SEED, "changes-differential") as differential:
    connections = differential.connections[2]
    differential.both("FLUSHALL")
    differential.both("SELECT", "0")
    before = [changes(connection) for connection in connections]
    differing = {}
    for _ in range(COUNT):
        command = seeded_commands.command()
        random_reply = command[0] is None
        command = command[1:] if random_reply else command
        differential.comparing = not random_reply
        if command[0] in ("FLUSHDB", "FLUSHALL"):
            # A flush counts the keys it empties, and an expired key that
            # no expiry cycle reclaimed yet among them (when a cycle runs
            # differs between the servers): those go first, uncounted.
            for database in ("1", "0"):  # SWAPDB and MOVE take keys to 1
                differential.both("SELECT", database)
                differential.both("DEL", "e0", "e1", "e2")
            before = [changes(connection) for connection in connections]
        seeded_commands.run(differential, command)
        after = [changes(connection) for connection in connections]
        deltas = [a - b for a, b in zip(after, before)]
        before = after
        if deltas[0] != deltas[1]:
            differing.setdefault(command[0], []).append((command, deltas))
    calls = sum(len(found) for found in differing.values())
    if differing:
        for name, found in sorted(differing.items()):
            print(f"{name}: {len(found)} call(s) counted differently, e.g.")
            for command, (redis_delta, kvd_delta) in found[:3]:
                print(f"  {' '.join(command)}: redis-server {redis_delta}, kvd {kvd_delta}")
        raise SystemExit(f"FAIL (seed {SEED}): {calls} of {COUNT} commands changed rdb_changes_since_last_save "
                         f"by another amount in kvd ({len(differing)} commands)")
    print(f"ok: {COUNT} commands of every type, each counted as redis-server counts it "
          f"({differential.checks} replies equal)")

    # A parked client served by another's push.
    for block, push in PARKED_CASES:
        counted = []
        for port, pusher in zip(differential.ports, connections):
            pusher.send(["DEL", "q", "z", "d"])
            before = changes(pusher)
            parked = park(port, pusher, block)
            pusher.send(push)
            served = parked.reply()
            counted.append((changes(pusher) - before, served))
            parked.socket.close()
        if counted[0] != counted[1]:
            raise SystemExit(f"FAIL: {' '.join(block)} served by {' '.join(push)}: redis-server counted "
                             f"{counted[0][0]} and answered {counted[0][1]!r}, kvd {counted[1][0]} and {counted[1][1]!r}")
    print(f"ok: {len(PARKED_CASES)} parked clients served by a push, counted as redis-server counts them")
