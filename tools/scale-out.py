#!/usr/bin/env python3
"""kvd scaled out behind nutcracker (twemproxy), the Redis-protocol sharding
proxy Debian ships: N kvd processes, each one single-threaded core, and one
proxy that spreads keys over them by consistent hashing.

usage: scale-out.py check KVD        3 backends; 10k keys written through the
                                     proxy must all read back through it, and
                                     be spread over all three backends
       scale-out.py bench KVD [N]    N backends (default: one per core);
                                     redis-benchmark through the proxy against
                                     one kvd alone, in the same run

Every process and request is bounded: a hang fails the script.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """A minimal pipelining RESP2 client (the proxy does not speak HELLO)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def send(self, *commands):
        out = bytearray()
        for command in commands:
            out += b"*%d\r\n" % len(command)
            for argument in command:
                argument = argument if isinstance(argument, bytes) else str(argument).encode()
                out += b"$%d\r\n%s\r\n" % (len(argument), argument)
        self.sock.sendall(out)

    def line(self):
        while b"\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("connection closed")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def exact(self, count):
        while len(self.buffer) < count + 2:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("connection closed")
            self.buffer += data
        data, self.buffer = self.buffer[:count], self.buffer[count + 2:]
        return data

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if int(rest) < 0 else self.exact(int(rest))
        if kind == b"*":
            return None if int(rest) < 0 else [self.reply() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def call(self, *command):
        self.send(command)
        return self.reply()


def wait_until_serving(port, what):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            client = Client(port)
            client.call("SET", "__probe__", "1")
            client.call("DEL", "__probe__")
            return
        except (OSError, RuntimeError):
            time.sleep(0.05)
    raise SystemExit(f"scale-out: {what} on port {port} did not start serving within 10 s")


def start_kvd(kvd, workdir, io_threads=1):
    port = free_port()
    log = open(os.path.join(workdir, f"kvd-{port}.log"), "w")
    process = subprocess.Popen([kvd, "--port", str(port), "--io-threads", str(io_threads), "--save", "", "--dir", workdir],
                               stdout=log, stderr=log)
    wait_until_serving(port, "kvd")
    return port, process


def start_nutcracker(backends, workdir):
    port, stats = free_port(), free_port()
    config = os.path.join(workdir, "nutcracker.yml")
    with open(config, "w") as f:
        f.write(
            "kvd:\n"
            f"  listen: 127.0.0.1:{port}\n"
            "  hash: fnv1a_64\n"
            "  distribution: ketama\n"
            "  redis: true\n"
            "  auto_eject_hosts: false\n"
            "  server_connections: 1\n"
            "  servers:\n" + "".join(f"    - 127.0.0.1:{p}:1 kvd{i}\n" for i, p in enumerate(backends))
        )
    log = os.path.join(workdir, "nutcracker.log")
    process = subprocess.Popen(["nutcracker", "-c", config, "-s", str(stats), "-o", log])
    wait_until_serving(port, "nutcracker")
    return port, process, config


def check(kvd, workdir, processes):
    backends = []
    for _ in range(3):
        port, process = start_kvd(kvd, workdir)
        processes.append(process)
        backends.append(port)
    proxy, process, _ = start_nutcracker(backends, workdir)
    processes.append(process)
    client = Client(proxy)
    keys = 10_000
    for start in range(0, keys, 1000):  # pipelined, 1000 at a time
        client.send(*[("SET", f"key:{i}", f"value-{i}") for i in range(start, start + 1000)])
        replies = [client.reply() for _ in range(1000)]
        assert replies == ["OK"] * 1000, f"SET through the proxy: {set(map(str, replies))}"
    client.send(*[("GET", f"key:{i}") for i in range(keys)])
    got = [client.reply() for _ in range(keys)]
    wrong = [i for i in range(keys) if got[i] != f"value-{i}".encode()]
    assert not wrong, f"{len(wrong)} keys read back wrong through the proxy, first key:{wrong[0]}"
    # MGET is split by the proxy over the backends and merged in order.
    for start in range(0, keys, 500):
        values = client.call("MGET", *[f"key:{i}" for i in range(start, start + 500)])
        assert values == [f"value-{i}".encode() for i in range(start, start + 500)], f"MGET from key:{start}"
    counts = [Client(port).call("DBSIZE") for port in backends]
    assert sum(counts) == keys, f"the backends hold {sum(counts)} keys, not {keys}: {counts}"
    assert all(count >= keys // 10 for count in counts), f"keys not spread over all three backends: {counts}"
    print(f"scale-out check: {keys} keys written and read back through nutcracker; per backend: {counts}")


def benchmark(port, pipeline):
    """redis-benchmark's SET and GET throughput (requests/s) on `port`."""
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-t", "set,get", "-n", "200000", "-c", "50", "-r", "100000",
         "-P", str(pipeline), "--csv"],
        capture_output=True, text=True, timeout=300, check=True).stdout
    rates = {}
    for line in out.splitlines():
        fields = [f.strip('"') for f in line.split(",")]
        if fields and fields[0] in ("SET", "GET"):
            rates[fields[0]] = float(fields[1])
    if set(rates) != {"SET", "GET"}:
        raise SystemExit(f"scale-out: redis-benchmark gave no SET/GET figures:\n{out}")
    return rates


def bench(kvd, workdir, processes, count):
    single, process = start_kvd(kvd, workdir, io_threads=max(os.cpu_count() - 1, 1))
    processes.append(process)
    backends = []
    for _ in range(count):
        port, process = start_kvd(kvd, workdir)
        processes.append(process)
        backends.append(port)
    proxy, process, config = start_nutcracker(backends, workdir)
    processes.append(process)
    rows = []
    for pipeline in (1, 16):
        alone, sharded = benchmark(single, pipeline), benchmark(proxy, pipeline)
        for test in ("SET", "GET"):
            rows.append((test, pipeline, alone[test], sharded[test]))
    table = [
        f"kvd behind nutcracker ({count} kvd processes, --io-threads 1 each) against one kvd "
        f"(--io-threads {max(os.cpu_count() - 1, 1)}), on {os.cpu_count()} cores; redis-benchmark -c 50 -n 200000 -r 100000",
        "",
        "| test | pipeline | one kvd (req/s) | nutcracker + kvd (req/s) | ratio |",
        "|---|---|---|---|---|",
    ]
    for test, pipeline, alone, sharded in rows:
        table.append(f"| {test} | {pipeline} | {alone:,.0f} | {sharded:,.0f} | {sharded / alone:.2f}x |")
    print("\n".join(table))
    with open(config) as f:
        print("\nnutcracker configuration:\n" + f.read())
    if os.environ.get("SCALE_OUT_OUT"):
        with open(os.environ["SCALE_OUT_OUT"], "w") as f:
            f.write("\n".join(table) + "\n")


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "bench"):
        raise SystemExit(__doc__)
    kvd = argv[2]
    processes = []
    with tempfile.TemporaryDirectory() as workdir:
        try:
            if argv[1] == "check":
                check(kvd, workdir, processes)
            else:
                bench(kvd, workdir, processes, int(argv[3]) if len(argv) > 3 else os.cpu_count())
        finally:
            for process in processes:
                process.kill()
                process.wait(timeout=10)


if __name__ == "__main__":
    main(sys.argv)
