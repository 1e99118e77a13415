#!/usr/bin/env python3
"""Snapshots of 1M keys, kvd against redis-server 7.0.15 in the same run.

For each server: fill 1M string keys (16-byte values) through one
pipelined connection; then, while a second client sends PING after PING
and records each round trip, run BGSAVE and, right after it, a SET (kvd
copies a key table the snapshot shares on the first write after it; redis
forks at BGSAVE and copies pages as they are written): the longest PING
round trip in that window is how long the snapshot stopped the server.
Then the server is restarted on the file and the time until it answers
PING is its load time (both also log their own figure). Last, each is
filled again with --appendonly yes (the keys go to an incr file as SETs),
killed, and restarted: the time to its first PING is its AOF replay time.
Usage: persistence-bench.py path/to/kvd [keys]
"""
import os, shutil, socket, subprocess, sys, tempfile, threading, time
import redis

KVD = sys.argv[1]
KEYS = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
WORK = tempfile.mkdtemp(prefix="persistence-bench-")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port


def start(kind, directory, aof="no"):
    port = free_port()
    cmd = ([KVD, "--port", str(port), "--dir", directory, "--save", "", "--appendonly", aof] if kind == "kvd" else
           ["redis-server", "--port", str(port), "--dir", directory, "--save", "", "--appendonly", aof])
    log = open(os.path.join(directory, "log"), "a")
    started = time.monotonic()
    process = subprocess.Popen(cmd, stdout=log, stderr=log)
    r = redis.Redis(port=port, protocol=2)
    while True:
        try:
            r.ping(); break
        except (redis.ConnectionError, redis.BusyLoadingError):
            time.sleep(0.002)
    return process, r, port, time.monotonic() - started


def fill(r):
    pipe = r.pipeline(transaction=False)
    for i in range(KEYS):
        pipe.set(f"key:{i:010d}", f"value:{i:010d}")
        if i % 10_000 == 9_999: pipe.execute()
    pipe.execute()


def stall(r, port):
    worst = [0.0]
    stop = threading.Event()

    def pinger():
        p = redis.Redis(port=port, protocol=2)
        while not stop.is_set():
            t = time.perf_counter(); p.ping(); worst[0] = max(worst[0], time.perf_counter() - t)
    thread = threading.Thread(target=pinger); thread.start()
    time.sleep(0.3)
    baseline = worst[0]; worst[0] = 0.0
    r.bgsave()
    r.set("after-bgsave", "1")
    while r.info("persistence")["rdb_bgsave_in_progress"]:
        time.sleep(0.01)
    info = r.info("persistence")
    stop.set(); thread.join()
    return baseline, worst[0], info


results = {}
try:
    for kind in ("redis-server", "kvd"):
        directory = os.path.join(WORK, kind); os.mkdir(directory)
        process, r, port, _ = start(kind, directory)
        fill(r)
        baseline, worst, info = stall(r, port)
        fork = r.info("stats").get("latest_fork_usec")
        process.kill(); process.wait()
        process, r, port, load = start(kind, directory)
        keys = r.dbsize()
        process.kill(); process.wait()
        results[kind] = (worst, load)
        print(f"{kind}: {keys} keys; longest PING during BGSAVE + first write {worst * 1000:.1f} ms "
              f"(before it: {baseline * 1000:.1f} ms){'' if fork is None else f'; latest_fork_usec {fork}'}; "
              f"bgsave {info['rdb_last_bgsave_time_sec']} s; load to first PING {load:.2f} s")
    (kw, kl), (rw, rl) = results["kvd"], results["redis-server"]
    print(f"kvd / redis-server: stall {kw / rw:.2f}x, load time {kl / rl:.2f}x")
    # The append-only file: the same keys logged as SETs in an incr file, replayed at start.
    replay = {}
    for kind in ("redis-server", "kvd"):
        directory = os.path.join(WORK, kind + "-aof"); os.mkdir(directory)
        process, r, port, _ = start(kind, directory, "yes")
        fill(r)
        process.kill(); process.wait()
        process, r, port, load = start(kind, directory, "yes")
        keys = r.dbsize()
        process.kill(); process.wait()
        replay[kind] = load
        print(f"{kind}: {keys} keys replayed from its appendonlydir (one incr file of SETs) in {load:.2f} s")
    print(f"kvd / redis-server: AOF replay time {replay['kvd'] / replay['redis-server']:.2f}x")
finally:
    shutil.rmtree(WORK, ignore_errors=True)
