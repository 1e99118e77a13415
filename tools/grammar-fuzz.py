#!/usr/bin/env python3
"""Every command, fed requests drawn from Redis's own grammar of it: the
argument trees COMMAND DOCS gives (Redis 7.0.15's, which kvd serves), each
argument filled with values on the edges of its type (integers around 2^31,
2^32 and 2^63, doubles like inf, nan and 1e308, empty and glob-like
strings, keys of every type and missing ones), optional parts present or
not, repeated parts repeated, and now and then an argument dropped,
doubled or added, every other request on RESP3. The same requests go to a
redis-server and to kvd (with two I/O threads).

kvd fails the check when it stops (a trap, a crash), leaves a request
without a reply within 30 s, closes a connection other than over its
output limit (a random pick of billions: closed at once, and counted in
INFO, as Redis closes a client at its limit), or answers anything but
what redis-server answers, byte for byte. The exceptions are named below:
commands whose replies legitimately differ (random picks, timings, the
server's own description, encodings kvd chooses otherwise) are listed
and not compared, and those whose order follows the servers' hash tables
are compared as sorted elements.

Usage: grammar-fuzz.py path/to/kvd [seed] [requests per command]
"""
import random, socket, sys, time
from differential import encode, Raw, redis_and_kvd

KVD = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261204
PER_COMMAND = int(sys.argv[3]) if len(sys.argv) > 3 else 60
rng = random.Random(SEED)

# Commands that would end the run, block it, answer more or less than once
# or change the server for the requests after them: not drawn. (Their own
# tests cover them.) The rest are followed by RESET: MULTI, SELECT, HELLO
# and WATCH end with their request.
SKIPPED = {"shutdown", "debug", "monitor", "subscribe", "psubscribe", "ssubscribe", "unsubscribe",
           "punsubscribe", "sunsubscribe", "quit", "client|pause", "client|kill", "client|reply",
           "client|unpause", "sync", "psync", "replicaof", "slaveof", "failover", "save", "bgsave",
           "bgrewriteaof", "cluster", "readonly", "readwrite", "config|set", "config|rewrite",
           "config|resetstat", "acl", "module", "script|kill", "function|kill", "lastsave", "latency|doctor",
           "memory|doctor", "pfselftest", "wait", "client|no-evict", "client|tracking"}

# Replies that legitimately differ from redis-server's, and why; listed at
# the end, not compared, unless redis-server's reply is an error (a refusal
# is the same whatever the server holds), but for what kvd lacks.
NOT_COMPARED = {
    # Random picks.
    "spop": "random", "srandmember": "random", "hrandfield": "random", "zrandmember": "random",
    "randomkey": "random",
    # Clocks, timings and the server's own figures.
    "time": "a clock", "info": "the server's figures", "latency|histogram": "timings", "slowlog|get": "timings",
    "slowlog|len": "timings", "client|list": "the server's figures", "client|info": "the server's figures",
    "memory|usage": "kvd's own layout", "memory|stats": "the allocator", "memory|malloc-stats": "the allocator",
    "object|idletime": "a clock",
    # What the server is: its parameters, its commands, its help texts.
    "config|get": "kvd has fewer parameters", "command|list": "kvd has fewer commands",
    "command|info": "kvd has fewer commands", "command|docs": "kvd has fewer commands",
    "command|count": "kvd has fewer commands", "client|help": "kvd's help", "script|help": "kvd's help",
    # Encodings kvd chooses otherwise (README): DUMP's payload.
    "dump": "kvd's payload",
    # Absent from kvd (README): the Lua debugger.
    "script|debug": "not supported",
    # Connection ids: the fuzz reconnects to kvd alone after a close over the limit.
    "client|id": "connection ids", "hello": "connection ids",
    # Cursors follow the servers' hash tables.
    "scan": "hash order", "sscan": "hash order",
}
# Replies whose order follows the servers' hash tables: compared as
# sorted elements.
UNORDERED = {"smembers", "sinter", "sunion", "sdiff", "keys", "sort", "sort_ro"}

INTEGERS = ["0", "1", "-1", "2", "3", "10", "100", "2147483647", "2147483648", "-2147483649", "4294967295",
            "4294967296", "4294967298", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "-9223372036854775807", "4611686018427387904", "99999999999999999999", "1.5", "abc", "", " 1"]
DOUBLES = ["0", "1", "-1", "0.5", "-0.0", "1e308", "-1e308", "1e400", "inf", "-inf", "+inf", "nan", "1e-320",
           "180", "-180", "85.05112878", "90", "9223372036854775807", "abc", ""]
STRINGS = ["a", "", "x", "*", "k*", "*->f", "#", "[a", "(a", "-", "+", "\\", "?", "[", "aaaaaaaaaaaaaaaaaaaa",
           "0", "-1", "1e5", "\x00\xff", "h*->f"]
KEYS = ["str", "list", "hash", "set", "zset", "geo", "hll", "missing", "n"]


def kills_redis(command):
    """Requests redis-server 7.0.15 grows on until it is killed (a random
    pick of billions of elements, which it builds whatever its limit):
    sent to kvd alone."""
    if command[0] not in ("SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER") or len(command) < 3:
        return False
    try:
        return int(command[2]) < -1_000_000
    except ValueError:
        return False


def flatten(reply):
    """COMMAND DOCS's RESP2 maps are flat lists: pairs to a dict."""
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}


def parse(data, at=0):
    """One RESP2 or RESP3 reply in `data` from `at`: (value, where it ends).
    A map is a flat list of keys and values, as in RESP2; an attribute is
    read and dropped."""
    end = data.index(b"\r\n", at)
    kind, rest = data[at:at + 1], data[at + 1:end]
    if kind in (b"$", b"=", b"!"):
        if rest == b"-1":
            return None, end + 2
        length = int(rest)
        return data[end + 2:end + 2 + length], end + 4 + length
    if kind in (b"*", b"~", b">", b"%", b"|"):
        if rest == b"-1":
            return None, end + 2
        items, at = [], end + 2
        for _ in range(int(rest) * (2 if kind in (b"%", b"|") else 1)):
            item, at = parse(data, at)
            items.append(item)
        return (parse(data, at) if kind == b"|" else (items, at))
    if kind == b":":
        return int(rest), end + 2
    if kind == b"_":
        return None, end + 2
    return rest, end + 2


def canonical(value):
    """A parsed reply with every array's elements in one order."""
    if isinstance(value, list):
        return sorted((canonical(item) for item in value), key=repr)
    return value


def same(name, redis_reply, kvd_reply):
    if redis_reply == kvd_reply:
        return True
    return name in UNORDERED and canonical(parse(redis_reply)[0]) == canonical(parse(kvd_reply)[0])


def compared(name, redis_reply):
    return name not in NOT_COMPARED or (redis_reply.startswith(b"-") and NOT_COMPARED[name] != "not supported")


def docs(connection):
    commands = {}
    raw, _ = parse(connection.send(["COMMAND", "DOCS"]))
    for i in range(0, len(raw), 2):
        name = raw[i].decode() if isinstance(raw[i], bytes) else raw[i]
        entry = flatten(raw[i + 1])
        subcommands = entry.get(b"subcommands") or entry.get("subcommands")
        if subcommands:
            for j in range(0, len(subcommands), 2):
                sub = subcommands[j].decode() if isinstance(subcommands[j], bytes) else subcommands[j]
                commands[sub] = flatten(subcommands[j + 1])
        else:
            commands[name] = entry
    return commands


def field(entry, name):
    return entry.get(name.encode(), entry.get(name))


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def value(kind, name):
    name = (name or "").lower()
    if kind == "key":
        return rng.choice(KEYS)
    if kind in ("integer", "unix-time"):
        if "offset" in name:
            # Past 2^31 bits is 256 MB to 512 MB allocated by both servers
            # for one request; StringGrowthTests covers that growth.
            return rng.choice(["0", "1", "7", "100", "-1", "4294967296", "9223372036854775807", "abc", ""])
        if "timeout" in name:
            return rng.choice(["0.01", "0.01", "-1", "abc"])
        return rng.choice(INTEGERS)
    if kind == "double":
        if "timeout" in name:
            return rng.choice(["0.01", "0.001", "-1", "nan", "abc"])
        return rng.choice(DOUBLES)
    if kind == "pattern":
        return rng.choice(["*", "k*", "[", "[a-", "\\", "*a*b*c*d*e*f*", "?"])
    return rng.choice(STRINGS + INTEGERS[:6])


def argument(spec, out):
    kind = text(field(spec, "type"))
    flags = [text(f) for f in (field(spec, "flags") or [])]
    if "optional" in flags and rng.random() < 0.5:
        return
    repeats = rng.choice([1, 1, 2, 3]) if "multiple" in flags else 1
    token = field(spec, "token")
    for index in range(repeats):
        if token is not None and (index == 0 or "multiple_token" in flags):
            out.append(text(token))
        if kind == "pure-token":
            continue
        if kind == "oneof":
            argument(flatten(rng.choice(field(spec, "arguments"))), out)
        elif kind == "block":
            for child in field(spec, "arguments"):
                argument(flatten(child), out)
        else:
            out.append(value(kind, text(field(spec, "name"))))


# Commands that wait for their timeout: drawn whole, with a short one
# (a mutation could make a key of the timeout, and the wait endless).
BLOCKING = {"blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"}


def request(name, entry):
    words = name.split("|")
    out = []
    for spec in field(entry, "arguments") or []:
        argument(flatten(spec), out)
    if name in BLOCKING:
        return [w.upper() for w in words] + out
    # Now and then an argument dropped, doubled or added.
    roll = rng.random()
    if out and roll < 0.1:
        del out[rng.randrange(len(out))]
    elif out and roll < 0.2:
        out.insert(rng.randrange(len(out)), rng.choice(out))
    elif roll < 0.3:
        out.insert(rng.randrange(len(out) + 1), value("string", "") if rng.random() < 0.5 else rng.choice(INTEGERS))
    return [w.upper() for w in words] + out


def flattened_arguments(entry):
    arguments = field(entry, "arguments") or []
    return [flatten(spec) for spec in arguments]


def seed(both):
    for command in (["SET", "str", "12"], ["SET", "n", "5"], ["RPUSH", "list", "a", "b", "c", "1"],
                    ["HSET", "hash", "f", "1", "g", "x"], ["SADD", "set", "a", "b", "1"],
                    ["ZADD", "zset", "1", "a", "2", "b", "2", "c"],
                    ["GEOADD", "geo", "13.361389", "38.115556", "a", "15.087269", "37.502669", "b"],
                    ["PFADD", "hll", "a", "b", "c"]):
        both(command)


def main():
    # kvd with two I/O threads, as on a machine of 2 cores or more (the
    # other differentials run it on its core's loop alone).
    with redis_and_kvd(KVD, SEED, "grammar-fuzz", io_threads=2) as differential:
        redis_port, kvd_port = differential.ports
        commands = docs(Raw(kvd_port, 2))
        kvd_commands = {text(n).lower() for n in parse(Raw(kvd_port, 2).send(["COMMAND", "LIST"]))[0]}
        names = sorted(n for n in commands
                       if n not in SKIPPED and n.split("|")[0] not in SKIPPED and n.split("|")[0] in kvd_commands)
        connections = [Raw(redis_port, 2), Raw(kvd_port, 2)]
        for connection in connections:
            connection.socket.settimeout(30)

        closed_before = [0]

        def closed_over_limit():
            """The count of clients kvd closed over the limit, when it grew
            (kvd answers a fresh client); None otherwise."""
            try:
                info = Raw(kvd_port, 2).send(["INFO", "stats"]).decode()
            except (SystemExit, OSError):
                return None
            count = int(info.split("client_output_buffer_limit_disconnections:")[1].split("\r\n")[0])
            if count == closed_before[0]:
                return None
            closed_before[0] = count
            return count

        def both(command):
            replies = []
            for which, connection in enumerate(connections):
                if which == 0 and kills_redis(command):
                    connection = None
                if connection is None:  # redis-server stopped (it has its own traps)
                    replies.append(None)
                    continue
                try:
                    connection.socket.sendall(encode(command))
                    replies.append(connection.reply())
                except (SystemExit, OSError) as error:
                    if which == 1:
                        # Closed over its output limit (a count past it) is
                        # kvd's answer, as Redis's; anything else fails.
                        if (isinstance(error, OSError) or not (kills_redis(command) or replies[0] is None)
                                or closed_over_limit() is None):
                            raise SystemExit(f"FAIL (seed {SEED}): kvd gave no reply to {command!r}: {error}")
                        connections[1] = Raw(kvd_port, 2)
                        connections[1].socket.settimeout(30)
                        replies.append(b"(closed over the output limit)")
                        continue
                    print(f"grammar-fuzz: redis-server gave no reply to {command!r}; going on with kvd alone")
                    connections[0] = None
                    replies.append(None)
            return replies

        differing = {}
        wrong = set()
        examples = {}
        sent = 0
        for name in names:
            for number in range(PER_COMMAND):
                both(["FLUSHDB"])
                seed(both)
                # Every other request on RESP3 (HELLO's reply names the
                # connection and the server: not compared).
                resp3 = number % 2 == 1
                if resp3:
                    both(["HELLO", "3"])
                command = request(name, commands[name])
                redis_reply, kvd_reply = both(command)
                # Out of MULTI, back to database 0 and RESP2; kvd's answer
                # to it shows the stream of replies is still in step.
                if both(["RESET"])[1] != b"+RESET\r\n":
                    raise SystemExit(f"FAIL (seed {SEED}): kvd's replies fell out of step after {command!r}")
                sent += 1
                if redis_reply is not None and not same(name, redis_reply, kvd_reply):
                    example = (("RESP3 " if resp3 else "") + repr(command), redis_reply[:160], kvd_reply[:160])
                    if compared(name, redis_reply) and name not in wrong:
                        wrong.add(name)
                        examples[name] = example  # the one that fails, shown
                    differing[name] = differing.get(name, 0) + 1
                    examples.setdefault(name, example)
            # kvd still answers a fresh client after each command's requests.
            probe = Raw(kvd_port, 2)
            if probe.send(["PING"]) != b"+PONG\r\n":
                raise SystemExit(f"FAIL (seed {SEED}): kvd stopped answering after {name}")
        wrong = sorted(wrong)
        print(f"grammar-fuzz: {sent} requests over {len(names)} commands, every one answered by kvd "
              f"(seed {SEED}); replies differing from redis-server in {len(differing)} commands, "
              f"{len(wrong)} of them compared")
        for name in sorted(differing):
            command, redis_reply, kvd_reply = examples[name]
            why = f" (not compared: {NOT_COMPARED[name]})" if name in NOT_COMPARED else ""
            print(f"  {name}: {differing[name]}{why}, e.g. {command}\n    redis: {redis_reply!r}\n"
                  f"    kvd:   {kvd_reply!r}")
        if wrong:
            raise SystemExit(f"FAIL (seed {SEED}): kvd answered otherwise than redis-server to {', '.join(wrong)}")


main()
