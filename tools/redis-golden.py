#!/usr/bin/env python3
"""Record what a real Redis 7 answers to kvd's command corpus, byte for byte.

usage: redis-golden.py record PORT > Tests/KVServerTests/GoldenReplies.swift
       redis-golden.py compare PORT_REDIS PORT_KVD      (prints every difference)

Each case is sent on a fresh connection after FLUSHALL; time-dependent
replies (TTL) use values that cannot drift within a test run. A case whose
name starts with "resp3 " runs on a connection that sent HELLO 3 first (its
reply, which holds the connection's id, is read and not compared).
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
    # Redis 7.0's other string commands.
    ("setnx setex psetex", b"SETNX a 1\r\nSETNX a 2\r\nGET a\r\nSETEX b 100 v\r\nTTL b\r\nSETEX b 0 v\r\nSETEX b x v\r\nSETEX b 9223372036854775807 v\r\nPSETEX c 100000 v\r\nTTL c\r\nPSETEX c -1 v\r\nSETNX a\r\n"),
    ("msetnx", b"MSETNX a 1 b 2\r\nMSETNX b 3 c 4\r\nMGET a b c\r\nMSETNX a\r\nMSETNX a 1 b\r\n"),
    ("getex getdel", b"SET a 1\r\nGETEX a EX 100\r\nTTL a\r\nGETEX a PERSIST\r\nTTL a\r\nGETEX a PX 100000\r\nTTL a\r\nGETEX a EX 10 PERSIST\r\nGETEX a BOGUS\r\nGETEX a EX 0\r\nGETEX nope\r\nGETEX a EXAT 1\r\nEXISTS a\r\nSET b 2\r\nGETDEL b\r\nGETDEL b\r\n"),
    ("setrange getrange", b"SETRANGE a 5 hello\r\nGET a\r\nSETRANGE a 0 HE\r\nGETRANGE a 0 -1\r\nGETRANGE a 5 7\r\nGETRANGE a -3 -1\r\nGETRANGE a 10 5\r\nGETRANGE a -1 -5\r\nGETRANGE a 0 1000\r\nSUBSTR a 0 1\r\nGETRANGE nope 0 10\r\nSETRANGE a -1 x\r\nSETRANGE a 536870911 xx\r\nSETRANGE n 0 \"\"\r\nEXISTS n\r\nSETRANGE a 2 \"\"\r\nGETRANGE a x 1\r\n"),
    ("setbit getbit", b"SETBIT b 7 1\r\nSETBIT b 7 0\r\nSETBIT b 100 1\r\nGETBIT b 100\r\nGETBIT b 99999\r\nGETBIT nope 0\r\nSTRLEN b\r\nSETBIT b -1 1\r\nSETBIT b 1 2\r\nSETBIT b 1 x\r\nSETBIT b 4294967296 1\r\nGETBIT b -1\r\n"),
    ("bitcount", b"SET f foobar\r\nBITCOUNT f\r\nBITCOUNT f 0 0\r\nBITCOUNT f 1 1\r\nBITCOUNT f 1 1 BYTE\r\nBITCOUNT f 5 30 BIT\r\nBITCOUNT f -2 -1\r\nBITCOUNT f -1 -2\r\nBITCOUNT f 0\r\nBITCOUNT f 0 1 BOGUS\r\nBITCOUNT f x 1\r\nBITCOUNT nope\r\n"),
    ("bitpos", b"SET p \"\\xff\\xf0\\x00\"\r\nBITPOS p 0\r\nSET q \"\\x00\\xff\\xf0\"\r\nBITPOS q 1 0\r\nBITPOS q 1 2\r\nBITPOS q 1 2 -1 BYTE\r\nBITPOS q 1 7 15 BIT\r\nBITPOS q 0 1 1\r\nBITPOS q 0 9 12 BIT\r\nSET r \"\\xff\\xff\"\r\nBITPOS r 0\r\nBITPOS r 0 0 -1\r\nBITPOS r 0 0\r\nBITPOS nope 0\r\nBITPOS nope 1\r\nBITPOS q 2\r\nBITPOS q 1 0 1 BOGUS\r\n"),
    ("lcs", b"MSET a ohmytext b mynewtext\r\nLCS a b\r\nLCS a b LEN\r\nLCS a b IDX\r\nLCS a b IDX MINMATCHLEN 4 WITHMATCHLEN\r\nLCS a b LEN IDX\r\nLCS a b BOGUS\r\nLCS a nope\r\nLCS a b MINMATCHLEN x\r\n"),
    ("incrbyfloat", b"SET a 10.50\r\nINCRBYFLOAT a 0.1\r\nINCRBYFLOAT a -5\r\nINCRBYFLOAT a 5.0e3\r\nINCRBYFLOAT b 3.0e-2\r\nINCRBYFLOAT a abc\r\nINCRBYFLOAT a \" 1\"\r\nSET s hello\r\nINCRBYFLOAT s 1\r\nINCRBYFLOAT a inf\r\nSET z 0\r\nINCRBYFLOAT z -0.0\r\nINCRBYFLOAT n 1e10\r\nSET e 1 EX 100\r\nINCRBYFLOAT e 1.5\r\nTTL e\r\n"),
    # Keys.
    ("rename", b"SET a 1\r\nRENAME a b\r\nGET b\r\nRENAME nope c\r\nRENAME b b\r\nSET c 2\r\nRENAMENX b c\r\nRENAMENX b d\r\nEXISTS b d\r\nRENAMENX d d\r\nRENAMENX nope x\r\nSET e 1 EX 100\r\nRENAME e f\r\nTTL f\r\nRENAME f c\r\nGET c\r\nTTL c\r\n"),
    ("copy", b"SET a 1\r\nCOPY a b\r\nCOPY a b\r\nCOPY a b REPLACE\r\nCOPY a a\r\nCOPY a a DB 1\r\nCOPY a x DB 16\r\nCOPY a x DB y\r\nCOPY a x BOGUS\r\nCOPY nope x\r\nSET t 1 EX 100\r\nCOPY t u\r\nTTL u\r\nSELECT 1\r\nGET a\r\n"),
    ("move", b"SET a 1\r\nMOVE a 1\r\nEXISTS a\r\nSELECT 1\r\nGET a\r\nMOVE a 1\r\nMOVE nope 0\r\nMOVE a 16\r\nMOVE a x\r\nSET a 2\r\nSELECT 0\r\nSET a 3\r\nSELECT 1\r\nMOVE a 0\r\nGET a\r\n"),
    ("select swapdb flushdb", b"SELECT 1\r\nSET a 1\r\nSELECT 0\r\nGET a\r\nSWAPDB 0 1\r\nGET a\r\nSWAPDB 0 0\r\nSELECT 16\r\nSELECT -1\r\nSELECT x\r\nSWAPDB 0 x\r\nSWAPDB x 0\r\nSWAPDB 0 16\r\nDBSIZE\r\nFLUSHDB\r\nDBSIZE\r\nFLUSHDB BOGUS\r\nSELECT 1\r\nDBSIZE\r\nSELECT 9\r\nSET k v\r\nFLUSHALL\r\nDBSIZE\r\n"),
    ("unlink touch type", b"MSET a 1 b 2\r\nTOUCH a b c\r\nTYPE a\r\nTYPE c\r\nUNLINK a c\r\nEXISTS a b\r\nUNLINK\r\n"),
    ("expireat expiretime", b"SET a 1\r\nEXPIREAT a 4102444800\r\nEXPIRETIME a\r\nPEXPIRETIME a\r\nPEXPIREAT a 4102444800123\r\nPEXPIRETIME a\r\nEXPIRETIME a\r\nSET b 1\r\nEXPIRETIME b\r\nPEXPIRETIME b\r\nEXPIRETIME nope\r\nEXPIREAT b 1\r\nEXISTS b\r\nSET c 1\r\nEXPIRE c 9223370399119966\r\nEXPIREAT c 9223372036854775807\r\nPEXPIREAT c 9223372036854775807\r\nEXPIREAT c 4102444800 NX\r\nEXPIREAT c 4102444900 GT\r\nEXPIRETIME c\r\n"),
    ("randomkey object", b"RANDOMKEY\r\nSET a 12345\r\nRANDOMKEY\r\nOBJECT ENCODING a\r\nSET b hello\r\nOBJECT ENCODING b\r\nSET c 0123456789012345678901234567890123456789012345\r\nOBJECT ENCODING c\r\nSET d -99\r\nOBJECT ENCODING d\r\nOBJECT ENCODING nope\r\nOBJECT FREQ a\r\nOBJECT BOGUS a\r\nOBJECT ENCODING\r\n"),
    # Transactions.
    ("multi exec", b"MULTI\r\nSET a 1\r\nINCR a\r\nGET a\r\nEXEC\r\nEXEC\r\nDISCARD\r\nMULTI\r\nMULTI\r\nDISCARD\r\nMULTI\r\nNOSUCH\r\nSET a\r\nEXEC\r\nMULTI\r\nSET a x\r\nINCR a\r\nGET a\r\nEXEC\r\nMULTI\r\nWATCH a\r\nEXEC\r\nMULTI\r\nEXEC\r\n"),
    ("watch", b"SET a 1\r\nWATCH a\r\nSET a 2\r\nMULTI\r\nGET a\r\nEXEC\r\nWATCH a\r\nMULTI\r\nGET a\r\nEXEC\r\nWATCH a\r\nUNWATCH\r\nSET a 3\r\nMULTI\r\nGET a\r\nEXEC\r\nWATCH b\r\nFLUSHALL\r\nMULTI\r\nPING\r\nEXEC\r\nWATCH a\r\nFLUSHDB\r\nMULTI\r\nPING\r\nEXEC\r\nSET e 1 PX 100000\r\nWATCH e\r\nPERSIST e\r\nMULTI\r\nPING\r\nEXEC\r\nWATCH\r\n"),
    # Connections.
    ("auth without a password", b"AUTH x\r\nAUTH default x\r\nAUTH nobody x\r\nAUTH a b c\r\nPING\r\n"),
    ("hello errors", b"HELLO 4\r\nHELLO x\r\nHELLO 2 BOGUS\r\nHELLO 2 AUTH default\r\nHELLO 2 SETNAME\r\nHELLO 3 AUTH nobody x\r\nHELLO 2 SETNAME \"a b\"\r\n"),
    ("client names", b"CLIENT GETNAME\r\nCLIENT SETNAME worker\r\nCLIENT GETNAME\r\nCLIENT SETNAME \"a b\"\r\nCLIENT SETNAME \"\"\r\nCLIENT GETNAME\r\nCLIENT BOGUS\r\nCLIENT GETNAME x\r\nCLIENT KILL 1.2.3.4:5\r\nCLIENT KILL ID 0\r\nCLIENT KILL ID 999999 SKIPME no\r\nCLIENT KILL BOGUS x\r\nCLIENT KILL ID\r\nCLIENT\r\n"),
    ("function flush", b"FUNCTION FLUSH\r\nFUNCTION FLUSH ASYNC\r\nFUNCTION FLUSH SYNC\r\n"),
    ("reset", b"SELECT 1\r\nSET a 1\r\nMULTI\r\nRESET\r\nGET a\r\nCLIENT SETNAME x\r\nRESET\r\nCLIENT GETNAME\r\n"),
    # RESP3 (the case's connection sends HELLO 3 first).
    ("resp3 nulls", b"GET nope\r\nMGET a nope\r\nSET a 1 NX\r\nSET a 1 NX\r\nSET a 2 NX GET\r\nGETEX nope\r\nGETDEL nope\r\nRANDOMKEY\r\nCLIENT GETNAME\r\nOBJECT ENCODING nope\r\n"),
    ("resp3 replies", b"SET a 1\r\nGET a\r\nINCR a\r\nINCRBYFLOAT a 1.5\r\nPING\r\nECHO x\r\nMGET a\r\nDEL a\r\nTYPE a\r\nNOSUCH\r\nEXISTS a\r\nTTL a\r\n"),
    ("resp3 config get", b"CONFIG GET save\r\nCONFIG GET nosuchparameter\r\nCONFIG GET appendonly\r\n"),
    ("resp3 exec", b"SET a 1\r\nMULTI\r\nGET a\r\nGET nope\r\nEXEC\r\nWATCH a\r\nSET a 2\r\nMULTI\r\nPING\r\nEXEC\r\n"),
    ("resp3 lcs idx", b"MSET a ohmytext b mynewtext\r\nLCS a b IDX\r\nLCS a b IDX WITHMATCHLEN\r\n"),
]

def resp(*commands):
    """Commands as RESP arrays: a script's quotes and newlines need no escaping."""
    out = b""
    for command in commands:
        out += b"*%d\r\n" % len(command)
        for argument in command:
            argument = argument.encode() if isinstance(argument, str) else argument
            out += b"$%d\r\n%s\r\n" % (len(argument), argument)
    return out

# Lua scripting (EVAL, EVALSHA, SCRIPT), each in RESP2 and in RESP3.
SCRIPT_CASES = [
    ("eval conversions", resp(
        ["EVAL", "return {1, 'two', {3, 'four'}, 3.99, -2.5, true, false, nil, 'after nil'}", "0"],
        ["EVAL", "return nil", "0"], ["EVAL", "return {}", "0"], ["EVAL", "return 1e20", "0"],
        ["EVAL", "return {ok='fine'}", "0"], ["EVAL", "return {err='CODE failed'}", "0"],
        ["EVAL", "return {ok='a\r\nb'}", "0"], ["EVAL", "return redis.status_reply('PONG')", "0"],
        ["EVAL", "return redis.error_reply('MY error')", "0"], ["EVAL", "return redis.error_reply('no code')", "0"],
        ["EVAL", "return {1, {err='E inside'}, 3}", "0"],
        ["EVAL", "return {double=3.5}", "0"], ["EVAL", "return {big_number='12345678901234567890'}", "0"],
        ["EVAL", "return {map={a=1}}", "0"], ["EVAL", "return {set={a=true}}", "0"],
        ["EVAL", "return {verbatim_string={format='txt', string='hi'}}", "0"],
        ["EVAL", "redis.setresp(3); return {true, false}", "0"])),
    ("eval keys argv", resp(
        ["EVAL", "return {KEYS[1], KEYS[2], ARGV[1], #KEYS, #ARGV}", "2", "a", "b", "c", "d"],
        ["EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"],
        ["EVAL", "return redis.call('get', KEYS[1])", "1", "k"],
        ["EVAL", "return 1", "-1"], ["EVAL", "return 1", "2", "a"], ["EVAL", "return 1", "x"],
        ["EVAL", "return 1"], ["EVALSHA", "abc"])),
    ("eval redis.call", resp(
        ["SET", "s", "abc"],
        ["EVAL", "return redis.call('incr', 's')", "0"], ["EVAL", "return redis.pcall('incr', 's')", "0"],
        ["EVAL", "return type(redis.pcall('incr', 's'))", "0"],
        ["EVAL", "local ok, e = pcall(function() redis.call('incr', 's') end); return {tostring(ok), e}", "0"],
        ["EVAL", "return redis.call('nosuch')", "0"], ["EVAL", "return redis.call('get')", "0"],
        ["EVAL", "return redis.pcall('get', 'a', 'b')", "0"], ["EVAL", "return redis.call()", "0"],
        ["EVAL", "return redis.call({})", "0"], ["EVAL", "return redis.call('multi')", "0"],
        ["EVAL", "return redis.call('eval', 'return 1', '0')", "0"],
        ["EVAL", "return redis.call('ping')", "0"], ["EVAL", "return redis.call('get', 'nope')", "0"],
        ["EVAL", "return redis.call('mget', 's', 'nope')", "0"],
        ["EVAL", "redis.call('set', 'n', 3.14159265358979); return redis.call('get', 'n')", "0"],
        ["EVAL", "redis.call('select', 1); return redis.call('set', 'other', 1)", "0"], ["EXISTS", "other"],
        ["EVAL", "redis.setresp(3); return redis.call('incrbyfloat', 'f', '1.5')", "0"],
        ["EVAL", "redis.setresp(3); local r = redis.call('incrbyfloat', 'f', '1.5'); return type(r)", "0"])),
    ("eval errors", resp(
        ["EVAL", "error('boom')", "0"], ["EVAL", "error({err='MY boom'})", "0"],
        ["EVAL", "return 'x' .. nil", "0"], ["EVAL", "return +", "0"],
        ["EVAL", "return redis.setresp(4)", "0"], ["EVAL", "redis.log(9, 'x')", "0"],
        ["EVAL", "redis.log('x')", "0"], ["EVAL", "return redis.sha1hex()", "0"],
        ["EVAL", "return redis.sha1hex('Pizza & Mandolino')", "0"])),
    ("eval sandbox", resp(
        ["EVAL", "a = 5", "0"], ["EVAL", "return a", "0"], ["EVAL", "return os", "0"],
        ["EVAL", "print('x')", "0"], ["EVAL", "dofile('x')", "0"], ["EVAL", "loadfile('x')", "0"],
        ["EVAL", "setmetatable(_G, {})", "0"], ["EVAL", "local g = getmetatable(_G); g.__index = {}", "0"],
        ["EVAL", "redis = 1", "0"], ["EVAL", "_G = {}", "0"], ["EVAL", "redis.call = 1", "0"],
        ["EVAL", "string.upper = nil", "0"], ["EVAL", "rawset(_G, 'x', 1)", "0"],
        ["EVAL", "return loadstring(string.dump(function() return 1 end))()", "0"],
        ["EVAL", "return loadstring('return 1')()", "0"],
        ["EVAL", "math.randomseed(10); return {math.random(100), math.random(5, 10)}", "0"])),
    ("evalsha script", resp(
        ["SCRIPT", "FLUSH"], ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        ["SCRIPT", "LOAD", "return 1"],
        ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "nope", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"],
        ["EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"],
        ["EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        ["SCRIPT", "LOAD", "return +"], ["SCRIPT", "FLUSH", "ASYNC"], ["SCRIPT", "FLUSH", "bogus"],
        ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"], ["SCRIPT", "KILL"],
        ["SCRIPT", "LOAD"], ["SCRIPT", "KILL", "x"], ["SCRIPT", "BOGUS"], ["SCRIPT"])),
    ("eval read-only", resp(
        ["EVAL_RO", "return redis.call('set', 'a', 'b')", "0"], ["EVAL_RO", "return redis.call('get', 'a')", "0"],
        ["EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", "0"],
        ["EVAL_RO", "#!lua\nreturn 1", "0"], ["EVAL_RO", "#!lua flags=no-writes\nreturn 2", "0"],
        ["EVAL", "#!lua flags=bogus\nreturn 1", "0"], ["EVAL", "#!foo\nreturn 1", "0"],
        ["EVAL", "#!lua", "0"], ["EVAL", "#!lua x=1\nreturn 2", "0"])),
    ("eval cjson bit", resp(
        ["EVAL", "return cjson.encode({1, 2, {a = 'x'}})", "0"], ["EVAL", "return cjson.decode('[1,{\"a\":\"x\"}]')[2].a", "0"],
        ["EVAL", "return cjson.encode({a = 1.5})", "0"], ["EVAL", "return cjson.decode('{')", "0"],
        ["EVAL", "return {bit.band(0xff, 0x0f), bit.tohex(65535), bit.bnot(0)}", "0"],
        ["EVAL", "cjson.encode = 1", "0"], ["EVAL", "bit.band = 1", "0"])),
    ("eval multi", resp(
        ["MULTI"], ["EVAL", "return redis.call('incr', KEYS[1])", "1", "n"],
        ["EVAL", "return redis.call('nosuch')", "0"], ["EVAL", "return redis.call('get', 'n')", "0"], ["EXEC"])),
]
CASES += SCRIPT_CASES + [("resp3 " + name, payload) for name, payload in SCRIPT_CASES]

def exchange(port, name, payload):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        assert s.recv(100) == b"+OK\r\n"
        if name.startswith("resp3 "):
            s.sendall(b"HELLO 3\r\n")
            hello = b""
            while not hello.endswith(b"$7\r\nmodules\r\n*0\r\n"):
                hello += s.recv(1)
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
            reply = exchange(port, name, payload)
            print(f"    ({swift_literal(name.encode())}, {swift_literal(payload)}, {swift_literal(reply)}),")
        print("]")
    elif argv[1] == "compare":
        redis, kvd = int(argv[2]), int(argv[3])
        failures = 0
        for name, payload in CASES:
            a, b = exchange(redis, name, payload), exchange(kvd, name, payload)
            if name == "keys":
                a, b = sorted(a.split(b"\r\n")), sorted(b.split(b"\r\n"))
            if a != b:
                failures += 1
                print(f"DIFF {name}\n  redis: {a!r}\n  kvd:   {b!r}")
        print(f"{len(CASES) - failures} passed, {failures} failed")
        return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
