#!/usr/bin/env python3
"""Record what a real Redis 7 answers to kvd's command corpus, byte for byte.

usage: redis-golden.py record PORT > Tests/KVServerTests/GoldenReplies.swift
       redis-golden.py compare PORT_REDIS PORT_KVD      (prints every difference)

Each case is sent on a fresh connection after FLUSHALL; time-dependent
replies (TTL) use values that cannot drift within a test run.
"""
import socket
import sys

CASES = [
    # (name, raw request bytes); setup steps are part of the request.
    ("ping", b"PING\r\n"),
    ("ping message", b"*2\r\n$4\r\nPING\r\n$5\r\nhello\r\n"),
    ("ping too many", b"*3\r\n$4\r\nPING\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("echo", b"*2\r\n$4\r\nECHO\r\n$3\r\nhey\r\n"),
    ("echo arity", b"*1\r\n$4\r\necho\r\n"),
    ("get missing", b"*2\r\n$3\r\nGET\r\n$3\r\nnop\r\n"),
    ("set get", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"),
    ("get arity", b"*1\r\n$3\r\nget\r\n*3\r\n$3\r\nget\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("set binary", b"*3\r\n$3\r\nSET\r\n$3\r\nb\x00n\r\n$4\r\n\x00\xff\r\n\r\n*2\r\n$3\r\nGET\r\n$3\r\nb\x00n\r\n"),
    ("set nx xx", b"SET a 1 NX\r\nSET a 2 NX\r\nSET b 1 XX\r\nSET a 3 XX\r\nGET a\r\n"),
    ("set get option", b"SET a 1\r\nSET a 2 GET\r\nSET z 2 GET\r\nSET a 9 NX GET\r\nGET a\r\n"),
    ("set ex px", b"SET a 1 EX 100\r\nTTL a\r\nSET b 1 PX 100000\r\nTTL b\r\nSET c 1 EX 0\r\nSET c 1 EX -5\r\nSET c 1 EX abc\r\nSET c 1 PX 1.5\r\n"),
    ("set syntax", b"SET a 1 NX XX\r\nSET a 1 EX 10 PX 10\r\nSET a 1 BOGUS\r\nSET a 1 EX\r\nSET a 1 KEEPTTL EX 5\r\n"),
    ("set keepttl", b"SET a 1 EX 100\r\nSET a 2 KEEPTTL\r\nTTL a\r\nSET a 3\r\nTTL a\r\n"),
    ("set overflow expire", b"SET a 1 EX 9223372036854775807\r\nSET a 1 PX 9223372036854775807\r\n"),
    ("getset", b"GETSET a 1\r\nGETSET a 2\r\nGET a\r\n"),
    ("del exists", b"MSET a 1 b 2 c 3\r\nEXISTS a b nope a\r\nDEL a b nope\r\nEXISTS a b c\r\nDEL\r\n"),
    ("incr decr", b"INCR n\r\nINCR n\r\nDECR n\r\nINCRBY n 10\r\nDECRBY n 3\r\nINCRBY n -20\r\nGET n\r\n"),
    ("incr errors", b"SET s abc\r\nINCR s\r\nSET t ' 1'\r\nINCR t\r\nSET u 01\r\nINCR u\r\nINCRBY n x\r\nINCRBY n 1.5\r\n"),
    ("incr overflow", b"SET n 9223372036854775807\r\nINCR n\r\nSET m -9223372036854775808\r\nDECR m\r\nDECRBY m -9223372036854775808\r\nINCRBY x 99999999999999999999\r\n"),
    ("append strlen", b"APPEND a hello\r\nAPPEND a \" world\"\r\nGET a\r\nSTRLEN a\r\nSTRLEN nope\r\n"),
    ("mget mset", b"MSET a 1 b 2\r\nMGET a nope b\r\nMSET a\r\nMSET a 1 b\r\n"),
    ("expire ttl persist", b"SET a 1\r\nTTL a\r\nPTTL a\r\nTTL nope\r\nPTTL nope\r\nEXPIRE a 100\r\nTTL a\r\nPERSIST a\r\nTTL a\r\nPERSIST a\r\nPERSIST nope\r\nEXPIRE nope 10\r\n"),
    ("expire options", b"SET a 1\r\nEXPIRE a 100 XX\r\nEXPIRE a 100 NX\r\nEXPIRE a 200 NX\r\nEXPIRE a 50 GT\r\nEXPIRE a 500 GT\r\nEXPIRE a 1000 LT\r\nEXPIRE a 10 LT\r\nTTL a\r\nEXPIRE a 10 NX XX\r\nEXPIRE a 10 GT LT\r\nEXPIRE a 10 BOGUS\r\n"),
    ("expire errors", b"SET a 1\r\nEXPIRE a abc\r\nEXPIRE a 9223372036854775807\r\nPEXPIRE a 9223372036854775807\r\n"),
    ("expire past deletes", b"SET a 1\r\nEXPIRE a -1\r\nEXISTS a\r\nSET b 1\r\nPEXPIRE b 0\r\nGET b\r\n"),
    ("pexpire", b"SET a 1\r\nPEXPIRE a 100000\r\nTTL a\r\n"),
    ("keys", b"MSET hello 1 hallo 2 hxllo 3 world 4 \"h*\" 5\r\nKEYS h?llo\r\nKEYS h[ae]llo\r\nKEYS h[^e]llo\r\nKEYS h[a-b]llo\r\nKEYS w*\r\nKEYS h\\\\*\r\nKEYS nothing*\r\n"),
    ("dbsize flushall", b"MSET a 1 b 2\r\nDBSIZE\r\nFLUSHALL\r\nDBSIZE\r\nFLUSHALL ASYNC\r\nFLUSHALL SYNC\r\nFLUSHALL BOGUS\r\nDBSIZE x\r\n"),
    ("unknown command", b"NOSUCH\r\nNOSUCH a b\r\n*2\r\n$6\r\nnosuch\r\n$3\r\na\r\nb\r\n"),
    ("case insensitive", b"sEt A 1\r\ngEt A\r\nget a\r\n"),
    ("inline quotes", b"SET \"a b\" 'c d'\r\nGET \"a b\"\r\nSET q \"x\\x41\\ny\"\r\nGET q\r\n"),
    ("config get", b"CONFIG GET save\r\nCONFIG GET appendonly\r\nCONFIG GET nosuchparameter\r\n"),
    ("empty requests", b"\r\n*0\r\nPING\r\n"),
    ("quit", b"PING\r\nQUIT\r\nPING\r\n"),
    ("protocol error multibulk", b"PING\r\n*abc\r\nPING\r\n"),
    ("protocol error bulk length", b"*1\r\n$-5\r\n"),
    ("protocol error expected dollar", b"*1\r\n:1\r\n"),
    ("protocol error unbalanced quotes", b"SET \"a 1\r\n"),
    ("protocol error bulk too big", b"*2\r\n$3\r\nGET\r\n$536870913\r\n"),
]

def exchange(port, payload):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        assert s.recv(100) == b"+OK\r\n"
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
        except (ConnectionResetError, socket.timeout):
            pass
        return b"".join(chunks)

def normalize(name, reply):
    # KEYS order is the dictionary's: compare as a sorted set of lines.
    return reply

def swift_literal(data):
    out = []
    for b in data:
        c = chr(b)
        if c == "\\": out.append("\\\\")
        elif c == '"': out.append('\\"')
        elif c == "\r": out.append("\\r")
        elif c == "\n": out.append("\\n")
        elif 32 <= b < 127: out.append(c)
        else: out.append("\\u{%x}" % b)
    return '"' + "".join(out) + '"'

def main(argv):
    if argv[1] == "record":
        port = int(argv[2])
        print("// GoldenReplies.swift: generated by tools/redis-golden.py from Redis 7.0.15.")
        print("// Each request's bytes, and the exact bytes Redis sent back. Do not edit by hand.")
        print("// (Strings hold one Unicode scalar per byte: see `bytes(_:)` in the tests.)")
        print("let goldenReplies: [(name: String, request: String, reply: String)] = [")
        for name, payload in CASES:
            reply = exchange(port, payload)
            print(f"    ({swift_literal(name.encode())}, {swift_literal(payload)}, {swift_literal(reply)}),")
        print("]")
    elif argv[1] == "compare":
        redis, kvd = int(argv[2]), int(argv[3])
        failures = 0
        for name, payload in CASES:
            a, b = exchange(redis, payload), exchange(kvd, payload)
            if name == "keys":
                a, b = sorted(a.split(b"\r\n")), sorted(b.split(b"\r\n"))
            if a != b:
                failures += 1
                print(f"DIFF {name}\n  redis: {a!r}\n  kvd:   {b!r}")
        print(f"{len(CASES) - failures} passed, {failures} failed")
        return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
