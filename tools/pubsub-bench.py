#!/usr/bin/env python3
"""PUBLISH throughput to N subscribers, kvd (release) and redis-server side by side.

For each server and each N: N subscribers (one process draining every
socket, so a slow reader is not what is measured) listen to one channel,
and redis-benchmark publishes to it (4 connections, pipelines of 16); the
row is redis-benchmark's PUBLISH rate and whether every subscriber got
every message. Usage: pubsub-bench.py [N ...]   (default 1 10 50)
"""
import multiprocessing
import os
import re
import select
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KVD = os.path.join(ROOT, ".build", "release", "kvd")
MESSAGES = 200_000
FRAME = b"*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def drain(port, n, ready, received):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"SUBSCRIBE chan\r\n")
        socks.append(s)
    confirmation = len(b"*3\r\n$9\r\nsubscribe\r\n$4\r\nchan\r\n:1\r\n")
    counts = {s: -confirmation for s in socks}
    ready.set()
    deadline = time.monotonic() + 120
    want = MESSAGES * len(FRAME)
    while time.monotonic() < deadline and any(c < want for c in counts.values()):
        for s in select.select(socks, [], [], 1)[0]:
            counts[s] += len(s.recv(1 << 20))
    received.value = sum(1 for c in counts.values() if c == want)


def run(server, port, n):
    ready, received = multiprocessing.Event(), multiprocessing.Value("i", 0)
    reader = multiprocessing.Process(target=drain, args=(port, n, ready, received))
    reader.start()
    ready.wait(30)
    time.sleep(0.3)
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-n", str(MESSAGES), "-c", "4", "-P", "16", "-q", "PUBLISH", "chan", "hello"],
        capture_output=True, text=True, timeout=300).stdout
    reader.join(130)
    rate = re.findall(r"([0-9.]+) requests per second", out)
    return f"{float(rate[-1]):,.0f}/s" if rate else "?", received.value


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 10, 50]
    servers = [
        ("kvd --io-threads 0", [KVD, "--io-threads", "0"]),
        ("kvd --io-threads 2", [KVD, "--io-threads", "2"]),
        ("redis-server", ["redis-server", "--save", "", "--appendonly", "no"]),
    ]
    print("| subscribers | " + " | ".join(name for name, _ in servers) + " |")
    print("|---|" + "---|" * len(servers))
    for n in counts:
        cells = []
        for name, command in servers:
            port = free_port()
            process = subprocess.Popen(command + ["--port", str(port)], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            try:
                rate, complete = run(name, port, n)
            finally:
                process.kill()
                process.wait()
            cells.append(f"{rate} ({complete}/{n} got all)")
        print(f"| {n} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
