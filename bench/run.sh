#!/usr/bin/env bash
# Runs mainloop-bench in the same rounds as the peer programs of
# ../shared/bench-peers (when that folder is there) and prints the table of
# medians with ratios to mainloop. Only ratios from one run mean anything on
# a shared machine. Output: bench/latest.txt (raw), bench/latest.md (tables).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
M=${M_mainloop:-8000000}
PEERS=${PEERS_DIR:-../shared/bench-peers}
swift build -c release --product mainloop-bench >/dev/null
BENCH="$PWD/.build/release/mainloop-bench"
EXTRA="$BENCH $M all --histogram $PWD/bench/queue-delay.txt && $BENCH $M nolatency && $BENCH $M latency && $BENCH $M bounded && $BENCH $M mainactor-executor && $BENCH $M invocation-pairs 10"
if [ -x "$PEERS/run.sh" ]; then
  ROUNDS=$ROUNDS EXTRA_CMD="$EXTRA" "$PEERS/run.sh" | tee bench/latest.txt
  COMPARE="$PEERS/compare.py"
else
  echo "NOTE $PEERS not found: measuring mainloop alone" | tee bench/latest.txt
  for ((round = 1; round <= ROUNDS; round++)); do bash -c "$EXTRA" | tee -a bench/latest.txt; done
  COMPARE=""
fi
{
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), ROUNDS=$ROUNDS, medians."
  echo
  if [ -n "$COMPARE" ]; then python3 "$COMPARE" bench/latest.txt --vs mainloop; echo; fi
  python3 - bench/latest.txt <<'PY'
import re, statistics, sys
values = {}
for line in open(sys.argv[1]):
    m = re.match(r"FIGURE peer=(\S+) metric=(\S+) value=(\S+) unit=(\S+)", line)
    if m:
        peer, metric, value, unit = m.groups()
        values.setdefault((metric, peer, unit), []).append(float(value))
print("| figure | peer | median |")
print("|---|---|---|")
for (metric, peer, unit), v in sorted(values.items()):
    print(f"| {metric} | {peer} | {statistics.median(v):.3f} {unit} |")
PY
  echo
  python3 bench/spread.py bench/latest.txt
} | tee bench/latest.md
python3 bench/plot.py peers bench/latest.txt Sources/MainLoop/MainLoop.docc/Resources/bench-peers.svg
python3 bench/plot.py histogram bench/queue-delay.txt Sources/MainLoop/MainLoop.docc/Resources/bench-queue-delay.svg
