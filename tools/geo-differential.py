#!/usr/bin/env python3
"""kvd's GEO commands answer as redis-server 7.0.15's, byte for byte.

The same seeded operations go to a kvd and a redis-server over raw RESP2
and RESP3 connections, and every reply must be equal, byte for byte (the
coordinates' and distances' text included):
(a) GEOADD of random positions, clustered and spread (near the poles'
    limits and the antimeridian too), then GEOPOS, GEODIST in each unit
    and GEOHASH of members present and absent;
(b) GEOSEARCH and GEORADIUS/GEORADIUSBYMEMBER (and their _RO forms) with
    random centres, radii and boxes in random units, WITHDIST, WITHHASH,
    WITHCOORD, COUNT (with and without ANY), ASC, DESC and no order: the
    unsorted answers list members in the order Redis reads its boxes;
(c) GEOSEARCHSTORE and GEORADIUS/GEORADIUSBYMEMBER ... STORE/STOREDIST
    (by radius and by box, from positions and members, with COUNT and
    ANY): the stored sorted sets (ZRANGE WITHSCORES) are equal;
(d) members whose scores no position makes (ZADD of negative, huge,
    infinite scores) decode as Redis decodes them, and searches from them;
(e) many members at one position, searched with COUNT below the matches
    (Redis's partial quicksort picks among equal distances), ASC and DESC;
(f) errors and hostile arguments: radii of inf, 1e308, 5e-324 and -0,
    empty boxes, COUNT 2^63-1 with ANY, wrong types, missing keys.
Usage: geo-differential.py path/to/kvd [seed]
"""
import random, sys
from differential import redis_and_kvd

KVD = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261203
rng = random.Random(SEED)


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


with redis_and_kvd(KVD, SEED, "geo-differential") as differential:
    both = differential.both

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
    print(f"ok: GEOADD, GEOPOS, GEODIST and GEOHASH of {len(members)} positions ({differential.checks} checks)")

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
    print(f"ok: 1500 searches answered alike, in the same order ({differential.checks} checks)")

    # (c) stored results
    for trial in range(300):
        longitude, latitude = position()
        radius = str(rng.choice((500, 50000, 5000000)))
        extra = ["COUNT", str(rng.choice((1, 3, 50)))] if rng.random() < 0.5 else []
        if extra and rng.random() < 0.3:
            extra.append("ANY")
        kind = rng.randrange(4)
        if kind == 0:
            center = (["FROMMEMBER", rng.choice(members)] if rng.random() < 0.5
                      else ["FROMLONLAT", f"{longitude:.6f}", f"{latitude:.6f}"])
            shape = (["BYRADIUS", radius, unit()] if rng.random() < 0.5
                     else ["BYBOX", radius, str(rng.uniform(0, 800000)), unit()])
            both("GEOSEARCHSTORE", "dst", "g", *center, *shape, *extra, *(["STOREDIST"] if rng.random() < 0.5 else []))
        elif kind == 1:
            both("GEORADIUSBYMEMBER", "g", rng.choice(members), radius, unit(), *extra,
                 rng.choice(("STORE", "STOREDIST")), "dst")
        else:
            both("GEORADIUS", "g", f"{longitude:.6f}", f"{latitude:.6f}", radius, unit(), *extra,
                 rng.choice(("STORE", "STOREDIST")), "dst")
        both("ZRANGE", "dst", "0", "-1", "WITHSCORES")
    print(f"ok: 300 stored searches alike ({differential.checks} checks)")

    # (d) scores no GEOADD makes
    both("DEL", "odd")
    odd = ("-1", "-1.5", "0", "1e20", "1e300", "inf", "-inf", "4503599627370495", "4503599627370496",
           "9007199254740993", "0.5")
    for index, score in enumerate(odd):
        both("ZADD", "odd", score, f"o{index}")
    for protocol in (2, 3):
        both("GEOPOS", "odd", *[f"o{index}" for index in range(len(odd))], protocol=protocol)
        both("GEOHASH", "odd", *[f"o{index}" for index in range(len(odd))], protocol=protocol)
        both("GEOSEARCH", "odd", "FROMLONLAT", "0", "0", "BYRADIUS", "30000", "km", "WITHHASH", "WITHCOORD",
             protocol=protocol)
        for index in range(len(odd)):
            both("GEOSEARCH", "odd", "FROMMEMBER", f"o{index}", "BYBOX", "40000", "20000", "km", "WITHDIST",
                 protocol=protocol)
            both("GEORADIUSBYMEMBER", "odd", f"o{index}", "20000", "km", "WITHCOORD", "DESC", protocol=protocol)
    print(f"ok: members with scores no position makes decode alike ({differential.checks} checks)")

    # (e) equal distances under COUNT
    for trial in range(200):
        both("DEL", "same")
        longitude, latitude = position()
        size = rng.choice((7, 8, 20, 41, 60, 200))
        arguments = []
        for index in range(size):
            spot = (longitude, latitude) if rng.random() < 0.7 else position()
            arguments += [f"{spot[0]:.6f}", f"{spot[1]:.6f}", f"s{index}"]
        both("GEOADD", "same", *arguments)
        count = str(rng.randrange(1, size + 3))
        order = rng.choice(("ASC", "DESC"))
        both("GEOSEARCH", "same", "FROMLONLAT", f"{longitude:.6f}", f"{latitude:.6f}", "BYRADIUS", "20000", "km",
             "COUNT", count, order, protocol=rng.choice((2, 3)))
        both("GEORADIUS", "same", f"{longitude:.6f}", f"{latitude:.6f}", "20000", "km", "COUNT", count, order,
             "STORE", "dst")
        both("ZRANGE", "dst", "0", "-1")
    print(f"ok: 200 searches among equal distances keep the same members ({differential.checks} checks)")

    # (f) errors and hostile arguments
    both("SET", "str", "x")
    for protocol in (2, 3):
        for radius in ("inf", "1e308", "5e-324", "-0", "0", "+inf", "-inf", "nan", "1e-300"):
            both("GEOSEARCH", "g", "FROMLONLAT", "13.36", "38.11", "BYRADIUS", radius, "m", "COUNT", "3", "ASC",
                 protocol=protocol)
            both("GEORADIUS", "g", "13.36", "38.11", radius, "km", "WITHDIST", "COUNT", "2", protocol=protocol)
        for box in (("0", "0"), ("inf", "0"), ("0", "inf"), ("1e308", "1e308"), ("-0", "5")):
            both("GEOSEARCH", "g", "FROMMEMBER", members[0], "BYBOX", *box, "km", "COUNT", "4", protocol=protocol)
        both("GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1000", "km", "COUNT", "9223372036854775807",
             "ANY", protocol=protocol)
        both("GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1000", "km", "COUNT", "9223372036854775808",
             protocol=protocol)
        for command in (["GEOSEARCH", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
                        ["GEORADIUS", "nokey", "0", "0", "1", "km", "STORE", "dst"],
                        ["GEOSEARCHSTORE", "dst", "nokey", "FROMMEMBER", "x", "BYBOX", "1", "1", "km"],
                        ["GEOPOS", "str", "a"], ["GEODIST", "nokey", "a", "b"], ["GEOHASH", "nokey", "a"],
                        ["GEORADIUS", "g", "0", "0", "1", "km", "COUNT", "-1"],
                        ["GEOSEARCH", "g", "FROMLONLAT", "181", "0", "BYRADIUS", "1", "km"],
                        ["GEOSEARCH", "g", "BYBOX", "1", "1", "km", "FROMLONLAT", "0", "0", "WITHHASH"]):
            both(*command, protocol=protocol)
    print(f"ok: errors and hostile arguments answered alike ({differential.checks} checks in all)")
