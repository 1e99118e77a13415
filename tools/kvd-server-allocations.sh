#!/usr/bin/env bash
# kvd-server-allocations.sh: heap allocations per request of a real kvd
# server (--io-threads 0), sockets, loop and connection included, which
# kvd-allocations leaves out: kvd under valgrind, redis-benchmark sending
# 10,000 and then 60,000 requests in two runs, valgrind's "total heap usage"
# of each, the difference over the 50,000 requests between them (start-up,
# the clients' connections and the warm-up cancel).
#
# Why: kvd-allocations drives the parser and the dispatcher the way a
# connection does, and counted 0, while the real connection made 2 a batch
# (2 per request at -P 1): it passed its batch on as a copy, and emptying the
# batch while the copy lived allocated new arrays. This counts what the
# server does.
#
# usage: kvd-server-allocations.sh KVD_BINARY [--check]
#   prints one line per test (GET, SET, INCR at -P 1 and -P 16); with --check,
#   exits 1 when any is 0.05 allocations per request or more.
set -uo pipefail
KVD=$(realpath "$1")
CHECK=${2:-}
PORT=${KVD_ALLOC_PORT:-6488}
command -v valgrind >/dev/null || { echo "kvd-server-allocations: valgrind is needed"; exit 2; }

# Total heap allocations of a kvd that served `requests` of `test` at depth `depth`.
allocations() {
  local requests=$1 test=$2 depth=$3 dir
  dir=$(mktemp -d)
  (cd "$dir" && exec valgrind --tool=memcheck --leak-check=no --log-file="$dir/valgrind.log" \
    "$KVD" --port "$PORT" --io-threads 0 --save "" >/dev/null 2>&1) &
  local server=$!
  for _ in $(seq 300); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
  redis-benchmark -p "$PORT" -c 10 -n 2000 -P "$depth" -t "$test" -q >/dev/null 2>&1
  redis-benchmark -p "$PORT" -c 10 -n "$requests" -P "$depth" -t "$test" -q >/dev/null 2>&1
  redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
  wait "$server"
  local total
  total=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$dir/valgrind.log" | tr -d ,)
  rm -rf "$dir"
  [ -n "$total" ] || { echo "kvd-server-allocations: no heap summary from valgrind" >&2; exit 2; }
  echo "$total"
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
