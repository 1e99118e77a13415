#!/usr/bin/env python3
"""redis-cli's operator views against kvd and a real redis-server, side by side.

usage: .build/venv/bin/python redis-cli-check.py path/to/kvd   (redis-py: make py-deps)

- interactive `help SET` (redis-cli builds it from COMMAND DOCS) prints the
  same block for both;
- `redis-cli --stat` shows sane figures for kvd: a key count, memory as
  bytes with a unit (no negative or garbage column), clients, requests; its
  keys, clients and blocked columns as redis-server's;
- `redis-cli --memkeys` finds the same biggest key of each type as for
  redis-server (byte figures aside), with no warning;
- `redis-cli MONITOR` prints the same lines for both (time stamps and client
  ports aside): plain commands, a script's calls, MULTI/EXEC, a redacted AUTH;
- the client-side caching commands kvd answers without supporting tracking
  (TRACKING OFF, TRACKINGINFO, GETREDIR, CACHING, their errors) render the
  same in RESP2 and RESP3;
- `redis-cli -s` and redis-py's `unix_socket_path` reach both through a Unix
  socket (`--unixsocket`), flagged `U` in CLIENT INFO.
Every step is bounded; the servers are killed at the end.
"""
import os
import pty
import re
import socket
import subprocess
import sys
import time

from process_output import read_until


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_ping(port):
    for _ in range(100):
        try:
            out = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, timeout=2).stdout
            if out.strip() == b"PONG":
                return
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.1)
    sys.exit("redis-cli-check: port %d did not answer PING" % port)


def interactive(port, line, until):
    """What redis-cli prints in a terminal for `line` (ANSI codes removed),
    up to the first `until` (10 s at most)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("redis-cli", ["redis-cli", "-p", str(port)])

    def answer(chunk):
        if b"\x1b[6n" in chunk:  # linenoise asks where the cursor is
            os.write(fd, b"\x1b[1;80R")
    def plain(text):
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    prompt = "127.0.0.1:%d>" % port
    text = read_until(fd, lambda text: prompt in plain(text), on_chunk=answer)
    os.write(fd, line.encode() + b"\r")
    text += read_until(fd, lambda text: until in plain(text), on_chunk=answer)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return plain(text)


def help_block(port):
    text = interactive(port, "help SET", until="group: string")
    start = text.find("SET key value")
    assert start >= 0, "no help for SET on port %d:\n%s" % (port, text[-400:])
    return text[start:text.find("group:", start) + len("group: string")]


def memkeys_summary(port):
    """`redis-cli --memkeys`'s summary, with the byte figures (each server
    sizes keys its own way) replaced by N."""
    run = subprocess.run(["redis-cli", "-p", str(port), "--memkeys"], capture_output=True, timeout=30)
    assert run.returncode == 0, run
    text = run.stdout.decode(errors="replace")
    summary = text[text.find("-------- summary"):]
    summary = re.sub(r"\d+(\.\d+)? bytes", "N bytes", summary)
    return re.sub(r"avg size \d+\.\d+", "avg size N", summary)


def stat_lines(port):
    """`redis-cli --stat`'s lines over 2 s (a line every 0.3 s)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("redis-cli", ["redis-cli", "-p", str(port), "--stat", "-i", "0.3"])
    text = read_until(fd, lambda text: False, seconds=2)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return [l for l in text.splitlines() if re.match(r"^\d", l)]


MONITORED = [
    ["SET", "foo", "bar"],
    ["GET", "foo"],
    ["EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"],
    ["AUTH", "not-real"],
]


def monitor_lines(port):
    """What `redis-cli MONITOR` prints while MONITORED and a MULTI/EXEC run,
    with the time stamps and client ports replaced by placeholders."""
    watcher = subprocess.Popen(["redis-cli", "-p", str(port), "monitor"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        # MONITOR is in place before the commands run; the EXEC comes last.
        text = read_until(watcher.stdout.fileno(), lambda text: "OK" in text.splitlines())
        for command in MONITORED:
            subprocess.run(["redis-cli", "-p", str(port)] + command, capture_output=True, timeout=5)
        transaction = b"MULTI\nSET t 1\nEXEC\n"
        subprocess.run(["redis-cli", "-p", str(port)], input=transaction, capture_output=True, timeout=5)
        text += read_until(watcher.stdout.fileno(), lambda text: '"EXEC"' in text)
    finally:
        watcher.kill()
    watcher.communicate(timeout=5)
    lines = []
    for line in text.splitlines():
        line = re.sub(r"^\d+\.\d+ ", "T ", line)
        line = re.sub(r"\[(\d+) 127\.0\.0\.1:\d+\]", r"[\1 CLIENT]", line)
        lines.append(line)
    return lines


TRACKING_SCRIPT = """CLIENT TRACKING off
CLIENT TRACKING maybe
CLIENT TRACKING
CLIENT TRACKING off bogus
CLIENT TRACKING off prefix
CLIENT TRACKING off bcast noloop
CLIENT TRACKINGINFO
CLIENT GETREDIR
CLIENT CACHING yes
CLIENT CACHING
CLIENT TRACKINGINFO x
CLIENT GETREDIR x
"""


def rendered(port, protocol):
    return subprocess.run(["redis-cli", "-%d" % protocol, "-p", str(port)], input=TRACKING_SCRIPT.encode(),
                          capture_output=True, timeout=10).stdout


def unix_socket_check(kvd_path):
    """redis-cli -s and redis-py's unix_socket_path against both servers."""
    import redis as redispy
    directory = "/tmp/redis-cli-check-%d" % os.getpid()
    os.makedirs(directory, exist_ok=True)
    kvd_socket, redis_socket = directory + "/kvd.sock", directory + "/redis.sock"
    kvd = subprocess.Popen([kvd_path, "--port", str(free_port()), "--save", "", "--unixsocket", kvd_socket,
                            "--unixsocketperm", "700"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    redis = subprocess.Popen(["redis-server", "--port", "0", "--save", "", "--appendonly", "no",
                              "--unixsocket", redis_socket, "--unixsocketperm", "700"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for path in (kvd_socket, redis_socket):
            for _ in range(100):
                if os.path.exists(path):
                    break
                time.sleep(0.1)
            assert oct(os.stat(path).st_mode & 0o777) == "0o700", "socket permissions: %s" % path
            out = subprocess.run(["redis-cli", "-s", path, "ping"], capture_output=True, timeout=5).stdout
            assert out.strip() == b"PONG", "redis-cli -s %s: %r" % (path, out)
            client = redispy.Redis(unix_socket_path=path, protocol=2, socket_timeout=5)
            client.set("u", "1")
            assert client.get("u") == b"1"
            assert client.client_info()["flags"] == "U", client.client_info()
            assert client.config_get("unixsocket")["unixsocket"] == path
            client.close()
        print("redis-cli -s and redis-py unix_socket_path: served over the Unix socket, flags=U, for both")
    finally:
        kvd.kill()
        redis.kill()
        kvd.wait(timeout=10)
        redis.wait(timeout=10)
        for path in (kvd_socket, redis_socket):
            if os.path.exists(path):
                os.unlink(path)
        os.rmdir(directory)


def main():
    kvd_port, redis_port = free_port(), free_port()
    kvd = subprocess.Popen([sys.argv[1], "--port", str(kvd_port), "--save", ""], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ping(kvd_port)
        wait_ping(redis_port)
        expected, got = help_block(redis_port), help_block(kvd_port)
        assert got == expected, "help SET differs:\nredis-server: %r\nkvd: %r" % (expected, got)
        print("redis-cli help SET: the same for kvd as for redis-server")

        for port in (kvd_port, redis_port):
            for command in (["SET", "s", "x" * 100], ["RPUSH", "l", "a", "b"], ["HSET", "h", "f", "v"],
                            ["SADD", "st", "m"], ["ZADD", "z", "1", "m"]):
                subprocess.run(["redis-cli", "-p", str(port)] + command, capture_output=True, timeout=5, check=True)
        lines = stat_lines(kvd_port)
        assert lines, "redis-cli --stat printed no figures for kvd"
        for line in lines:
            fields = line.split()
            keys, memory, clients, blocked, requests = fields[0], fields[1], fields[2], fields[3], fields[4]
            assert keys == "5" and clients.isdigit() and blocked == "0" and requests.isdigit(), line
            assert re.match(r"^\d+(\.\d+)?[BKMG]$", memory), "--stat's memory column: %r" % line
        # Keys, clients and blocked clients as redis-server shows them.
        theirs = stat_lines(redis_port)
        assert theirs and [theirs[0].split()[i] for i in (0, 2, 3)] == [lines[0].split()[i] for i in (0, 2, 3)], \
            "--stat: redis-server %r, kvd %r" % (theirs[:1], lines[:1])
        print("redis-cli --stat: %d lines of sane figures for kvd (%s), keys and clients as redis-server's"
              % (len(lines), lines[-1].strip()))

        expected, got = memkeys_summary(redis_port), memkeys_summary(kvd_port)
        assert "Warning" not in got and got == expected, \
            "--memkeys differs:\nredis-server: %s\nkvd: %s" % (expected, got)
        print("redis-cli --memkeys: the same summary as redis-server's (byte figures aside), no warning")

        expected, got = monitor_lines(redis_port), monitor_lines(kvd_port)
        assert len(expected) >= 8 and got == expected, \
            "MONITOR differs:\nredis-server: %r\nkvd: %r" % (expected, got)
        print("redis-cli MONITOR: the same %d lines for kvd as for redis-server" % len(got))

        for protocol in (2, 3):
            expected, got = rendered(redis_port, protocol), rendered(kvd_port, protocol)
            assert got == expected, "CLIENT TRACKING and friends differ (RESP%d):\nredis-server: %r\nkvd: %r" % (
                protocol, expected, got)
        print("CLIENT TRACKING OFF/TRACKINGINFO/GETREDIR/CACHING: rendered the same as redis-server's, RESP2 and 3")
    finally:
        kvd.kill()
        redis.kill()
    unix_socket_check(sys.argv[1])


main()
