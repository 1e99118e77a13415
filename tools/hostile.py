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
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KVD = os.path.join(ROOT, ".build", "release", "kvd")
PORT = 6420


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
                if client.call("PING") != b"+PONG":
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
    if server == "kvd":
        cmd = [KVD, "--port", str(PORT), "--save", "", "--dir", tempfile.gettempdir(),
               "--dbfilename", f"kvd-hostile-{os.getpid()}.rdb"]
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
]


def main():
    subprocess.run(["swift", "build", "-c", "release", "--product", "kvd"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    wanted = sys.argv[1:]
    rows = []
    for name, probe, limit in PROBES:
        if wanted and not any(w in name for w in wanted):
            continue
        for server in ("kvd", "redis-server"):
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
