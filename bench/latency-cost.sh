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
python3 - bench/latency-cost.txt <<'PY' | tee -a bench/latency-cost.txt
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"RESULT peer=mainloop_(no)?latency metric=(throughput_p\d) value=(\d+)", line)
    if m:
        runs.setdefault((m.group(2), "off" if m.group(1) else "on"), []).append(int(m.group(3)))
for metric in sorted({metric for metric, _ in runs}):
    on, off = runs[(metric, "on")], runs[(metric, "off")]
    ratios = [a / b for a, b in zip(on, off)]
    print(f"# {metric}: on {statistics.median(on) / 1e6:.2f} M/s, off {statistics.median(off) / 1e6:.2f} M/s "
          f"(medians), on/off {statistics.median(on) / statistics.median(off):.3f}; per pair "
          f"{min(ratios):.2f} to {max(ratios):.2f}, median {statistics.median(ratios):.3f}")
PY
