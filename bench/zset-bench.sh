#!/usr/bin/env bash
# Sorted-set throughput of one server: a 1,000-member sorted set, then
# redis-benchmark -P 16 (200,000 requests each) on ZADD of random members,
# ZRANGE 0 99 WITHSCORES, ZRANGEBYSCORE 100 300, ZSCORE and ZRANK.
# Not part of CI: compare binaries (or redis-server) alternating, in one run.
# usage: bench/zset-bench.sh BINARY|redis PORT
set -uo pipefail
B=$1; P=$2
if [ "$B" = redis ]; then
  redis-server --port "$P" --save "" --appendonly no >/dev/null 2>&1 &
else
  "$B" --port "$P" --save "" >/dev/null 2>&1 &
fi
pid=$!
for _ in $(seq 1 50); do redis-cli -p "$P" ping >/dev/null 2>&1 && break; sleep 0.1; done
for i in $(seq 0 999); do echo "ZADD z $i m$i"; done | redis-cli -p "$P" >/dev/null
out=""
for t in "ZADD z2 __rand_int__ m__rand_int__" "ZRANGE z 0 99 WITHSCORES" "ZRANGEBYSCORE z 100 300" "ZSCORE z m500" "ZRANK z m777"; do
  # shellcheck disable=SC2086
  r=$(redis-benchmark -p "$P" -q -n 200000 -P 16 -r 1000000 $t 2>/dev/null | tr '\r' '\n' | grep -o "[0-9.]* requests per second" | tail -1 | cut -d' ' -f1)
  out="$out | ${t%% *} ${t#* } $r"
done
kill "$pid"; wait "$pid" 2>/dev/null
echo "$B $out"
