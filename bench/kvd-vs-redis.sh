#!/usr/bin/env bash
# kvd against a real redis-server, in the same run (bench/kvd-vs-redis.py:
# kvd with --io-threads 0 and 1, and redis-server, in alternating rounds;
# throughput, p50, p99, the server's CPU per request and how busy the
# client was), then the same for hashes, lists, sets and
# sorted sets (KVD_BENCH=collections), kvd's heap allocations per request
# (kvd-allocations), and the memory per element of those types against
# redis-server's (bench/collection-memory.py). Not part of CI: a comparison on a shared machine; only
# the ratios of one run mean anything. Prints markdown; the raw lines go to
# bench/kvd-latest.txt (and the snapshots' to bench/kvd-persistence-latest.txt)
# and the picture to Sources/MainLoop/MainLoop.docc/Resources/bench-kvd.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N=${N:-200000}
for p in redis-server redis-tools; do
  dpkg -s "$p" >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; }
done
swift build -c release --product kvd >/dev/null
swift build -c release --product kvd-allocations >/dev/null
python3 bench/kvd-vs-redis.py .build/release/kvd "$ROUNDS" "$N"
echo
echo "Hashes, lists, sets and sorted sets:"
echo
KVD_BENCH=collections python3 bench/kvd-vs-redis.py .build/release/kvd "$ROUNDS" "$N"
echo
echo "With the append-only file (--appendonly yes --appendfsync everysec, both servers):"
echo
KVD_BENCH=aof python3 bench/kvd-vs-redis.py .build/release/kvd "$ROUNDS" "$N"
echo
echo "Snapshots of 1M keys (BGSAVE's stall, load time):"
echo
# redis-py: make py-deps
.build/venv/bin/python bench/persistence-bench.py .build/release/kvd | tee bench/kvd-persistence-latest.txt
echo
echo "Heap allocations per request in steady state (kvd-allocations, release build):"
echo
.build/release/kvd-allocations | sed 's/^kvd /- /'
echo
echo "Memory per element of hashes, lists, sets and sorted sets (bench/collection-memory-latest.md):"
echo
python3 bench/collection-memory.py .build/release/kvd | tee bench/collection-memory-latest.md
python3 bench/plot.py kvd bench/kvd-latest.txt Sources/MainLoop/MainLoop.docc/Resources/bench-kvd.svg
