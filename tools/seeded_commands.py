"""Seeded commands of every type, on a few keys and members so that they
add, update, remove, create and empty: what tools/changes-differential.py
and tools/notifications-differential.py send to a redis-server and a kvd
alike. `command()` draws one from a random family; a leading None marks a
command whose reply is random (compared only by what it changes).
"""
import random, sys, time

rng = random.Random()


def from_command_line(default_seed, default_count):
    """`path/to/kvd [seed] [commands]` from the command line, as (kvd,
    seed, count); the draws start from the seed."""
    kvd = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else default_seed
    count = int(sys.argv[3]) if len(sys.argv) > 3 else default_count
    rng.seed(seed)
    return kvd, seed, count


def key(kind):
    return f"{kind}{rng.randrange(3)}"


def members(count_range=(1, 4), pool=6):
    return [f"m{rng.randrange(pool)}" for _ in range(rng.randint(*count_range))]


def score():
    return str(rng.choice((rng.randrange(-3, 4), rng.randrange(-3, 4) + 0.5)))


def lex_bound():
    return rng.choice(("-", "+", f"[m{rng.randrange(7)}", f"(m{rng.randrange(7)}"))


def number():
    return str(rng.randrange(-5, 6))


def ttl():
    return str(rng.randrange(100, 1000))


# Each maker returns a command; a leading None marks a random reply (not
# compared: only the change count is).
STRINGS = [
    lambda: ["SET", key("s"), f"v{rng.randrange(3)}"] + rng.choice(([], ["NX"], ["XX"], ["GET"], ["EX", ttl()],
                                                                    ["KEEPTTL"])),
    lambda: ["SETNX", key("s"), "v"],
    lambda: ["SETEX", key("s"), ttl(), "v"],
    lambda: ["PSETEX", key("s"), ttl() + "000", "v"],
    lambda: ["GETSET", key("s"), "v"],
    lambda: ["GETDEL", key("s")],
    lambda: ["GETEX", key("s")] + rng.choice(([], ["EX", ttl()], ["PERSIST"])),
    lambda: ["APPEND", key("s"), "ab"],
    lambda: ["SETRANGE", key("s"), str(rng.randrange(4)), rng.choice(("", "xy"))],
    lambda: ["INCR", key("n")],
    lambda: ["INCRBY", key("n"), number()],
    lambda: ["DECR", key("n")],
    lambda: ["DECRBY", key("n"), number()],
    lambda: ["INCRBYFLOAT", key("n"), "1.5"],
    lambda: ["MSET"] + [word for _ in range(rng.randint(1, 3)) for word in (key("s"), "mv")],
    lambda: ["MSETNX"] + [word for _ in range(rng.randint(1, 3)) for word in (key("s"), "mv")],
    lambda: ["SETBIT", key("b"), str(rng.randrange(16)), str(rng.randrange(2))],
    lambda: ["BITOP", rng.choice(("AND", "OR", "XOR")), key("b"), key("b"), key("b")],
    lambda: ["BITFIELD", key("b"), "SET", "u4", str(rng.randrange(8)), number().lstrip("-"),
             "INCRBY", "u4", "0", "1"],
    lambda: ["PFADD", key("p")] + members(),
    lambda: ["PFMERGE", key("p"), key("p")],
]
KEYS = [
    lambda: ["DEL"] + [key(rng.choice("shlzn")) for _ in range(rng.randint(1, 3))],
    lambda: ["UNLINK"] + [key(rng.choice("shlzn")) for _ in range(rng.randint(1, 3))],
    lambda: ["EXPIRE", key(rng.choice("shlzn")), ttl()] + rng.choice(([], ["NX"], ["XX"], ["GT"], ["LT"])),
    lambda: ["PEXPIREAT", key(rng.choice("shlzn")), "4102444800000"],
    lambda: ["PERSIST", key(rng.choice("shlzn"))],
    lambda: ["RENAME", key("s"), key("s")],
    lambda: ["RENAMENX", key("h"), key("h")],
    lambda: ["COPY", key("z"), key("z")] + rng.choice(([], ["REPLACE"])),
    lambda: ["MOVE", key("s"), "1"],
    lambda: ["TOUCH", key("s")],
]
HASHES = [
    lambda: ["HSET", key("h")] + [word for m in members() for word in (m, f"v{rng.randrange(2)}")],
    lambda: ["HMSET", key("h")] + [word for m in members() for word in (m, "v")],
    lambda: ["HSETNX", key("h"), members((1, 1))[0], "v"],
    lambda: ["HDEL", key("h")] + members(),
    lambda: ["HINCRBY", key("h"), "count", number()],
    lambda: ["HINCRBYFLOAT", key("h"), "float", "0.5"],
]
LISTS = [
    lambda: [rng.choice(("LPUSH", "RPUSH")), key("l")] + members(),
    lambda: [rng.choice(("LPUSHX", "RPUSHX")), key("l")] + members(),
    lambda: [rng.choice(("LPOP", "RPOP")), key("l")] + rng.choice(([], [str(rng.randrange(0, 4))])),
    lambda: ["LSET", key("l"), str(rng.randrange(-2, 3)), "set"],
    lambda: ["LINSERT", key("l"), rng.choice(("BEFORE", "AFTER")), members((1, 1))[0], "ins"],
    lambda: ["LREM", key("l"), str(rng.randrange(-2, 3)), members((1, 1))[0]],
    lambda: ["LTRIM", key("l"), str(rng.randrange(-3, 3)), str(rng.randrange(-3, 3))],
    lambda: ["LMOVE", key("l"), key("l"), rng.choice(("LEFT", "RIGHT")), rng.choice(("LEFT", "RIGHT"))],
    lambda: ["RPOPLPUSH", key("l"), key("l")],
    lambda: ["LMPOP", "2", key("l"), key("l"), rng.choice(("LEFT", "RIGHT")), "COUNT", str(rng.randint(1, 3))],
]
SETS = [
    lambda: ["SADD", key("t")] + members(),
    lambda: ["SREM", key("t")] + members(),
    # Every member or none: which one a smaller count pops is random.
    lambda: [None, "SPOP", key("t"), rng.choice(("0", "10"))],
    lambda: ["SMOVE", key("t"), key("t"), members((1, 1))[0]],
    lambda: [rng.choice(("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE")), key("t"), key("t"), key("t")],
]
SORTED_SETS = [
    lambda: ["ZADD", key("z")] + rng.choice(([], ["NX"], ["XX"], ["GT"], ["LT"], ["CH"], ["XX", "CH"], ["GT", "CH"]))
            + [word for m in members() for word in (score(), m)],
    lambda: ["ZADD", key("z"), "INCR", score(), members((1, 1))[0]],
    lambda: ["ZINCRBY", key("z"), score(), members((1, 1))[0]],
    lambda: ["ZREM", key("z")] + members(),
    lambda: ["ZREMRANGEBYRANK", key("z"), str(rng.randrange(-3, 3)), str(rng.randrange(-3, 3))],
    lambda: ["ZREMRANGEBYSCORE", key("z"), score(), score()],
    # Lexicographic ranges among equal scores, and among different ones,
    # which Redis's docs leave unspecified: in a small (listpack) set Redis
    # answers by scanning it in order, and kvd answers alike.
    lambda: ["ZADD", key("x"), "0", members((1, 1))[0]],
    lambda: ["ZREMRANGEBYLEX", key(rng.choice("xz")), lex_bound(), lex_bound()],
    lambda: [rng.choice(("ZRANGEBYLEX", "ZREVRANGEBYLEX")), key(rng.choice("xz")), lex_bound(), lex_bound()]
            + rng.choice(([], ["LIMIT", str(rng.randrange(3)), str(rng.randrange(-1, 3))])),
    lambda: ["ZLEXCOUNT", key(rng.choice("xz")), lex_bound(), lex_bound()],
    lambda: ["ZRANGE", key(rng.choice("xz")), lex_bound(), lex_bound(), "BYLEX"] + rng.choice(([], ["REV"]))
            + rng.choice(([], ["LIMIT", str(rng.randrange(3)), str(rng.randrange(-1, 3))])),
    lambda: [rng.choice(("ZPOPMIN", "ZPOPMAX")), key("z")] + rng.choice(([], [str(rng.randrange(0, 4))])),
    lambda: ["ZMPOP", "2", key("z"), key("z"), rng.choice(("MIN", "MAX")), "COUNT", str(rng.randint(1, 3))],
    lambda: [rng.choice(("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE")), key("z"), "2", key("z"), key("z")],
    lambda: ["ZRANGESTORE", key("z"), key("z"), "0", str(rng.randrange(-1, 3))],
    lambda: ["GEOADD", key("g")] + [word for m in members() for word in
                                    (f"{rng.uniform(13, 14):.4f}", f"{rng.uniform(38, 39):.4f}", m)],
    lambda: ["GEOSEARCHSTORE", key("g"), key("g"), "FROMLONLAT", "13.5", "38.5", "BYRADIUS", "200", "km"]
            + rng.choice(([], ["STOREDIST"])),
    lambda: ["SORT", key(rng.choice("lt")), "ALPHA", "STORE", key("l")],
]
OTHERS = [
    # Blocking forms, served at once or timing out after 10 ms.
    lambda: [rng.choice(("BLPOP", "BRPOP")), key("l"), key("l"), "0.01"],
    lambda: ["BLMOVE", key("l"), key("l"), "LEFT", "RIGHT", "0.01"],
    lambda: ["BLMPOP", "0.01", "2", key("l"), key("l"), "LEFT", "COUNT", "2"],
    lambda: [rng.choice(("BZPOPMIN", "BZPOPMAX")), key("z"), key("z"), "0.01"],
    lambda: ["BZMPOP", "0.01", "1", key("z"), "MIN", "COUNT", "2"],
    # A key that expires: neither its expiry nor its absence is a change.
    lambda: ["SET", key("e"), "v", "PX", "1"],
    lambda: ["EXISTS", key("e")],
    lambda: ["PFCOUNT", key("p")],
    lambda: ["PFCOUNT", key("p"), key("p")],
    lambda: ["SWAPDB", "0", rng.choice(("0", "1"))],
    lambda: [rng.choice(("FLUSHDB", "FLUSHALL"))] if rng.random() < 0.2 else ["PING"],
    lambda: ["COPY", key("h"), key("h"), "DB", "1", "REPLACE"],
    # A script's and a transaction's commands count as they would alone.
    lambda: ["EVAL", "redis.call('sadd', KEYS[1], ARGV[1], ARGV[2]); return redis.call('srem', KEYS[1], ARGV[2])",
             "1", key("t"), *members((2, 2))],
    lambda: ["EVAL", "return redis.call('rpush', KEYS[1], ARGV[1], ARGV[1])", "1", key("l"), "m9"],
]
FAMILIES = [STRINGS, KEYS, HASHES, LISTS, SETS, SORTED_SETS, OTHERS]


def command():
    """One command of a random family."""
    return rng.choice(rng.choice(FAMILIES))()


def run(differential, command):
    """Sends `command` to both servers, 3% of the time in a transaction
    beside an HSET of two fields; a key given a 1 ms expiry is due in both
    before the next command."""
    if rng.random() < 0.03:
        differential.both("MULTI")
        differential.both(*command)
        differential.both("HSET", key("h"), "f1", "1", "f2", "2")
        differential.both("EXEC")
    else:
        differential.both(*command)
    if command[-2:] == ["PX", "1"]:
        time.sleep(0.003)
