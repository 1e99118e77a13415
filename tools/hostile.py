#!/usr/bin/env python3
"""make hostile: attack kvd and a real redis-server side by side.

Each probe starts a fresh server (kvd, release build; redis-server 7.0.15
with persistence off), runs one hostile workload while a canary client sends
PING every 50 ms, and reports for each server: the canary's worst reply time,
the RSS growth, the server's CPU time, and what the probe itself checks.
Prints a markdown table (and, when every probe ran, writes it to
bench/hostile-latest.md; `hostile.py NAME...` runs only the probes whose
names contain one of the NAMEs). Not part
of CI: it takes a few minutes and needs two idle cores to mean anything.
"""
import os
import multiprocessing
import signal
import socket
import subprocess
import tempfile
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KVD = os.path.join(ROOT, ".build", "release", "kvd")
PORT = int(os.environ.get("HOSTILE_PORT", "6420"))  # another port when 6420 is taken


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def resp(*parts):
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        p = p if isinstance(p, bytes) else str(p).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


class Client:
    def __init__(self, timeout=30):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        if line[:1] == b"$" and int(line[1:]) >= 0:
            n = int(line[1:]) + 2
            while len(self.buf) < n:
                chunk = self.s.recv(1 << 20)
                if not chunk:
                    raise EOFError
                self.buf += chunk
            value, self.buf = self.buf[: n - 2], self.buf[n:]
            return value
        return line

    def call(self, *parts):
        self.send(resp(*parts))
        return self.reply()

    def close(self):
        self.s.close()


class Canary:
    """PING every 50 ms from a process of its own: a thread of this process
    would also measure the interpreter's lock, which the probes hold while
    they build their payloads (hundreds of milliseconds for 300 MB)."""

    def __init__(self):
        self.stop = multiprocessing.Event()
        self.worst_seconds = multiprocessing.Value("d", 0.0)
        self.failed_flag = multiprocessing.Value("b", 0)
        self.process = multiprocessing.Process(
            target=Canary.run, args=(self.stop, self.worst_seconds, self.failed_flag), daemon=True)

    def start(self):
        self.process.start()

    @staticmethod
    def run(stop, worst, failed):
        client = Client(timeout=60)
        while not stop.is_set():
            start = time.monotonic()
            try:
                # BUSY (a script past busy-reply-threshold) is an answer too.
                answer = client.call("PING")
                if answer != b"+PONG" and not answer.startswith(b"-BUSY "):
                    failed.value = 1
            except Exception:
                failed.value = 1
                return
            worst.value = max(worst.value, time.monotonic() - start)
            time.sleep(0.05)

    def finish(self, timeout):
        self.stop.set()
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.terminate()

    @property
    def worst(self):
        return self.worst_seconds.value

    @property
    def failed(self):
        return bool(self.failed_flag.value)


def start(server, fd_limit=None):
    if server.startswith("kvd"):
        cmd = [KVD, "--port", str(PORT), "--save", "", "--dir", tempfile.gettempdir(),
               "--dbfilename", f"kvd-hostile-{os.getpid()}.rdb"]
        cmd += ["--io-threads", "0"] if "io-threads 0" in server else []
    else:
        cmd = ["redis-server", "--port", str(PORT), "--save", "", "--appendonly", "no", "--loglevel", "warning"]
    if fd_limit:
        cmd = ["sh", "-c", f'ulimit -n {fd_limit} && exec "$0" "$@"'] + cmd
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            Client(timeout=1).close()
            return process
        except OSError:
            time.sleep(0.02)
    process.kill()
    sys.exit(f"hostile: {server} did not start")


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# Probes: each takes the server's pid and returns what it measured, as text.


def expiry_storm(pid):
    c = Client()
    n = 1_000_000
    for base in range(0, n, 50_000):
        c.send(b"".join(resp("SET", f"k{i}", "v", "PX", 1 + i % 100) for i in range(base, base + 50_000)))
        for _ in range(50_000):
            c.reply()
    start = time.monotonic()
    while int(c.call("DBSIZE")[1:]) > 0 and time.monotonic() - start < 90:
        time.sleep(0.05)
    return f"1M keys PX 1..100: DBSIZE 0 after {time.monotonic() - start:.2f} s"


def steady_short_ttls(pid):
    c = Client()
    rate, seconds, sent = 20_000, 10, 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        c.send(b"".join(resp("SET", f"s{sent + i}", "v", "PX", 100) for i in range(2_000)))
        for _ in range(2_000):
            c.reply()
        sent += 2_000
        time.sleep(max(0, start + sent / rate - time.monotonic()))
    return f"20k SET PX 100 per s for {seconds} s: {int(c.call('DBSIZE')[1:])} keys at the end"


def ttl_refresh(pid):
    c = Client()
    c.call("SET", "one", "v", "PX", 100_000)
    for _ in range(20):
        c.send(resp("PEXPIRE", "one", 100_000) * 50_000)
        for _ in range(50_000):
            c.reply()
    return f"1M TTL refreshes of one key: DBSIZE {int(c.call('DBSIZE')[1:])}"


def giant_name(pid):
    c = Client(timeout=120)
    reply = c.call(b"x" * (100 << 20))
    return f"100 MB command name: {reply[:24].decode(errors='replace')}..."


def giant_exists(pid):
    c = Client(timeout=120)
    return f"EXISTS on a 300 MB key: {c.call('EXISTS', b'k' * (300 << 20)).decode()}"


def big_bulk(pid):
    c = Client(timeout=120)
    return f"SET of a 300 MB value: {c.call('SET', 'big', b'v' * (300 << 20)).decode()}"


def unread_gets(pid):
    c = Client()
    c.call("SET", "mb", b"v" * (1 << 20))
    c.send(resp("GET", "mb") * 2_000)  # 2 GB of replies, never read
    time.sleep(7)
    # Unread replies sit in the socket either way: ask the server instead.
    # The hog, the canary and this observer make 3 when the hog is kept.
    info = Client().call("INFO", "clients").decode()
    clients = int(info.split("connected_clients:")[1].split()[0])
    alive = "still connected" if clients == 3 else f"disconnected ({clients} clients left)"
    return f"2,000 GETs of 1 MB never read, 7 s: client {alive}"


def fd_limit(pid):
    held, refused, silent = [], 0, 0
    for _ in range(400):
        try:
            c = Client(timeout=2)
            c.send(resp("PING"))
            if c.line() == b"+PONG":
                held.append(c)
            else:
                refused += 1
        except (OSError, EOFError):
            silent += 1
    before = proc_cpu(pid)
    time.sleep(2)
    cpu = proc_cpu(pid) - before
    for c in held:
        c.close()
    return f"ulimit -n 128, 400 clients: {len(held)} served, {refused} told, {silent} unanswered; {cpu:.2f} s CPU in 2 s"


def sigterm_bound(pid):
    c = Client()
    c.call("SET", "big", b"v" * (64 << 20))
    c.send(resp("GET", "big") * 16)  # 1 GB of replies, never read
    time.sleep(0.5)
    start = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    while os.path.exists(f"/proc/{pid}") and time.monotonic() - start < 30:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.01)
    return f"SIGTERM with 1 GB due: exited after {time.monotonic() - start:.2f} s"


def unread_subscriber(pid):
    stuck = Client()
    stuck.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.call("SUBSCRIBE", "flood")
    publisher = Client()
    batch = resp("PUBLISH", "flood", b"x" * 100_000) * 50
    delivered = 0
    start = time.monotonic()
    for _ in range(20):  # 1,000 messages of 100 KB: 100 MB
        publisher.send(batch)
        delivered += sum(int(publisher.line()[1:]) for _ in range(50))
    elapsed = time.monotonic() - start
    publisher.call("PUBSUB", "NUMSUB", "flood")  # the array's header
    subscribed = publisher.reply() and int(publisher.line()[1:])
    fate = "still subscribed" if subscribed else "cut off"
    return f"1,000 PUBLISHes of 100 KB to a subscriber that never reads, in {elapsed:.1f} s: {fate} after {delivered} ({delivered * 100 // 1000} MB)"


def million_patterns(pid):
    subscriber = Client()
    # Its confirmations are read (and dropped) as they come, so it is not
    # cut off for them; what is measured is the server's work.
    def drain():
        try:
            while subscriber.s.recv(1 << 20):
                pass
        except OSError:  # closed at the end of the probe
            pass

    threading.Thread(target=drain, daemon=True).start()
    observer = Client(timeout=120)
    start, sent = time.monotonic(), 0
    while sent < 1_000_000 and time.monotonic() - start < 30:
        subscriber.send(resp("PSUBSCRIBE", *[f"p{n}:*" for n in range(sent, sent + 10_000)]))
        sent += 10_000
    while time.monotonic() - start < 90 and int(observer.call("PUBSUB", "NUMPAT")[1:]) < sent:
        time.sleep(0.1)
    elapsed = time.monotonic() - start
    patterns = int(observer.call("PUBSUB", "NUMPAT")[1:])
    begun = time.monotonic()
    observer.call("PUBLISH", "news", "x")
    publish_ms = (time.monotonic() - begun) * 1000
    subscriber.close()
    return (f"one client PSUBSCRIBEs up to 1,000,000 patterns (30 s to send, 90 s in all): {patterns:,} taken in "
            f"{elapsed:.1f} s; then one PUBLISH (a glob match per pattern) took {publish_ms:.0f} ms")


def busy_script_killed(pid):
    """A read-only endless script: others get BUSY past the threshold, and
    SCRIPT KILL stops it."""
    a, b = Client(), Client()
    b.call("CONFIG", "SET", "busy-reply-threshold", "100")
    start = time.monotonic()
    a.send(resp("EVAL", "while true do end", "0"))
    time.sleep(0.3)
    busy = b.call("GET", "x")
    kill_at = time.monotonic()
    killed = b.call("SCRIPT", "KILL")
    caller = a.reply()
    stopped = time.monotonic() - kill_at
    after = b.call("PING")
    ok = busy.startswith(b"-BUSY ") and killed == b"+OK" and b"killed by user" in caller and after == b"+PONG"
    return (f"{'ok' if ok else 'WRONG'}: BUSY at {(kill_at - start) * 1000:.0f} ms, SCRIPT KILL stopped it in "
            f"{stopped * 1000:.0f} ms; caller got {caller[:40].decode(errors='replace')}")


def read_nested(c):
    """One reply, arrays read whole (nested lists)."""
    line = c.reply()
    if line[:1] == b"*" and int(line[1:]) >= 0:
        return [read_nested(c) for _ in range(int(line[1:]))]
    return line


def busy_function_killed(pid):
    """A read-only endless function (FCALL): others get BUSY past the
    threshold, FUNCTION STATS names it, FUNCTION KILL stops it."""
    a, b = Client(), Client()
    b.call("CONFIG", "SET", "busy-reply-threshold", "100")
    b.call("FUNCTION", "LOAD", "REPLACE",
           "#!lua name=hostile\nredis.register_function('spin', function() while true do end end)")
    start = time.monotonic()
    a.send(resp("FCALL", "spin", "0"))
    time.sleep(0.3)
    busy = b.call("GET", "x")
    b.send(resp("FUNCTION", "STATS"))
    stats = read_nested(b)
    kill_at = time.monotonic()
    killed = b.call("FUNCTION", "KILL")
    caller = a.reply()
    stopped = time.monotonic() - kill_at
    after = b.call("PING")
    b.call("FUNCTION", "DELETE", "hostile")
    ok = (busy.startswith(b"-BUSY ") and b"spin" in repr(stats).encode() and killed == b"+OK"
          and b"killed by user" in caller and after == b"+PONG")
    return (f"{'ok' if ok else 'WRONG'}: BUSY at {(kill_at - start) * 1000:.0f} ms, FUNCTION STATS named it, "
            f"FUNCTION KILL stopped it in {stopped * 1000:.0f} ms; caller got {caller[:40].decode(errors='replace')}")


def busy_script_shutdown(pid):
    """An endless script that wrote: SCRIPT KILL is refused, SHUTDOWN NOSAVE ends the server."""
    a, b = Client(), Client()
    b.call("CONFIG", "SET", "busy-reply-threshold", "100")
    a.send(resp("EVAL", "redis.call('set', 'k', 'v') while true do end", "0"))
    time.sleep(0.3)
    refused = b.call("SCRIPT", "KILL")
    start = time.monotonic()
    b.send(resp("SHUTDOWN", "NOSAVE"))
    while time.monotonic() - start < 10:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    exited = time.monotonic() - start
    ok = refused.startswith(b"-UNKILLABLE ")
    return f"{'ok' if ok else 'WRONG'}: SCRIPT KILL refused (UNKILLABLE); SHUTDOWN NOSAVE: exited after {exited:.2f} s"


def script_allocates(pid):
    """A script that allocates without end: kvd fails it at its Lua heap
    limit; redis-server has none, so it is killed after 10 s."""
    a, b = Client(timeout=120), Client()
    b.call("CONFIG", "SET", "busy-reply-threshold", "100")
    start = time.monotonic()
    a.send(resp("EVAL", "local t = {} local i = 0 while true do i = i + 1 t[i] = i end", "0"))
    a.s.settimeout(10)
    try:
        answer = a.reply()
    except socket.timeout:
        b.call("SCRIPT", "KILL")
        a.s.settimeout(60)
        answer = b"(killed with SCRIPT KILL after 10 s) " + a.reply()
    took = time.monotonic() - start
    return f"{took:.1f} s, {proc_rss(pid) >> 20} MB RSS at the end: {answer[:90].decode(errors='replace')}"


def script_recursion(pid):
    """Unbounded recursion, in Lua and through pcall: Lua's stack limits answer."""
    c = Client()
    deep = c.call("EVAL", "local function f() return 1 + f() end return f()", "0")
    through_pcall = c.call("EVAL", "local function f() return pcall(f) end return f()", "0")
    alive = c.call("PING")
    return f"{deep[:40].decode()}; via pcall: {through_pcall.decode()}; then {alive.decode()}"


def script_blocks(pid):
    """A script calling blocking commands: refused, or answered at once (never waits)."""
    c = Client(timeout=10)
    start = time.monotonic()
    blpop = c.call("EVAL", "return redis.call('blpop', 'l', 0)", "0")
    blmpop = c.call("EVAL", "return redis.call('blmpop', 0, 1, 'l', 'left')", "0")
    took = (time.monotonic() - start) * 1000
    return f"BLPOP: {blpop[:48].decode()}; BLMPOP 0: {blmpop.decode()} ({took:.0f} ms)"


SCRIPT_SERVERS = ("kvd", "kvd io-threads 0", "redis-server")
# Huge collections: what one command over millions of elements costs the
# core (the canary's worst wait says it), and what a client that asks for
# more than it reads costs in memory.


def fill(c, command, key, n, per=10_000, first=0, scored=False):
    """`command key` with n members (`first`, `first` + 1, ...), pipelined."""
    for base in range(first, first + n, per * 10):
        batch = []
        for start in range(base, min(base + per * 10, first + n), per):
            members = range(start, min(start + per, first + n))
            parts = [command, key]
            for i in members:
                parts += [i, f"m{i}"] if scored else [f"m{i}"]
            batch.append(resp(*parts))
        c.send(b"".join(batch))
        for _ in batch:
            c.reply()


def timed(c, *parts):
    start = time.monotonic()
    reply = c.call(*parts)
    return reply, time.monotonic() - start


def read_array(c):
    """Reads an array reply of bulk strings (in one buffer: line by line
    would copy the rest of it each time); its length."""
    n = int(c.line()[1:])
    data, at = bytearray(c.buf), 0
    for _ in range(n):
        while (end := data.find(b"\r\n", at)) < 0 or len(data) < end + 4 + int(data[at + 1:end]):
            chunk = c.s.recv(1 << 20)
            if not chunk:
                raise EOFError
            data += chunk
        at = end + 4 + int(data[at + 1:end])
    c.buf = bytes(data[at:])
    return n


def push_millions(pid):
    c = Client(timeout=120)
    start = time.monotonic()
    fill(c, "RPUSH", "l", 5_000_000)
    took = time.monotonic() - start
    return f"5M RPUSHed elements in {took:.1f} s: LLEN {int(c.call('LLEN', 'l')[1:])}"


def huge_set_algebra(pid):
    c = Client(timeout=120)
    fill(c, "SADD", "a", 1_000_000)
    fill(c, "SADD", "b", 1_000_000, first=500_000)
    fill(c, "ZADD", "za", 1_000_000, scored=True)
    fill(c, "ZADD", "zb", 1_000_000, first=500_000, scored=True)
    start = time.monotonic()
    c.send(resp("SINTER", "a", "b"))
    members = read_array(c)
    sinter = time.monotonic() - start
    stored, sinterstore = timed(c, "SINTERSTORE", "d", "a", "b")
    union, zunionstore = timed(c, "ZUNIONSTORE", "zd", 2, "za", "zb")
    return (f"1M-member sets: SINTER {members:,} in {sinter:.2f} s, SINTERSTORE {stored.decode()} in"
            f" {sinterstore:.2f} s; ZUNIONSTORE of two 1M zsets {union.decode()} in {zunionstore:.2f} s")


def lrange_slow_reader(pid):
    c = Client(timeout=120)
    fill(c, "RPUSH", "l", 1_000_000)  # LRANGE 0 -1: 13 MB a reply
    rss = proc_rss(pid)
    c.send(resp("LRANGE", "l", 0, -1) * 40)  # 530 MB of replies, never read
    time.sleep(7)
    grown = (proc_rss(pid) - rss) >> 20
    info = Client().call("INFO", "clients").decode()
    clients = int(info.split("connected_clients:")[1].split()[0])
    alive = "still connected" if clients == 3 else "disconnected"
    return f"40 LRANGE 0 -1 of 1M elements never read, 7 s: +{grown} MB after the load, client {alive}"


def free_huge(pid):
    c = Client(timeout=120)
    fill(c, "RPUSH", "l", 5_000_000)
    fill(c, "HSET", "h", 2_000_000, scored=True)
    fill(c, "ZADD", "z", 2_000_000, scored=True)
    _, list_del = timed(c, "DEL", "l")
    _, hash_del = timed(c, "DEL", "h")
    _, zset_unlink = timed(c, "UNLINK", "z")
    return (f"DEL of a 5M list {list_del * 1000:.0f} ms, DEL of a 2M hash {hash_del * 1000:.0f} ms,"
            f" UNLINK of a 2M zset {zset_unlink * 1000:.0f} ms")


def random_negative_count(pid):
    c = Client(timeout=120)
    c.call("SADD", "s", "m")
    rss = proc_rss(pid)
    c.send(resp("SRANDMEMBER", "s", -100_000_000))  # 700 MB of reply, never read
    time.sleep(7)
    grown = (proc_rss(pid) - rss) >> 20
    info = Client().call("INFO", "clients").decode()
    clients = int(info.split("connected_clients:")[1].split()[0])
    alive = "still connected" if clients == 3 else "disconnected"
    return f"SRANDMEMBER s -100000000 never read, 7 s: RSS +{grown} MB, client {alive}"


def lpos_huge_maxlen(pid):
    c = Client(timeout=120)
    fill(c, "RPUSH", "l", 5_000_000)
    reply, took = timed(c, "LPOS", "l", "nope", "MAXLEN", 9223372036854775807)
    return f"LPOS over 5M elements, MAXLEN 2^63-1: {reply.decode()} after {took * 1000:.0f} ms"


def blpop_thousands(pid):
    clients = [Client(timeout=60) for _ in range(1000)]
    for n, client in enumerate(clients):
        client.send(resp("BLPOP", *[f"k{n}:{j}" for j in range(100)], 0))
    observer = Client()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = observer.call("INFO", "clients").decode()
        if int(info.split("blocked_clients:")[1].split()[0]) == 1000:
            break
        time.sleep(0.05)
    before = proc_cpu(pid)
    time.sleep(2)
    idle = proc_cpu(pid) - before
    start = time.monotonic()
    observer.send(b"".join(resp("LPUSH", f"k{n}:99", "v") for n in range(1000)))
    for _ in range(1000):
        observer.reply()
    served = sum(1 for client in clients if client.line() == b"*2")
    took = time.monotonic() - start
    return (f"1,000 clients parked on 100 keys each: {idle:.2f} s CPU in 2 s idle;"
            f" {served} served {took * 1000:.0f} ms after 1,000 pushes")


PROBES = [
    ("expiry storm", expiry_storm, None),
    ("steady short TTLs", steady_short_ttls, None),
    ("TTL refreshes", ttl_refresh, None),
    ("100 MB command name", giant_name, None),
    ("EXISTS on a 300 MB key", giant_exists, None),
    ("300 MB bulk string", big_bulk, None),
    ("unread replies", unread_gets, None),
    ("fd limit", fd_limit, 128),
    ("SIGTERM bound", sigterm_bound, None),
    ("unread subscriber", unread_subscriber, None),
    ("a million patterns", million_patterns, None),
    ("busy script, SCRIPT KILL", busy_script_killed, None, SCRIPT_SERVERS),
    ("busy function, FUNCTION KILL", busy_function_killed, None, SCRIPT_SERVERS),
    ("busy script that wrote, SHUTDOWN NOSAVE", busy_script_shutdown, None, SCRIPT_SERVERS),
    ("script allocating without end", script_allocates, None),
    ("script recursing without end", script_recursion, None),
    ("script calling blocking commands", script_blocks, None),
    ("push millions", push_millions, None),
    ("SINTER, ZUNIONSTORE of 1M", huge_set_algebra, None),
    ("LRANGE 0 -1, slow reader", lrange_slow_reader, None),
    ("DEL, UNLINK of millions", free_huge, None),
    ("SRANDMEMBER -100M", random_negative_count, None),
    ("LPOS, huge MAXLEN", lpos_huge_maxlen, None),
    ("BLPOP on 100k keys", blpop_thousands, None),
]


def main():
    subprocess.run(["swift", "build", "-c", "release", "--product", "kvd"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    wanted = sys.argv[1:]
    rows = []
    for name, probe, limit, *servers in PROBES:
        if wanted and not any(w in name for w in wanted):
            continue
        for server in servers[0] if servers else ("kvd", "redis-server"):
            process = start(server, limit)
            canary = Canary()
            canary.start()
            rss, cpu = proc_rss(process.pid), proc_cpu(process.pid)
            try:
                what = probe(process.pid)
            except Exception as error:  # a probe that breaks is a result too
                what = f"probe failed: {error!r}"
            exited = process.poll() is not None
            rss_growth = 0 if exited else (proc_rss(process.pid) - rss) / (1 << 20)
            cpu_used = 0 if exited else proc_cpu(process.pid) - cpu
            canary.finish(5)
            if not exited:
                stop(process)
            worst = "no answer" if canary.failed and not exited else f"{canary.worst * 1000:.0f} ms"
            rows.append((name, server, worst, f"{rss_growth:+.0f} MB", f"{cpu_used:.2f} s", what))
            print(" | ".join(rows[-1]), flush=True)
    table = ["| probe | server | canary worst | RSS growth | CPU | result |", "|---|---|---|---|---|---|"]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(table) + "\n"
    print()
    print(text)
    if wanted:
        return  # a partial run does not replace the full table
    with open(os.path.join(ROOT, "bench", "hostile-latest.md"), "w") as f:
        f.write(f"make hostile, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores\n\n" + text)


if __name__ == "__main__":
    main()
