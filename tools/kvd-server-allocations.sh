#!/usr/bin/env bash
# kvd-server-allocations.sh: heap allocations per request of a real kvd
# server with --io-threads 0 (the default on up to 2 cores), sockets, loop
# and connection included, which kvd-allocations leaves out: kvd under
# valgrind, redis-benchmark sending 10,000 and then 60,000 requests in two
# runs, valgrind's "total heap usage" of each, the difference over the
# 50,000 requests between them (start-up, the clients' connections and the
# warm-up cancel). GET reads a key the warm-up SET stored (a hit).
#
# Why: kvd-allocations drives the parser and the dispatcher the way a
# connection does, and counted 0, while the real connection made 2 a batch
# (2 per request at -P 1): it passed its batch on as a copy, and emptying the
# batch while the copy lived allocated new arrays. This counts what the
# server does. Each run must show that kvd served every request (its
# total_commands_processed), so a server that did not start, or a port that
# belongs to another, fails the check instead of passing it.
#
# usage: kvd-server-allocations.sh KVD_BINARY [--check]
#   prints one line per test (GET, SET, INCR at -P 1 and -P 16); with --check,
#   exits 1 when any is 0.05 allocations per request or more. About 80 s.
set -uo pipefail
KVD=$(realpath "$1")
CHECK=${2:-}
command -v valgrind >/dev/null || { echo "kvd-server-allocations: valgrind is needed"; exit 2; }
WORK=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

fail() { echo "kvd-server-allocations: $*" >&2; exit 2; }

# Total heap allocations of a kvd that served `requests` of `test` at depth `depth`.
allocations() {
  local requests=$1 test=$2 depth=$3 dir="$WORK/$1-$2-$3"
  mkdir -p "$dir"
  # kvd's executable has its own malloc (it counts its heap, CHeapAccounting):
  # somalloc=NONE has valgrind replace the executable's, as it does libc's.
  (cd "$dir" && exec valgrind --tool=memcheck --leak-check=no --soname-synonyms=somalloc=NONE \
    --log-file="$dir/valgrind.log" \
    "$KVD" --port 0 --io-threads 0 --save "" >"$dir/kvd.log" 2>&1) &
  SERVER=$!
  local port=
  for _ in $(seq 600); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/kvd.log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$SERVER" 2>/dev/null || fail "kvd exited under valgrind: $(cat "$dir/kvd.log")"
    sleep 0.1
  done
  [ -n "$port" ] || fail "kvd did not start under valgrind within 60 s: $(cat "$dir/kvd.log")"
  local bench=(timeout 120 redis-benchmark -p "$port" -c 10 -P "$depth" -q)
  "${bench[@]}" -n 2000 -t "set,$test" >/dev/null 2>&1 || fail "the warm-up of $test failed"
  "${bench[@]}" -n "$requests" -t "$test" >/dev/null 2>&1 || fail "redis-benchmark $test -P $depth failed"
  local served
  served=$(timeout 10 redis-cli -p "$port" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p')
  [ -n "$served" ] && [ "$served" -ge "$requests" ] || fail "kvd served ${served:-no} commands of $requests ($test)"
  timeout 10 redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
  timeout 60 tail --pid="$SERVER" -f /dev/null || fail "kvd did not exit after SHUTDOWN"
  wait "$SERVER"
  SERVER=
  local totals
  totals=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$dir/valgrind.log" | tr -d ,)
  [ "$(echo "$totals" | wc -w)" = 1 ] || fail "expected one heap summary from valgrind, got '$totals'"
  echo "$totals"
}

status=0
for depth in 1 16; do
  for test in get set incr; do
    small=$(allocations 10000 "$test" "$depth") || exit 2
    large=$(allocations 60000 "$test" "$depth") || exit 2
    per=$(awk -v a="$small" -v b="$large" 'BEGIN { printf "%.3f", (b - a) / 50000 }')
    verdict=""
    if awk -v p="$per" 'BEGIN { exit !(p >= 0.05) }'; then verdict=" (over 0.05)"; status=1; fi
    echo "kvd server allocations_per_request test=$test pipeline=$depth value=$per$verdict"
  done
done
[ "$CHECK" = "--check" ] && exit $status
exit 0
