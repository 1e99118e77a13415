#!/usr/bin/env python3
"""Memory per element of kvd's hashes, lists, sets and sorted sets, against
redis-server 7.0.15 in the same run.

For each type and shape, a fresh server (kvd, release build, --io-threads 0;
redis-server with persistence off) is loaded with 1M elements over
1 key (Redis's large encodings: hashtable, quicklist, skiplist), 10,000 keys
of 100 elements or 100,000 keys of 10 (its compact ones: listpack), and the
growth of its resident set is divided by the number of elements. Members
are "m0".."m999999" (hash values "v", scores the member's number), so the
per-element figure includes the member's own 7 or so bytes, and for the
many-key shapes each key's own cost shared among its elements.
Prints a markdown table. Not part of CI.

usage: collection-memory.py KVD_BINARY   (MEMORY_PORT: the port, default 6395)
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

KVD = os.path.abspath(sys.argv[1])  # the servers run in directories of their own
PORT = int(os.environ.get("MEMORY_PORT", "6395"))
ELEMENTS = int(os.environ.get("MEMORY_ELEMENTS", "1000000"))
WORKDIR = tempfile.mkdtemp(prefix="collection-memory-")
SHAPES = [(1, ELEMENTS), (ELEMENTS // 100, 100), (ELEMENTS // 10, 10)]
TYPES = [("hash", "HSET"), ("list", "RPUSH"), ("set", "SADD"), ("zset", "ZADD")]


def resp(*parts):
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        p = p if isinstance(p, bytes) else str(p).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


def rss(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def start(server):
    if server == "kvd":
        cmd = [KVD, "--port", str(PORT), "--io-threads", "0", "--save", ""]
    else:
        cmd = ["redis-server", "--port", str(PORT), "--save", "", "--appendonly", "no"]
    # In a directory of its own: a dump.rdb left in the working directory
    # (kvd's snapshot at exit) would be loaded by the next server.
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=WORKDIR)
    for _ in range(200):
        try:
            return process, socket.create_connection(("127.0.0.1", PORT), timeout=60)
        except OSError:
            time.sleep(0.02)
    process.kill()
    sys.exit(f"collection-memory: {server} did not start")


def load(s, command, keys, per_key):
    """`keys` keys of `per_key` elements each, in commands of up to 1,000."""
    element = 0
    pending = []
    for key in range(keys):
        for start in range(0, per_key, 1000):
            parts = [command, f"k{key}"]
            for _ in range(min(1000, per_key - start)):
                if command == "HSET":
                    parts += [f"m{element}", "v"]
                elif command == "ZADD":
                    parts += [element, f"m{element}"]
                else:
                    parts.append(f"m{element}")
                element += 1
            pending.append(resp(*parts))
            if len(pending) == 100:
                send_and_read(s, pending)
                pending = []
    send_and_read(s, pending)


def send_and_read(s, requests):
    if not requests:
        return
    s.sendall(b"".join(requests))
    lines = 0
    data = b""
    while lines < len(requests):
        chunk = s.recv(1 << 16)
        if not chunk:
            sys.exit("collection-memory: the server closed the connection")
        data += chunk
        lines = data.count(b"\r\n")


def measure(server, command, keys, per_key):
    process, s = start(server)
    try:
        time.sleep(0.2)
        before = rss(process.pid)
        load(s, command, keys, per_key)
        time.sleep(0.5)
        s.sendall(resp("OBJECT", "ENCODING", "k0"))
        encoding = s.recv(100).split(b"\r\n")[1].decode()
        return (rss(process.pid) - before) / (keys * per_key), encoding
    finally:
        s.close()
        process.terminate()
        process.wait(10)


def main():
    print(f"{os.cpu_count()} cores; bytes of resident set per element, {ELEMENTS:,} elements each, "
          f"fresh servers, same run (`bench/collection-memory.py`)")
    print()
    print("| type | keys x elements | Redis's encoding | kvd B/element | redis-server B/element | kvd / redis |")
    print("|---|---|---|---|---|---|")
    for name, command in TYPES:
        for keys, per_key in SHAPES:
            kvd, _ = measure("kvd", command, keys, per_key)
            redis, encoding = measure("redis", command, keys, per_key)
            print(f"| {name} | {keys:,} x {per_key:,} | {encoding} | {kvd:.0f} | {redis:.0f} | {kvd / redis:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
