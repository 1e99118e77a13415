#!/usr/bin/env bash
# kvd against a real redis-server, in the same run, with redis-benchmark
# (-c 50, with and without -P 16, -t set,get,incr). Not part of CI: a
# throughput comparison on a shared machine; only the ratios of one run mean
# anything. Prints a markdown table; the raw output goes to bench/kvd-latest.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200000}
ROUNDS=${ROUNDS:-3}
for p in redis-server redis-tools; do
  dpkg -s "$p" >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; }
done
swift build -c release --product kvd >/dev/null
KVD_PORT=6390 REDIS_PORT=6391
.build/release/kvd --port $KVD_PORT >/dev/null 2>&1 &
KVD=$!
redis-server --port $REDIS_PORT --save "" --appendonly no >/dev/null 2>&1 &
REDIS=$!
trap 'kill $KVD $REDIS 2>/dev/null || true' EXIT
sleep 1
: > bench/kvd-latest.txt
for ((round = 1; round <= ROUNDS; round++)); do
  for pipeline in 1 16; do
    for target in kvd:$KVD_PORT redis:$REDIS_PORT; do
      name=${target%%:*} port=${target##*:}
      redis-benchmark -p "$port" -c 50 -n "$N" -P "$pipeline" -t set,get,incr -q 2>/dev/null | tr '\r' '\n' \
        | grep 'requests per second' | sed "s/^/$name P=$pipeline /" >> bench/kvd-latest.txt
    done
  done
done
python3 - bench/kvd-latest.txt "$(nproc)" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) P=(\d+) (\w+): ([\d.]+) requests per second", line.strip())
    if m:
        name, pipeline, test, rps = m.groups()
        rows.setdefault((test, int(pipeline)), {}).setdefault(name, []).append(float(rps))
print(f"{sys.argv[2]} cores; redis-benchmark -c 50, medians of the rounds")
print()
print("| test | pipeline | kvd req/s | redis-server req/s | kvd / redis |")
print("|---|---|---|---|---|")
for (test, pipeline), by in sorted(rows.items(), key=lambda r: (r[0][1], r[0][0])):
    k, r = statistics.median(by["kvd"]), statistics.median(by["redis"])
    print(f"| {test} | {pipeline} | {k:,.0f} | {r:,.0f} | {k / r:.2f}x |")
PY
python3 bench/plot.py kvd bench/kvd-latest.txt bench/kvd-latest.svg
