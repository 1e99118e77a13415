#!/usr/bin/env python3
"""kvd's GEO commands answer as redis-server 7.0.15's, byte for byte.

The same seeded operations go to a kvd and a redis-server (RESP2 and
RESP3 clients both), and every reply must be equal:
(a) GEOADD of random positions, clustered and spread (near the poles'
    limits and the antimeridian too), then GEOPOS, GEODIST in each unit
    and GEOHASH of members present and absent;
(b) GEOSEARCH and GEORADIUS/GEORADIUSBYMEMBER (and their _RO forms) with
    random centres, radii and boxes in random units, WITHDIST, WITHHASH,
    WITHCOORD, COUNT (with and without ANY), ASC, DESC and no order: the
    unsorted answers list members in the order Redis reads its boxes;
(c) GEOSEARCHSTORE and GEORADIUS ... STORE/STOREDIST: the stored sorted
    sets (ZRANGE WITHSCORES) are equal;
(d) members whose scores no position makes (ZADD of negative, huge, NaN
    -free odd scores) decode as Redis decodes them.
Usage: geo-differential.py path/to/kvd [seed]
"""
import random, sys, tempfile
import redis
from persistence_data import launch, stop

KVD = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261203
WORK = tempfile.mkdtemp(prefix="geo-differential-")
PROCESSES = []
rng = random.Random(SEED)
checks = 0


def both(*command, protocol=2):
    """Runs `command` on both servers; fails unless the replies are equal."""
    global checks
    replies = []
    for client in clients[protocol]:
        try:
            replies.append(client.execute_command(*command))
        except redis.ResponseError as error:
            replies.append(("error", str(error)))
    if replies[0] != replies[1]:
        raise SystemExit(f"FAIL (seed {SEED}, RESP{protocol}): {command!r}\n"
                         f"  redis-server: {replies[0]!r}\n  kvd:          {replies[1]!r}")
    checks += 1
    return replies[0]


def position():
    kind = rng.random()
    if kind < 0.5:  # a city's worth of points
        return 13.36 + rng.uniform(-0.3, 0.3), 38.11 + rng.uniform(-0.3, 0.3)
    if kind < 0.6:  # near the antimeridian
        return rng.choice((-1, 1)) * rng.uniform(179.0, 180.0), rng.uniform(-60, 60)
    if kind < 0.7:  # near the latitude limits
        return rng.uniform(-180, 180), rng.choice((-1, 1)) * rng.uniform(80.0, 85.05112878)
    return rng.uniform(-180, 180), rng.uniform(-85.05112878, 85.05112878)


def options():
    """Random WITHDIST, WITHHASH, WITHCOORD, COUNT [ANY], ASC or DESC, in any order."""
    groups = [[flag] for flag in ("WITHDIST", "WITHHASH", "WITHCOORD") if rng.random() < 0.4]
    if rng.random() < 0.5:
        groups.append(["COUNT", str(rng.choice((1, 2, 5, 20)))])
        if rng.random() < 0.4:
            groups.append(["ANY"])
    order = rng.random()
    if order < 0.6:
        groups.append(["ASC" if order < 0.3 else "DESC"])
    rng.shuffle(groups)
    return [word for group in groups for word in group]


def unit():
    return rng.choice(("m", "km", "mi", "ft", "M", "KM"))


try:
    server, redis2, _ = launch(WORK, PROCESSES, "redis",
                               ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
    kvd, kvd2, _ = launch(WORK, PROCESSES, "kvd", [KVD, "--save", "", "--io-threads", "0"])
    redis3 = redis.Redis(port=redis2.connection_pool.connection_kwargs["port"], protocol=3)
    kvd3 = redis.Redis(port=kvd2.connection_pool.connection_kwargs["port"], protocol=3)
    clients = {2: (redis2, kvd2), 3: (redis3, kvd3)}

    # (a) positions
    both("FLUSHALL")
    members = []
    for batch in range(20):
        arguments = []
        for _ in range(rng.choice((1, 10, 50))):
            longitude, latitude = position()
            member = f"m{len(members)}"
            members.append(member)
            arguments += [f"{longitude:.6f}", f"{latitude:.6f}", member]
        both("GEOADD", "g", *arguments)
    for _ in range(300):
        protocol = rng.choice((2, 3))
        picked = rng.sample(members, 3) + ["absent"]
        both("GEOPOS", "g", *picked, protocol=protocol)
        both("GEOHASH", "g", *picked, protocol=protocol)
        both("GEODIST", "g", picked[0], rng.choice(picked), *([unit()] if rng.random() < 0.7 else []),
             protocol=protocol)
    print(f"ok: GEOADD, GEOPOS, GEODIST and GEOHASH of {len(members)} positions ({checks} checks)")

    # (b) searches
    for _ in range(1500):
        protocol = rng.choice((2, 3))
        longitude, latitude = position()
        radius = str(rng.choice((0, 1, 500, 5000, 50000, 500000, 5000000, rng.uniform(0, 20000))))
        kind = rng.randrange(5)
        if kind == 0:
            command = ["GEORADIUS", "g", f"{longitude:.6f}", f"{latitude:.6f}", radius, unit()]
        elif kind == 1:
            command = ["GEORADIUS_RO", "g", f"{longitude:.6f}", f"{latitude:.6f}", radius, unit()]
        elif kind == 2:
            command = [rng.choice(("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO")), "g", rng.choice(members), radius,
                       unit()]
        else:
            center = (["FROMMEMBER", rng.choice(members)] if rng.random() < 0.5
                      else ["FROMLONLAT", f"{longitude:.6f}", f"{latitude:.6f}"])
            shape = (["BYRADIUS", radius, unit()] if rng.random() < 0.5
                     else ["BYBOX", str(rng.uniform(0, 800000)), str(rng.uniform(0, 800000)), unit()])
            command = ["GEOSEARCH", "g", *center, *shape]
        both(*command, *options(), protocol=protocol)
    print(f"ok: 1500 searches answered alike, in the same order ({checks} checks)")

    # (c) stored results
    for trial in range(300):
        longitude, latitude = position()
        radius = str(rng.choice((500, 50000, 5000000)))
        extra = ["COUNT", str(rng.choice((1, 3, 50)))] if rng.random() < 0.5 else []
        if rng.random() < 0.5:
            both("GEOSEARCHSTORE", "dst", "g", "FROMLONLAT", f"{longitude:.6f}", f"{latitude:.6f}", "BYRADIUS",
                 radius, unit(), *extra, *(["STOREDIST"] if rng.random() < 0.5 else []))
        else:
            both("GEORADIUS", "g", f"{longitude:.6f}", f"{latitude:.6f}", radius, unit(), *extra,
                 rng.choice(("STORE", "STOREDIST")), "dst")
        both("ZRANGE", "dst", "0", "-1", "WITHSCORES")
    print(f"ok: 300 stored searches alike ({checks} checks)")

    # (d) scores no GEOADD makes
    both("DEL", "odd")
    for index, score in enumerate(("-1", "-1.5", "0", "1e20", "1e300", "inf", "-inf", "4503599627370495",
                                   "4503599627370496", "9007199254740993", "0.5")):
        both("ZADD", "odd", score, f"o{index}")
    for protocol in (2, 3):
        both("GEOPOS", "odd", *[f"o{index}" for index in range(11)], protocol=protocol)
        both("GEOHASH", "odd", *[f"o{index}" for index in range(11)], protocol=protocol)
        both("GEOSEARCH", "odd", "FROMLONLAT", "0", "0", "BYRADIUS", "30000", "km", "WITHHASH", "WITHCOORD",
             protocol=protocol)
    print(f"ok: members with scores no position makes decode alike ({checks} checks in all)")
    stop(kvd)
    stop(server)
finally:
    for process in PROCESSES:
        if process.poll() is None:
            process.kill()
