#!/usr/bin/env python3
"""kill -9 kvd under a write load with the append-only file on, restart it,
and count the acknowledged writes that are gone.

Each round: kvd starts with --appendonly yes and the policy given; four
clients write (SET of a new key, INCR of their counter) and note each
reply; a fifth asks for BGREWRITEAOF now and then, so some kills land in
a rewrite; at a random moment kvd gets SIGKILL. Restarted on the same
directory, every acknowledged SET must be there and each counter at least
its last acknowledged value (one more when the kill fell between the write
and its reply). With `always` nothing acknowledged may be lost; with
`everysec` only writes acknowledged in the last second before the kill may
be (Redis's promise; the page cache survives a kill -9, so in practice
none are).
Usage: aof-kill.py path/to/kvd always|everysec ROUNDS
"""
import os, random, shutil, signal, sys, tempfile, threading, time
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from persistence_data import launch

KVD, POLICY, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])
WORK = tempfile.mkdtemp(prefix="aof-kill-")
PROCESSES = []
WRITERS = 4


def client(port):
    # No retries: a write sent again after the kill would be counted twice.
    return redis.Redis(port=port, protocol=2, socket_timeout=5, retry=Retry(NoBackoff(), 0))


def writer(port, index, acked, stop):
    r = client(port)
    sequence = 0
    try:
        while not stop.is_set():
            sequence += 1
            pipe = r.pipeline(transaction=False)
            pipe.set(f"w{index}:{sequence}", sequence)
            pipe.incr(f"counter{index}")
            _, counter = pipe.execute()
            acked[index].append((time.monotonic(), sequence, counter))
    except (redis.ConnectionError, redis.TimeoutError):
        pass


def rewriter(port, stop):
    r = client(port)
    try:
        while not stop.wait(random.uniform(0.1, 0.4)):
            try:
                r.bgrewriteaof()
            except redis.ResponseError:
                pass  # one is running already
    except (redis.ConnectionError, redis.TimeoutError):
        pass


total_acked = total_lost = rewrites_hit = 0
rng = random.Random(int(os.environ.get("AOF_KILL_SEED", time.time())))
try:
    for round_number in range(ROUNDS):
        directory = os.path.join(WORK, f"round{round_number}")
        os.mkdir(directory)
        command = [KVD, "--dir", directory, "--save", "", "--appendonly", "yes", "--appendfsync", POLICY]
        kvd, r, _ = launch(WORK, PROCESSES, "kvd", command)
        port = r.connection_pool.connection_kwargs["port"]
        acked = [[] for _ in range(WRITERS)]
        stop = threading.Event()
        threads = [threading.Thread(target=writer, args=(port, i, acked, stop)) for i in range(WRITERS)]
        threads.append(threading.Thread(target=rewriter, args=(port, stop)))
        for thread in threads: thread.start()
        time.sleep(rng.uniform(0.3, 1.5))
        rewriting = r.info("persistence")["aof_rewrite_in_progress"] == 1
        kvd.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        kvd.wait(10)
        stop.set()
        for thread in threads: thread.join(10)
        rewrites_hit += rewriting
        kvd, r, _ = launch(WORK, PROCESSES, "kvd", command)
        lost = []
        for index in range(WRITERS):
            if not acked[index]: continue
            sequences = [sequence for _, sequence, _ in acked[index]]
            present = r.mget([f"w{index}:{sequence}" for sequence in sequences])
            lost += [(at, f"w{index}:{sequence}") for (at, sequence, _), value in zip(acked[index], present)
                     if value is None]
            counter = int(r.get(f"counter{index}") or 0)
            last = acked[index][-1][2]
            if counter < last:
                lost.append((acked[index][-1][0], f"counter{index} {counter} < {last}"))
            if counter > last + 1:
                raise SystemExit(f"FAIL: counter{index} is {counter}, more than one past its last reply {last}")
        acknowledged = sum(len(writes) for writes in acked)
        total_acked += acknowledged
        total_lost += len(lost)
        kvd.kill()
        kvd.wait(10)
        if POLICY == "always" and lost:
            raise SystemExit(f"FAIL round {round_number}: {len(lost)} acknowledged writes lost with appendfsync always: "
                             f"{[name for _, name in lost[:5]]}")
        late = [name for at, name in lost if killed_at - at > 1.5]
        if late:
            raise SystemExit(f"FAIL round {round_number}: writes acknowledged more than a second before the kill "
                             f"are gone with appendfsync {POLICY}: {late[:5]}")
        shutil.rmtree(directory, ignore_errors=True)
    print(f"ok: appendfsync {POLICY}: {ROUNDS} kill -9 rounds ({rewrites_hit} during a rewrite), "
          f"{total_acked} acknowledged writes, {total_lost} lost")
finally:
    for process in PROCESSES:
        if process.poll() is None:
            process.kill()
    shutil.rmtree(WORK, ignore_errors=True)
