#!/usr/bin/env bash
# What the latency figures cost: mainloop-bench with the default main loop
# (latency sampling on) and with latencyStats: false, as separate processes,
# alternating, PAIRS times; the medians of each and of the per-pair ratios.
# One process lands now and then in a slow mode (Performance, "Two speeds"),
# so a figure of one pair means little and the medians are what to read.
# Output: bench/latency-cost.txt (raw RESULT lines, then the summary).
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-10}
M=${M:-8000000}
swift build -c release --product mainloop-bench >/dev/null
BENCH=.build/release/mainloop-bench
{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores: $PAIRS alternating pairs of 'mainloop-bench $M latency' and '... nolatency'"
  for ((pair = 1; pair <= PAIRS; pair++)); do
    "$BENCH" "$M" latency | grep '^RESULT'
    "$BENCH" "$M" nolatency | grep '^RESULT'
  done
} > bench/latency-cost.txt
python3 bench/alternating.py latency-cost bench/latency-cost.txt | tee -a bench/latency-cost.txt
# The same question inside one process (mainloop-bench M latency-pairs N):
# two loops, figures on and off, the same posts to each in turn, so a moment
# of the machine falls on both halves of a pair. Output: bench/latency-pairs.txt.
IN_PROCESS=${IN_PROCESS:-20}
{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores: mainloop-bench $M latency-pairs $IN_PROCESS (one process)"
  "$BENCH" "$M" latency-pairs "$IN_PROCESS" | grep -E '^(RESULT|NOTE latency|FIGURE|FAIL)' || true
} > bench/latency-pairs.txt
if grep -q '^FAIL' bench/latency-pairs.txt || ! grep -q '^FIGURE' bench/latency-pairs.txt; then
  echo "latency-cost: the in-process pairs failed:" >&2
  cat bench/latency-pairs.txt >&2
  exit 1
fi
tail -2 bench/latency-pairs.txt
