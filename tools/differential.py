"""Differential checks: the same commands to redis-server and kvd over raw
RESP2 and RESP3 connections, each reply compared byte for byte (no client
library in between to parse numbers into floats), between a redis-server
and a kvd it starts (`redis_and_kvd`), and clients parked on a blocking
command (`park`). Shared by tools/hll-differential.py,
tools/geo-differential.py, tools/changes-differential.py and
tools/notifications-differential.py.
"""
import contextlib, socket, tempfile, time
from persistence_data import launch, stop


def encode(command):
    out = b"*%d\r\n" % len(command)
    for argument in command:
        if isinstance(argument, int):
            argument = str(argument)
        argument = argument.encode() if isinstance(argument, str) else argument
        out += b"$%d\r\n%s\r\n" % (len(argument), argument)
    return out


class Raw:
    """A RESP connection that returns each reply as the bytes sent."""

    def __init__(self, port, protocol):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buffer = b""
        if protocol == 3:
            self.send(["HELLO", "3"])  # its reply names the server: not compared

    def line(self):
        while b"\r\n" not in self.buffer:
            data = self.socket.recv(65536)
            if not data:
                raise SystemExit("FAIL: a server closed the connection")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line + b"\r\n"

    def exact(self, count):
        while len(self.buffer) < count:
            data = self.socket.recv(65536)
            if not data:
                raise SystemExit("FAIL: a server closed the connection")
            self.buffer += data
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:-2]
        if kind in b"$=!" and rest != b"-1":
            return line + self.exact(int(rest) + 2)
        if kind in b"*~>" and rest != b"-1":
            return line + b"".join(self.reply() for _ in range(int(rest)))
        if kind == b"%" or kind == b"|":
            return line + b"".join(self.reply() for _ in range(2 * int(rest)))
        return line

    def send(self, command):
        self.socket.sendall(encode(command))
        return self.reply()


# Clients parked on a blocking command, each served by another client's
# push (the blocking command, the push).
PARKED_CASES = ((["BLPOP", "q", "5"], ["RPUSH", "q", "x", "y"]),
                (["BRPOP", "q", "5"], ["LPUSH", "q", "x"]),
                (["BLMOVE", "q", "d", "LEFT", "RIGHT", "5"], ["RPUSH", "q", "x"]),
                (["BRPOPLPUSH", "q", "q", "5"], ["RPUSH", "q", "x", "y"]),
                (["BLMPOP", "5", "1", "q", "LEFT", "COUNT", "3"], ["RPUSH", "q", "x", "y", "z", "w"]),
                (["BZPOPMIN", "z", "5"], ["ZADD", "z", "1", "a", "2", "b"]),
                (["BZMPOP", "5", "1", "z", "MIN", "COUNT", "5"], ["ZADD", "z", "1", "a", "2", "b"]))


def park(port, watcher, block):
    """A new connection to `port` that sent `block` and is parked on it, as
    `watcher` (another connection to the same server) sees in INFO, within
    a bounded wait: a push sent after it serves the parked client, where one
    sent before would let the command pop at once."""
    parked = Raw(port, 2)
    parked.socket.sendall(encode(block))
    deadline = time.monotonic() + 10
    while b"blocked_clients:1\r\n" not in watcher.send(["INFO", "clients"]):
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL: {' '.join(block)} was not parked within 10 s on port {port}")
        time.sleep(0.001)
    return parked


class Differential:
    """redis-server on one port, kvd on the other; `both` runs a command on
    each and fails unless the replies are equal (while `comparing`)."""

    def __init__(self, redis_port, kvd_port, seed):
        self.seed = seed
        self.ports = (redis_port, kvd_port)
        self.checks = 0
        self.comparing = True
        self.connections = {protocol: [Raw(port, protocol) for port in (redis_port, kvd_port)] for protocol in (2, 3)}

    def both(self, *command, protocol=2):
        replies = [connection.send(command) for connection in self.connections[protocol]]
        if self.comparing and replies[0] != replies[1]:
            raise SystemExit(f"FAIL (seed {self.seed}, RESP{protocol}): {command!r}\n"
                             f"  redis-server: {replies[0]!r}\n  kvd:          {replies[1]!r}")
        self.checks += 1
        return replies[0]


@contextlib.contextmanager
def redis_and_kvd(kvd, seed, name, io_threads=0):
    """A redis-server and a kvd on free ports, neither saving, as a
    Differential (with a redis-py client of each, `clients`); both are
    stopped (killed, if it comes to that) after. kvd runs on its core's
    loop alone by default (`io_threads` 0)."""
    work = tempfile.mkdtemp(prefix=f"{name}-")
    processes = []
    try:
        server, redis_client, _ = launch(work, processes, "redis",
                                         ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        kvd_process, kvd_client, _ = launch(work, processes, "kvd", [kvd, "--save", "", "--io-threads", str(io_threads)])
        differential = Differential(*[client.connection_pool.connection_kwargs["port"]
                                      for client in (redis_client, kvd_client)], seed)
        differential.clients = (redis_client, kvd_client)  # redis-py's, for DUMP and RESTORE
        yield differential
        stop(kvd_process)
        stop(server)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
