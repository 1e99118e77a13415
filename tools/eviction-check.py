#!/usr/bin/env python3
"""maxmemory with kvd's heap, side by side with redis-server 7.0.15.

The three checks of Redis's own unit/maxmemory.tcl (whose tests are
tagged external:skip, so the compat run cannot run them), on both servers,
for every policy:
(a) "is the memory limit honoured": with maxmemory 1 MiB over what is
    used (Redis's test: 100 KiB; see BUDGET), keys are added (ten at a
    time) until used_memory is within 4 KiB of the limit,
    then as many again: a policy that evicts stays under limit + 4 KiB
    (once the turns of kvd's loop that evict past a command's time limit
    have caught up: 5 s at most),
    noeviction refuses with Redis's OOM error, byte for byte;
(b) "only allkeys-* should remove non-volatile keys": the same with keys
    without an expiry: allkeys-* stays under the limit, volatile-* and
    noeviction refuse;
(c) "volatile-* should only remove volatile keys": half the keys with an
    expiry, then as many again with one: every key without one is still
    there, and memory under the limit;
and then: the settings' defaults and errors (CONFIG GET and SET, OBJECT
FREQ and IDLETIME under the wrong policy) and evicted_keys counting.
Usage: eviction-check.py path/to/kvd
"""
import shutil, sys, tempfile, time
import redis
from persistence_data import launch, stop

KVD = sys.argv[1]
POLICIES = ["allkeys-random", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "volatile-random",
            "volatile-ttl", "noeviction"]
SLACK = 4096
# Redis's test gives 100 KiB over what is used; kvd's key table is 256
# shards that each grow by doubling and keep their room (until a shard is
# sparse enough to shrink), so a few hundred keys spread one or two to a
# shard, and as keys come and go each shard keeps the room of the most it
# ever held: at 100 KiB that ratchet alone can outgrow what evicting every
# volatile key frees. 1 MiB (thousands of keys, tens to a shard) is what
# the checks mean at a scale where a shard's swings are small.
BUDGET = 1 << 20


def used(client):
    return client.info("memory")["used_memory"]


def prepare(client, policy):
    client.config_set("maxmemory", 0)
    client.flushall()
    limit = used(client) + BUDGET
    client.config_set("maxmemory", limit)
    client.config_set("maxmemory-policy", policy)
    return limit


def store(pipe, name, volatile):
    if volatile:
        pipe.set(name, "x", ex=10000)
    else:
        pipe.set(name, "x")


def fill(client, limit, volatile):
    """Adds keys, ten at a time, until used_memory is within SLACK of `limit`; their number."""
    count = 0
    while used(client) + SLACK <= limit:
        pipe = client.pipeline(transaction=False)
        for index in range(count, count + 10):
            store(pipe, f"key:{index}", volatile(index))
        pipe.execute()
        count += 10
        if count > 1_000_000:
            raise SystemExit("FAIL: used_memory never came near the limit")
    return count


def add_again(client, count, volatile):
    """Adds `count` more keys, in pipelines of 100; the set of errors met."""
    errors = set()
    for start in range(0, count, 100):
        pipe = client.pipeline(transaction=False)
        for index in range(start, min(start + 100, count)):
            store(pipe, f"more:{index}", volatile(index))
        errors |= {str(reply) for reply in pipe.execute(raise_on_error=False) if isinstance(reply, Exception)}
    return errors


def settled_under(client, limit):
    """Whether used_memory is under limit + SLACK, once eviction has caught
    up (5 s at most): past its time limit kvd goes on evicting in turns of
    its loop, where Redis's test reads at once."""
    deadline = time.monotonic() + 5
    while used(client) >= limit + SLACK:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def honoured(client, policy, volatile):
    limit = prepare(client, policy)
    count = fill(client, limit, volatile)
    errors = add_again(client, count, volatile)
    return count, errors, settled_under(client, limit) if policy != "noeviction" else used(client) < limit + SLACK


def check(server, client):
    failures = []
    outcome = {}
    for policy in POLICIES:
        everything_volatile = lambda index: True
        count, errors, under = honoured(client, policy, everything_volatile)
        outcome[("a", policy)] = (sorted(errors), under or policy == "noeviction")
        if count < 10:
            failures.append(f"{server} {policy}: only {count} keys fit in {BUDGET} bytes")
        if policy != "noeviction" and (errors or not under):
            failures.append(f"{server} (a) {policy}: errors {errors}, under the limit: {under}")
        count, errors, under = honoured(client, policy, lambda index: False)
        # Over the limit with nothing evictable is where a refusing policy
        # leaves memory: Redis's test asserts the bound for allkeys-* only.
        outcome[("b", policy)] = (sorted(errors), under or not policy.startswith("allkeys"))
        if policy.startswith("allkeys") and (errors or not under):
            failures.append(f"{server} (b) {policy}: errors {errors}, under the limit: {under}")
        if not policy.startswith("allkeys") and not errors:
            failures.append(f"{server} (b) {policy}: keys without an expiry were evicted to make room")
        if policy.startswith("volatile"):
            limit = prepare(client, policy)
            count = fill(client, limit, lambda index: index % 2 == 1)
            add_again(client, count, everything_volatile)
            missing = [index for index in range(0, count, 2) if not client.exists(f"key:{index}")]
            under = settled_under(client, limit)
            outcome[("c", policy)] = (not missing, under)
            if missing or not under:
                failures.append(f"{server} (c) {policy}: {len(missing)} keys without an expiry were evicted, "
                                f"under the limit: {under}")
    client.config_set("maxmemory", 0)
    client.config_set("maxmemory-policy", "noeviction")
    settings = {name: client.config_get(name)[name] for name in
                ["maxmemory", "maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity",
                 "lfu-log-factor", "lfu-decay-time"]}
    replies = []
    for command in (["CONFIG", "SET", "maxmemory-policy", "lru"], ["CONFIG", "SET", "maxmemory-samples", "65"],
                    ["SET", "k", "v"], ["OBJECT", "FREQ", "k"], ["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"],
                    ["OBJECT", "FREQ", "k"], ["OBJECT", "IDLETIME", "k"],
                    ["CONFIG", "SET", "maxmemory-policy", "noeviction"]):
        try:
            replies.append(client.execute_command(*command))
        except redis.ResponseError as error:
            replies.append("error: " + str(error))
    evicted = client.info("stats")["evicted_keys"]
    if evicted == 0:
        failures.append(f"{server}: evicted_keys stayed 0")
    return outcome, settings, replies, failures


def main():
    work = tempfile.mkdtemp(prefix="eviction-")
    processes = []
    try:
        results = {}
        for name, command in (("redis-server", ["redis-server", "--save", "", "--appendonly", "no"]),
                              ("kvd", [KVD, "--save", "", "--io-threads", "0"])):
            server, _, _ = launch(work, processes, name, command)
            client = redis.Redis(port=int(server.args[-1]), protocol=2, decode_responses=True)
            results[name] = check(name, client)
            stop(server)
        failures = results["redis-server"][3] + results["kvd"][3]
        for index, part in ((0, "outcomes"), (1, "settings"), (2, "replies")):
            theirs, ours = results["redis-server"][index], results["kvd"][index]
            if isinstance(theirs, dict):
                theirs, ours = ({k: v for k, v in theirs.items() if ours.get(k) != v},
                                {k: v for k, v in ours.items() if theirs.get(k) != v})
            if theirs != ours:
                failures.append(f"{part} differ:\n  redis-server {theirs}\n  kvd          {ours}")
        if failures:
            raise SystemExit("FAIL:\n" + "\n".join(failures))
        print(f"eviction-check: {len(POLICIES)} policies, the same outcomes, settings and replies as redis-server")
    finally:
        for process in processes:
            if process.poll() is None:
                stop(process)
        shutil.rmtree(work, ignore_errors=True)


main()
