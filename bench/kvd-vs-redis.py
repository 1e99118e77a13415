#!/usr/bin/env python3
"""kvd against a real redis-server in the same run, with redis-benchmark.

Three servers, started once: kvd with --io-threads 0 (I/O on the core
loop), kvd with --io-threads 1 (I/O on a loop of its own, one hop to the core
and back) and redis-server 7. Each test runs on the three servers one right
after the other (a few seconds apart, in an order that rotates every round),
so that a moment of a shared machine (its speed moved by 1.5-2x within a
minute here) falls on the three alike; a round that ran each server's tests
all together left one server a whole minute of its own moment.

Each round runs, on each server:
  -c 50  -P 1   SET GET INCR MSET (10 keys)
  -c 50  -P 16  SET GET INCR MSET (10 keys)
  -c 200 -P 1   SET GET INCR
  -c 50  -P 1   SET with a 1 KiB value
or, with KVD_BENCH=aof, SET and INCR at -P 1 and -P 16 with every server
logging to an append-only file (--appendonly yes --appendfsync everysec);
or, with KVD_BENCH=collections, the hashes, lists, sets and sorted sets:
  -c 50  -P 1 and -P 16   LPUSH RPOP SADD SPOP HSET ZADD ZPOPMIN LRANGE_100
(as redis-benchmark defines them; its "LPUSH (needed to benchmark LRANGE)"
is left out of the report). redis-benchmark's --csv gives throughput and
p50/p99 latency. Each test runs as a redis-benchmark of its own, so the
report also gives the CPU the server spent per request (every thread and
reaped child, from /proc; LRANGE's includes its LPUSH fill, marked *) and
how busy the client's one thread was (its CPU over the run's wall time:
near 1.0, the client set the pace, not the server). The report
is the median of the rounds for each figure, and each kvd's ratio to
redis-server in every round (paired: the same test, seconds apart); the raw lines go to
bench/kvd-latest.txt (bench/kvd-collections-latest.txt). Not part of CI:
only same-run ratios mean anything. BENCH_PORT moves the three ports
(default 6390, 6391, 6392).

usage: kvd-vs-redis.py KVD_BINARY [ROUNDS] [N]
"""
import csv
import io
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

KVD = os.path.abspath(sys.argv[1])  # the servers run in directories of their own
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
N = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000
COLLECTIONS = os.environ.get("KVD_BENCH") == "collections"
# KVD_BENCH=aof: every server logs to an append-only file (everysec) in a directory of its own.
AOF = os.environ.get("KVD_BENCH") == "aof"
RAW = ("bench/kvd-collections-latest.txt" if COLLECTIONS else "bench/kvd-aof-latest.txt" if AOF
       else "bench/kvd-latest.txt")
BASE = int(os.environ.get("BENCH_PORT", "6390"))

# No save points, and each server in a directory of its own: a kvd with its
# default save points wrote dump.rdb on SIGTERM into the checkout, and the
# next round's servers (redis-server too) loaded the last test's 1 KiB value.
SERVERS = [
    ("kvd-io0", BASE, [KVD, "--port", str(BASE), "--io-threads", "0", "--save", ""]),
    ("kvd-io1", BASE + 2, [KVD, "--port", str(BASE + 2), "--io-threads", "1", "--save", ""]),
    ("redis", BASE + 1, ["redis-server", "--port", str(BASE + 1), "--save", "", "--appendonly", "no"]),
]
# (clients, pipeline, tests, extra redis-benchmark flags, label suffix)
SHAPES = [
    (50, 1, "set,get,incr,mset", [], ""),
    (50, 16, "set,get,incr,mset", [], ""),
    (200, 1, "set,get,incr", [], ""),
    (50, 1, "set", ["-d", "1024"], " 1KiB"),
]
if AOF:
    import tempfile
    for _, _, command in SERVERS:
        command += ["--dir", tempfile.mkdtemp(prefix="kvd-vs-redis-aof-"), "--save", "", "--appendonly", "yes",
                    "--appendfsync", "everysec"]
    SHAPES = [(50, 1, "set,incr", [], ""), (50, 16, "set,incr", [], "")]
if COLLECTIONS:
    # LRANGE_100 replies 100 elements: a tenth of the requests of the others.
    TYPED = "lpush,rpop,sadd,spop,hset,zadd,zpopmin"
    SHAPES = [
        (50, 1, TYPED, [], ""),
        (50, 16, TYPED, [], ""),
        (50, 1, "lrange_100", ["-n", "0.1"], ""),
        (50, 16, "lrange_100", ["-n", "0.1"], ""),
    ]


def wait_for(port):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"kvd-vs-redis: nothing listens on port {port}")


def cpu_seconds(pid):
    """User and system CPU of process `pid`, from /proc: every thread, and
    the children it reaped (redis-server rewrites its append-only file in a
    forked child; kvd on a thread)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # utime, stime, cutime, cstime: 14-17
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def client_cpu_seconds():
    """The CPU of this script's reaped children: the redis-benchmarks run so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_shape(pid, port, clients, pipeline, tests, extra):
    """One redis-benchmark per test, so that the CPU each process spent on
    it is known: the server's (from /proc, every thread) per request, and
    the client's as a share of the run's wall time (1.0: its one thread
    was busy all along, so it, not the server, set the pace)."""
    n = N * 8 if pipeline > 1 else N  # pipelined runs are ~10x faster
    if extra[:1] == ["-n"]:  # a share of N
        n, extra = max(1000, int(n * float(extra[1]))), extra[2:]
    rows = []
    for test in tests.split(","):
        server_before, client_before, wall_before = cpu_seconds(pid), client_cpu_seconds(), time.monotonic()
        out = subprocess.run(
            ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(n), "-P", str(pipeline),
             "-t", test, "--csv"] + extra,
            capture_output=True, text=True, timeout=600).stdout
        wall = time.monotonic() - wall_before
        server_seconds = cpu_seconds(pid) - server_before
        if server_seconds < 100 / os.sysconf("SC_CLK_TCK"):
            print(f"kvd-vs-redis: {test} on port {port} took {server_seconds:.2f} s of CPU, under 100 clock "
                  "ticks: its CPU per request is good to a few percent at best", file=sys.stderr)
        server_us = server_seconds / n * 1e6
        client_busy = (client_cpu_seconds() - client_before) / wall
        for row in csv.reader(io.StringIO(out)):
            # LRANGE's run first fills its list with LPUSH ("needed to benchmark"): its CPU is counted in.
            if not row or row[0] == "test" or row[0].startswith("LPUSH (needed"):
                continue
            name, rps, p50, p99 = row[0], float(row[1]), float(row[4]), float(row[6])
            rows.append((name.split(" ")[0], rps, p50, p99, server_us, client_busy))
    return rows


def main():
    if not shutil.which("redis-benchmark"):
        sys.exit("kvd-vs-redis: redis-benchmark is missing (apt-get install redis-tools)")
    processes = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  cwd=tempfile.mkdtemp(prefix="kvd-vs-redis-")) for _, _, cmd in SERVERS]
    try:
        for _, port, _ in SERVERS:
            wait_for(port)
        pids = {name: process.pid for (name, _, _), process in zip(SERVERS, processes)}
        results = {}  # (test, clients, pipeline) -> server -> [(rps, p50, p99, server_us, client_busy)]
        with open(RAW, "w") as raw:
            for round_index in range(ROUNDS):
                order = SERVERS[round_index % len(SERVERS):] + SERVERS[:round_index % len(SERVERS)]
                for clients, pipeline, tests, extra, suffix in SHAPES:
                    for one_test in tests.split(","):
                        for name, port, _ in order:
                            for test, rps, p50, p99, server_us, client_busy in run_shape(
                                    pids[name], port, clients, pipeline, one_test, extra):
                                test += suffix
                                raw.write(f"{name} c={clients} P={pipeline} {test.replace(' ', '_')} "
                                          f"rps={rps:.0f} p50_ms={p50} p99_ms={p99} "
                                          f"server_cpu_us_per_request={server_us:.3f} "
                                          f"client_busy={client_busy:.2f} round={round_index + 1}\n")
                                results.setdefault((test, clients, pipeline), {}).setdefault(name, []).append(
                                    (rps, p50, p99, server_us, client_busy))
                        raw.flush()
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=10)
    report(results)


def report(results):
    def median(values, index):
        return statistics.median(v[index] for v in values)

    print(f"{os.cpu_count()} cores; redis-benchmark, same run, medians of {ROUNDS} rounds (each test on the "
          "three servers back to back, in an order rotating per round); "
          f"kvd-io0 = `--io-threads 0`, kvd-io1 = `--io-threads 1`")
    print()
    print("| test | -c | -P | kvd-io0 req/s | kvd-io1 req/s | redis req/s | io0 / redis | io1 / redis "
          "| io0 / redis each round | io0 p99 / redis p99 each round "
          "| p50 ms io0 / io1 / redis | p99 ms io0 / io1 / redis | server CPU us/request io0 / io1 / redis "
          "| client busy io0 / io1 / redis |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (test, clients, pipeline), by in sorted(results.items(), key=lambda r: (r[0][2], r[0][1], r[0][0])):
        if not all(name in by for name, _, _ in SERVERS):
            continue
        rps = {name: median(by[name], 0) for name, _, _ in SERVERS}
        p50 = " / ".join(f"{median(by[name], 1):.3f}" for name, _, _ in SERVERS)
        p99 = " / ".join(f"{median(by[name], 2):.3f}" for name, _, _ in SERVERS)
        cpu = " / ".join(f"{median(by[name], 3):.2f}" for name, _, _ in SERVERS) + (
            " *" if test.startswith("LRANGE") else "")
        busy = " / ".join(f"{median(by[name], 4):.2f}" for name, _, _ in SERVERS)
        # Round by round: the same test on both servers, seconds apart.
        pairs = list(zip(by["kvd-io0"], by["redis"]))
        each = ", ".join(f"{kvd[0] / redis[0]:.2f}" for kvd, redis in pairs)
        each_p99 = ", ".join(f"{kvd[2] / redis[2]:.2f}" if redis[2] else "-" for kvd, redis in pairs)
        print(f"| {test} | {clients} | {pipeline} | {rps['kvd-io0']:,.0f} | {rps['kvd-io1']:,.0f} | "
              f"{rps['redis']:,.0f} | {rps['kvd-io0'] / rps['redis']:.2f}x | {rps['kvd-io1'] / rps['redis']:.2f}x "
              f"| {each} | {each_p99} | {p50} | {p99} | {cpu} | {busy} |")
    if any(test.startswith("LRANGE") for test, _, _ in results):
        print()
        print("\\* redis-benchmark fills LRANGE's list with as many LPUSHes first: their CPU is counted in.")


if __name__ == "__main__":
    main()
