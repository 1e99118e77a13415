#!/usr/bin/env bash
# Smoke test of kvd with the real Redis clients: redis-cli commands, a
# short redis-benchmark and then its whole default test list, each of which
# must finish with no errors (a correctness check, not a timing). Every step is bounded: a hung kvd or client fails the
# script, naming the step, instead of hanging CI.
# Usage: tools/kvd-smoke.sh [path/to/kvd]
set -euo pipefail
KVD=${1:-.build/debug/kvd}
LOG=$(mktemp)
# No snapshot: nothing loaded from, or saved to, the working directory.
"$KVD" --port 0 --io-threads 2 --save "" --dir "${TMPDIR:-/tmp}" --dbfilename "kvd-smoke-$$.rdb" >"$LOG" 2>&1 &
PID=$!
trap 'kill -9 $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 100); do grep -q "serving on" "$LOG" && break; sleep 0.05; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$LOG" | head -1)
[ -n "$PORT" ] || { echo "kvd did not start:"; cat "$LOG"; exit 1; }
cli() { timeout 10 redis-cli -p "$PORT" "$@" || { echo "FAIL: redis-cli $* failed or hung (exit $?)" >&2; exit 1; }; }
expect() { local want=$1; shift; local got; got=$(cli "$@"); [ "$got" = "$want" ] || { echo "FAIL: redis-cli $* -> '$got', expected '$want'"; exit 1; }; }
expect PONG ping
expect OK set greeting hello
expect hello get greeting
expect 1 incr visits
expect 11 incrby visits 10
expect 1 exists greeting
expect "greeting" keys 'gree*'
expect OK set temp x EX 100
# 100, or 99 if over half a second passed between the two redis-cli processes (TTL rounds).
TTL=$(cli ttl temp)
[ "$TTL" = 100 ] || [ "$TTL" = 99 ] || { echo "FAIL: redis-cli ttl temp -> '$TTL', expected 100 (or 99)"; exit 1; }
expect 2 del greeting temp
expect 1 dbsize
cli info | grep -q '^connected_clients:' || { echo "FAIL: INFO has no connected_clients"; exit 1; }
echo "redis-cli: ok"
OUT=$(timeout 120 redis-benchmark -p "$PORT" -t set,get,incr -n 20000 -q 2>&1) || { echo "FAIL: redis-benchmark failed or hung (exit $?)"; echo "$OUT"; exit 1; }
echo "$OUT"
if echo "$OUT" | grep -qiE "err|error"; then echo "FAIL: redis-benchmark reported errors"; exit 1; fi
[ "$(echo "$OUT" | grep -c 'requests per second')" = 3 ] || { echo "FAIL: redis-benchmark did not finish all three tests"; exit 1; }
# redis-benchmark's default test list (strings, lists, sets, hashes, sorted
# sets, LRANGE, MSET), small: every test must finish, with no error.
OUT=$(timeout 120 redis-benchmark -p "$PORT" -n 2000 -q 2>&1 | tr '\r' '\n' | grep 'requests per second') || { echo "FAIL: redis-benchmark's default tests failed or hung"; echo "$OUT"; exit 1; }
echo "$OUT"
if echo "$OUT" | grep -qiE "err|error"; then echo "FAIL: redis-benchmark's default tests reported errors"; exit 1; fi
for test in PING_INLINE PING_MBULK SET GET INCR LPUSH RPUSH LPOP RPOP SADD HSET SPOP ZADD ZPOPMIN "LPUSH (needed to benchmark LRANGE)" LRANGE_100 LRANGE_300 LRANGE_500 LRANGE_600 MSET; do
    echo "$OUT" | grep -qF "$test" || { echo "FAIL: redis-benchmark's default test $test did not finish"; exit 1; }
done
[ "$(echo "$OUT" | wc -l)" = 20 ] || { echo "FAIL: redis-benchmark's default list: $(echo "$OUT" | wc -l) tests finished, not 20"; exit 1; }
kill -TERM "$PID"
# Bounded: give kvd 10 s to exit, then kill it and fail. The `wait` below
# only reaps a process that has already exited.
for _ in $(seq 200); do kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$PID" 2>/dev/null; then echo "FAIL: kvd did not exit within 10 s of SIGTERM"; kill -9 "$PID"; cat "$LOG"; exit 1; fi
STATUS=0; wait "$PID" || STATUS=$?
[ "$STATUS" = 0 ] || { echo "FAIL: kvd exited with $STATUS after SIGTERM"; cat "$LOG"; exit 1; }
echo "kvd smoke: 3 passed, 0 failed"
