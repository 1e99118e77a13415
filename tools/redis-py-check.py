#!/usr/bin/env python3
"""redis-py (the current release, 8.x) against kvd with its default settings.

Each scenario is what a redis-py user does first; each asserts the exact
results, so a wrong reply fails it. redis-py 8 opens every connection with
HELLO 3 (RESP3), so everything here runs over RESP3 unless a scenario asks for
protocol=2. The pub/sub scenarios also drive redis-cli's SUBSCRIBE and
MONITOR, as a user would. Usage: redis-py-check.py PORT
"""
import sys
import threading
import time
import warnings

import redis
from process_output import read_until

warnings.simplefilter("ignore", DeprecationWarning)  # setex is deprecated, and still used

PORT = int(sys.argv[1])
failures = 0


def scenario(function):
    global failures
    try:
        function()
        print(f"ok   {function.__name__}")
    except Exception as error:  # a failed assertion or a client error
        failures += 1
        print(f"FAIL {function.__name__}: {error!r}")
    return function


def client(**options):
    return redis.Redis(port=PORT, socket_timeout=10, **options)


@scenario
def defaults_speak_resp3():
    r = client()
    assert r.ping() is True
    assert r.connection_pool.get_connection().protocol in (3, "3")
    hello = r.execute_command("HELLO")
    assert hello[b"proto"] == 3 and hello[b"server"] == b"redis", hello


@scenario
def strings_and_counters():
    r = client()
    r.flushdb()
    assert r.set("greeting", "hello") is True
    assert r.get("greeting") == b"hello"
    assert r.get("missing") is None
    assert r.incr("visits") == 1 and r.incrby("visits", 9) == 10
    assert r.incrbyfloat("price", 10.5) == 10.5
    assert r.mget("greeting", "missing") == [b"hello", None]
    assert r.getdel("greeting") == b"hello" and r.exists("greeting") == 0


@scenario
def setnx_setex_and_type():
    r = client()
    r.flushdb()
    assert r.setnx("k", "1") is True and r.setnx("k", "2") is False
    assert r.get("k") == b"1"
    assert r.setex("session", 100, "data") is True
    assert 99 <= r.ttl("session") <= 100
    assert r.type("k") == b"string" and r.type("nothing") == b"none"


@scenario
def pipeline_is_a_transaction_by_default():
    r = client()
    r.flushdb()
    with r.pipeline() as pipe:  # transaction=True: MULTI ... EXEC
        pipe.set("a", 1).incr("a").get("a")
        assert pipe.execute() == [True, 2, b"2"]
    with r.pipeline(transaction=False) as pipe:
        pipe.incr("a").incr("a")
        assert pipe.execute() == [3, 4]


@scenario
def watch_aborts_on_a_concurrent_change():
    r = client()
    other = client()
    r.flushdb()
    r.set("balance", 10)
    with r.pipeline() as pipe:
        pipe.watch("balance")
        other.set("balance", 99)  # another client changes it
        pipe.multi()
        pipe.set("balance", 0)
        try:
            pipe.execute()
            raise AssertionError("EXEC ran although a watched key changed")
        except redis.WatchError:
            pass
    assert r.get("balance") == b"99"

    def spend(pipe):
        value = int(pipe.get("balance"))
        pipe.multi()
        pipe.set("balance", value - 9)

    assert r.transaction(spend, "balance") == [True]
    assert r.get("balance") == b"90"


@scenario
def transaction_errors_are_reported():
    r = client()
    with r.pipeline() as pipe:
        pipe.set("x", "text").incr("x")
        try:
            pipe.execute()
            raise AssertionError("INCR of a non-number succeeded")
        except redis.ResponseError as error:
            assert "not an integer" in str(error), error


@scenario
def client_names():
    r = client()
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == "worker-1"  # redis-py decodes names
    named = client(client_name="reporter")
    assert named.client_getname() == "reporter"
    listed = [c["name"] for c in r.client_list()]
    assert "reporter" in listed and "worker-1" in listed, listed
    assert isinstance(r.client_id(), int)
    info = r.client_info()
    assert info["name"] == "worker-1" and info["db"] == 0, info
    assert r.client_kill_filter(_id=named.client_id()) == 1
    assert named.ping() is True  # redis-py reconnects after the kill


@scenario
def databases_with_db_and_select():
    zero = client()
    one = client(db=1)
    zero.flushall()
    one.set("where", "one")
    zero.set("where", "zero")
    assert one.get("where") == b"one" and zero.get("where") == b"zero"
    assert zero.dbsize() == 1 and one.dbsize() == 1
    assert one.swapdb(0, 1) is True
    assert zero.get("where") == b"one"
    assert one.move("where", 0) is False  # db 0 has the key already
    one.flushdb()
    assert one.dbsize() == 0 and zero.dbsize() == 1


@scenario
def scan_iter_sees_every_key_once():
    r = client()
    r.flushdb()
    r.mset({f"user:{i}": i for i in range(500)})
    r.mset({f"other:{i}": i for i in range(100)})
    found = list(r.scan_iter(match="user:*", count=50))
    assert len(found) == 500 and len(set(found)) == 500, len(found)
    assert sorted(r.scan_iter(_type="string")) == sorted(r.keys("*"))


@scenario
def flushdb_and_time():
    r = client()
    r.set("k", "v")
    assert r.flushdb() is True and r.dbsize() == 0
    seconds, micros = r.time()
    assert abs(seconds - time.time()) < 5 and 0 <= micros < 1_000_000


@scenario
def info_and_config_over_resp3():
    r = client()
    info = r.info()
    assert info["redis_version"] == "7.0.15" and "connected_clients" in info
    assert r.config_get("databases") == {"databases": "16"}


@scenario
def resp2_when_asked():
    r = client(protocol=2)
    assert r.ping() is True
    r.set("k", "v")
    assert r.get("k") == b"v" and r.get("missing") is None
    with r.pipeline() as pipe:
        assert pipe.incr("n").incr("n").execute() == [1, 2]


@scenario
def decoded_responses():
    r = client(decode_responses=True)
    r.set("name", "kvd")
    assert r.get("name") == "kvd"
    assert r.execute_command("HELLO")["proto"] == 3



@scenario
def lock_with_its_defaults():
    # Lock's release, extend and reacquire are Lua scripts run by EVALSHA,
    # loaded with SCRIPT LOAD when the server does not know them yet.
    r = client()
    r.flushdb()
    r.script_flush()
    with r.lock("L") as lock:
        assert lock.owned() and r.exists("L") == 1 and r.ttl("L") == -1
    assert r.exists("L") == 0
    lock = r.lock("L", timeout=10)
    assert lock.acquire() is True and 0 < r.pttl("L") <= 10000
    assert lock.extend(20) is True and 10000 < r.pttl("L") <= 30000
    assert lock.reacquire() is True and 0 < r.pttl("L") <= 10000
    other = r.lock("L", timeout=10, blocking_timeout=0.2)
    started = time.monotonic()
    assert other.acquire() is False and time.monotonic() - started >= 0.09  # it waited, then gave up
    lock.release()
    assert other.acquire() is True
    try:
        other.do_release(expected_token=b"not-the-owner")
        raise AssertionError("the release script freed a lock held by another token")
    except redis.exceptions.LockNotOwnedError:
        pass
    other.release()
    assert r.exists("L") == 0


@scenario
def scripts_register_and_run():
    for protocol in (2, 3):
        r = client(protocol=protocol)
        r.flushdb()
        r.script_flush()
        add = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
        assert add(keys=["n"], args=[5]) == 5 and add(keys=["n"], args=[2]) == 7
        assert r.script_exists(add.sha) == [True]
        # false is a null; an array ends at its first nil
        assert r.eval("return {KEYS[1], ARGV[1], 3, false, nil, 5}", 1, "k", "a") == [b"k", b"a", 3, None]
        try:
            r.eval("return redis.call('nosuch')", 0)
            raise AssertionError("an unknown command in a script did not fail")
        except redis.exceptions.ResponseError as error:
            assert "Unknown Redis command called from script" in str(error), error
        with r.pipeline() as pipe:
            assert pipe.eval("return redis.call('incr', KEYS[1])", 1, "n").execute() == [8]


@scenario
def hashes_sets_lists_and_sorted_sets():
    r = client()
    r.flushdb()
    assert r.hset("user:1", mapping={"name": "ada", "visits": 1}) == 2
    assert r.hgetall("user:1") == {b"name": b"ada", b"visits": b"1"}  # a RESP3 map
    assert r.hincrby("user:1", "visits", 2) == 3
    assert r.sadd("tags", "a", "b", "c") == 3 and r.smembers("tags") == {b"a", b"b", b"c"}
    assert r.rpush("jobs", "j1", "j2") == 2 and r.lrange("jobs", 0, -1) == [b"j1", b"j2"]
    assert r.zadd("board", {"ann": 3.5, "bob": 1}) == 2
    assert r.zrange("board", 0, -1, withscores=True) == [(b"bob", 1.0), (b"ann", 3.5)]
    assert r.zscore("board", "ann") == 3.5 and r.zincrby("board", 1, "bob") == 2.0
    assert r.type("board") == b"zset" and r.type("jobs") == b"list"
    with r.pipeline() as pipe:  # MULTI/EXEC, queued
        pipe.lpop("jobs").scard("tags").hget("user:1", "name")
        assert pipe.execute() == [b"j1", 3, b"ada"]


@scenario
def sort_with_its_options():
    # redis-py's sort() builds SORT's options itself: BY, LIMIT, GET with
    # groups, ALPHA, STORE; sort_ro() is SORT_RO.
    r = client(decode_responses=True)
    r.flushdb()
    r.rpush("ids", 3, 1, 2)
    r.mset({"w_1": 30, "w_2": 10, "w_3": 20, "n_1": "one", "n_2": "two", "n_3": "three"})
    r.hset("h_1", "f", "x")
    r.hset("h_3", "f", "z")
    assert r.sort("ids") == ["1", "2", "3"] and r.sort("ids", desc=True) == ["3", "2", "1"]
    assert r.sort("ids", start=1, num=1) == ["2"]
    assert r.sort("ids", by="w_*") == ["2", "3", "1"]
    assert r.sort("ids", by="w_*", get=["#", "n_*"], groups=True) == [("2", "two"), ("3", "three"), ("1", "one")]
    assert r.sort("ids", alpha=True, by="h_*->f", get="h_*->f") == [None, "x", "z"]
    assert r.sort("ids", by="nosort", store="dst") == 3 and r.lrange("dst", 0, -1) == ["3", "1", "2"]
    assert r.sort_ro("ids", by="w_*", desc=True) == ["1", "3", "2"]


@scenario
def unique_visitors_with_hyperloglogs():
    # redis-py's pfadd, pfcount and pfmerge as a site counts unique
    # visitors per day and over a week: estimates within 2% (Redis's
    # standard error is 0.81%), the union without the overlap.
    r = client()
    r.flushdb()
    for day in range(7):
        visitors = [f"user:{n}" for n in range(day * 1000, day * 1000 + 5000)]
        assert r.pfadd(f"visits:{day}", *visitors) == 1
        assert abs(r.pfcount(f"visits:{day}") - 5000) <= 100
    assert r.pfadd("visits:0", "user:1") == 0
    assert abs(r.pfcount(*[f"visits:{day}" for day in range(7)]) - 11000) <= 220
    assert r.pfmerge("visits:week", *[f"visits:{day}" for day in range(7)]) is True
    assert abs(r.pfcount("visits:week") - 11000) <= 220
    assert r.get("visits:week")[:4] == b"HYLL"


@scenario
def nearby_places_with_geo():
    # redis-py's geoadd, geopos, geodist and geosearch as an app finds
    # what is near a user: the nearest first, with distances in km, and a
    # stored result for later pages.
    r = client()
    r.flushdb()
    assert r.geoadd("places", [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania",
                               13.583333, 37.316667, "Agrigento"]) == 3
    (longitude, latitude), missing = r.geopos("places", "Palermo", "nowhere")
    assert abs(longitude - 13.361389) < 1e-5 and abs(latitude - 38.115556) < 1e-5 and missing is None
    assert abs(r.geodist("places", "Palermo", "Catania", unit="km") - 166.2742) < 1e-9
    near = r.geosearch("places", longitude=15, latitude=37, radius=200, unit="km", sort="ASC", withdist=True)
    assert [name for name, _ in near] == [b"Catania", b"Agrigento", b"Palermo"], near
    assert abs(near[0][1] - 56.4413) < 1e-9
    assert r.geosearchstore("nearest", "places", member="Palermo", width=400, height=400, unit="km",
                            sort="ASC", count=2) == 2
    assert r.zrange("nearest", 0, -1) == [b"Agrigento", b"Palermo"]  # stored by geohash


@scenario
def dump_and_restore_a_copy():
    # redis-py's dump() and restore() as a user copies or renames a key
    # across names: ttl in ms, replace, absttl; a key that exists without
    # replace is BUSYKEY. redis-py answers RESTORE with the raw OK.
    r = client()
    r.flushdb()
    r.hset("user:1", mapping={"name": "ada", "visits": 3})
    r.zadd("board", {"ada": 10, "bob": 7.5})
    payload = r.dump("user:1")
    assert r.restore("user:2", 0, payload) == b"OK" and r.hgetall("user:2") == {b"name": b"ada", b"visits": b"3"}
    try:
        r.restore("user:2", 0, payload)
        raise AssertionError("RESTORE over an existing key without replace")
    except redis.ResponseError as error:
        assert str(error).startswith("BUSYKEY"), error
    assert r.restore("board:copy", 60_000, r.dump("board"), replace=True) == b"OK"
    assert 0 < r.pttl("board:copy") <= 60_000 and r.zrange("board:copy", 0, -1) == [b"bob", b"ada"]
    deadline = int(time.time() * 1000) + 120_000
    assert r.restore("user:3", deadline, payload, absttl=True) == b"OK"
    assert r.pexpiretime("user:3") == deadline
    assert r.dump("missing") is None


@scenario
def blocking_pop_released_by_another_client():
    waiter, pusher = client(), client()
    waiter.delete("queue")
    assert waiter.blpop(["queue"], timeout=0.1) is None  # the deadline answers
    threading.Timer(0.2, lambda: pusher.rpush("queue", "work")).start()
    assert waiter.blpop(["queue"], timeout=5) == (b"queue", b"work")
    assert waiter.bzpopmin("nothing", timeout=0.1) is None


def next_message(pubsub, seconds=5):
    """get_message polled until a message (not a confirmation) arrives."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if message is not None:
            return message
    raise AssertionError("no message within %s s" % seconds)


@scenario
def pubsub_get_message_and_patterns():
    r = client()
    p = r.pubsub()
    p.subscribe("news")
    p.psubscribe("n*")
    assert p.get_message(timeout=5) == {"type": "subscribe", "pattern": None, "channel": b"news", "data": 1}
    assert p.get_message(timeout=5) == {"type": "psubscribe", "pattern": None, "channel": b"n*", "data": 2}
    assert r.publish("news", "hello") == 2
    assert next_message(p) == {"type": "message", "pattern": None, "channel": b"news", "data": b"hello"}
    assert next_message(p) == {"type": "pmessage", "pattern": b"n*", "channel": b"news", "data": b"hello"}
    assert r.pubsub_numsub("news") == [(b"news", 1)] and r.pubsub_numpat() == 1
    assert r.pubsub_channels() == [b"news"]
    p.unsubscribe()
    p.punsubscribe()
    p.close()


@scenario
def keyspace_notifications_as_applications_use_them():
    """An expiry hook and a cache that drops what changed, as redis-py's
    users write them, and the hit ratio a dashboard reads from INFO."""
    r = client()
    r.config_set("notify-keyspace-events", "Exg$")
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "g$xE"}
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    assert p.get_message(timeout=5)["type"] == "psubscribe"
    r.set("session:1", "alice", px=50)
    assert next_message(p) == {"type": "pmessage", "pattern": b"__keyevent@0__:*",
                               "channel": b"__keyevent@0__:set", "data": b"session:1"}
    assert next_message(p)["channel"] == b"__keyevent@0__:expire"
    # Nobody reads it again: the expiry cycle finds it and says so.
    assert next_message(p, seconds=10) == {"type": "pmessage", "pattern": b"__keyevent@0__:*",
                                           "channel": b"__keyevent@0__:expired", "data": b"session:1"}
    r.incr("views")
    r.delete("views")
    assert [next_message(p)["channel"] for _ in range(2)] == [b"__keyevent@0__:incrby", b"__keyevent@0__:del"]
    p.punsubscribe()
    p.close()
    r.config_set("notify-keyspace-events", "")
    r.config_resetstat()
    r.set("page", "x")
    r.get("page"), r.get("page"), r.get("missing")
    stats = r.info("stats")
    assert (stats["keyspace_hits"], stats["keyspace_misses"]) == (2, 1), stats


@scenario
def pubsub_listen_in_a_thread_over_resp2():
    r = client(protocol=2)
    p = r.pubsub(ignore_subscribe_messages=True)
    p.subscribe("jobs")
    assert p.get_message(timeout=5) is None  # the confirmation, ignored
    got = []

    def listen():
        for message in p.listen():
            got.append(message["data"])
            if len(got) == 3:
                return

    listener = threading.Thread(target=listen)
    listener.start()
    for n in range(3):
        assert client().publish("jobs", "job%d" % n) == 1
    listener.join(5)
    assert got == [b"job0", b"job1", b"job2"], got
    assert p.ping() is True or p.get_message(timeout=5) is not None
    p.close()


@scenario
def pubsub_resp3_push_handler():
    # With a push handler, RESP3's push frames go to it, raw, as they come.
    r = client()
    seen = []
    p = r.pubsub(push_handler_func=seen.append)
    p.subscribe("alerts")
    assert r.publish("alerts", "fire") == 1
    deadline = time.monotonic() + 5
    while [b"message", b"alerts", b"fire"] not in seen and time.monotonic() < deadline:
        p.get_message(timeout=0.1)
    assert seen == [[b"subscribe", b"alerts", 1], [b"message", b"alerts", b"fire"]], seen
    p.close()


@scenario
def redis_cli_subscribe_and_monitor():
    import subprocess
    cli = ["redis-cli", "-p", str(PORT)]
    subscriber = subprocess.Popen(cli + ["SUBSCRIBE", "cli"], stdout=subprocess.PIPE, text=True)
    monitor = subprocess.Popen(cli + ["MONITOR"], stdout=subprocess.PIPE, text=True)
    r = client()
    deadline = time.monotonic() + 5
    while r.pubsub_numsub("cli") != [(b"cli", 1)] and time.monotonic() < deadline:
        time.sleep(0.05)
    watched = read_until(monitor.stdout.fileno(), lambda text: "OK" in text.splitlines())
    assert r.publish("cli", "over the wire") == 1
    r.set("monitored", "a b")
    shown = read_until(subscriber.stdout.fileno(), lambda text: "over the wire" in text.splitlines())
    watched += read_until(monitor.stdout.fileno(), lambda text: '"SET" "monitored" "a b"' in text)
    subscriber.kill()
    monitor.kill()
    subscriber.communicate(timeout=5)
    monitor.communicate(timeout=5)
    assert shown.splitlines()[:6] == ["subscribe", "cli", "1", "message", "cli", "over the wire"], shown
    lines = watched.splitlines()
    assert lines[0] == "OK", lines
    assert any(line.endswith('"SET" "monitored" "a b"') and "] " in line for line in lines), lines


print(f"redis-py {redis.__version__}: {failures} scenario(s) failed" if failures else f"redis-py {redis.__version__}: all scenarios passed")
sys.exit(1 if failures else 0)
