#!/usr/bin/env bash
# Is there a second mode? PAIRS fresh processes of MainLoop's one-producer
# throughput (mainloop-bench M throughput) alternating with libevent's
# event_active peer (../shared/bench-peers, built by its run.sh into
# /tmp/peers-build), each process's posts/s, and how far each is from its
# side's median. Output: bench/modes-latest.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-10}
M=${M:-8000000}
PEER=${PEER:-/tmp/peers-build/libevent_active}
swift build -c release --product mainloop-bench >/dev/null
[ -x "$PEER" ] || { echo "no $PEER: run ../shared/bench-peers/run.sh (make bench) first" >&2; exit 1; }
{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores: $PAIRS alternating pairs, mainloop-bench $M throughput and $(basename "$PEER") $M"
  for ((pair = 1; pair <= PAIRS; pair++)); do
    .build/release/mainloop-bench "$M" throughput | grep '^RESULT'
    "$PEER" "$M" | grep '^RESULT' | grep throughput_p1
  done
} > bench/modes-latest.txt
python3 bench/alternating.py modes bench/modes-latest.txt | tee -a bench/modes-latest.txt
