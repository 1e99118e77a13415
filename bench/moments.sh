#!/usr/bin/env bash
# Is a second mode a process's or a moment's? SERIES times, one after the
# other: the machine's cache-line ping-pong between two threads
# (bench/pingpong.c, REPEATS windows of 100 ms, in round trips per second),
# MainLoop's one-producer throughput REPEATS times in one process
# (mainloop-bench M throughput mainloop --repeat REPEATS), and libevent's
# event_active peer REPEATS times in one process (the peer from
# ../shared/bench-peers, built here with a driver that repeats its
# one-producer throughput: the only change). A figure that moves between
# the repetitions of one process is not the process's (its memory layout,
# its threads' CPUs); the ping-pong moving says the machine's core-to-core
# speed moved. Output: bench/moments-latest.txt, then the spreads.
set -euo pipefail
cd "$(dirname "$0")/.."
SERIES=${SERIES:-8}
REPEATS=${REPEATS:-8}
M=${M:-2000000}
PEERS=${PEERS_DIR:-../shared/bench-peers}
OUT=.build/moments
mkdir -p "$OUT"
swift build -c release --product mainloop-bench >/dev/null
gcc -O2 -Wall -pthread bench/pingpong.c -o "$OUT/pingpong"
[ -f "$PEERS/libevent.c" ] || { echo "no $PEERS/libevent.c" >&2; exit 1; }
cp "$PEERS"/*.h "$PEERS/libevent.c" "$OUT/"
python3 - "$OUT/bench.h" "$REPEATS" <<'PY'
import sys
path, repeats = sys.argv[1], int(sys.argv[2])
text = open(path).read()
old = '  result("throughput_p1", throughput(1, M), "ops_per_s");\n'
assert old in text, "bench.h's driver changed: update bench/moments.sh"
start = text.index(old)
end = text.index("  peer_post(stop_task, NULL);", start)
text = (text[:start] + f'  for (int r = 0; r < {repeats}; r++) result("throughput_p1", throughput(1, M), "ops_per_s");\n'
        + text[end:])
open(path, "w").write(text)
PY
gcc -O2 -pthread -DUSE_EVENT_ACTIVE "$OUT/libevent.c" -o "$OUT/libevent_active_repeat" \
  $(pkg-config --cflags --libs libevent_pthreads) -lm
millions() { grep -o 'value=[0-9.]*' | sed 's/value=//' | awk '{printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1e6} END {print ""}'; }
{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores: $SERIES series of pingpong (M round trips/s, $REPEATS x 100 ms),"
  echo "# mainloop-bench $M throughput --repeat $REPEATS and libevent_active $M repeated $REPEATS times (M posts/s)"
  for ((series = 1; series <= SERIES; series++)); do
    echo "pingpong $("$OUT/pingpong" "$REPEATS")"
    echo "mainloop $(.build/release/mainloop-bench "$M" throughput mainloop --repeat "$REPEATS" | grep '^RESULT' | millions)"
    echo "libevent_active $("$OUT/libevent_active_repeat" "$M" | grep '^RESULT' | millions)"
  done
} > bench/moments-latest.txt
python3 - bench/moments-latest.txt <<'PY' | tee -a bench/moments-latest.txt
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    name, *values = line.split()
    if not values:
        sys.exit(f"moments: a {name} process printed no figures")
    rows.setdefault(name, []).append([float(v) for v in values])
print()
for name, processes in rows.items():
    every = [v for p in processes for v in p]
    median = statistics.median(every)
    spreads = [max(p) / min(p) for p in processes]
    print(f"# {name}: {min(every):g}-{max(every):g}, median {median:g}; "
          f"{sum(abs(v - median) <= 0.15 * median for v in every)} of {len(every)} within 15% of the median; "
          f"max/min inside one process: median {statistics.median(spreads):.2f}x, largest {max(spreads):.2f}x")
# The two servers' processes of one series ran within a second or two of
# each other: their ratio is the one a moment of the machine affects least.
ratios = [statistics.median(m) / statistics.median(p) for m, p in zip(rows["mainloop"], rows["libevent_active"])]
print(f"# mainloop / libevent_active, medians of the same series: {', '.join(f'{r:.2f}' for r in ratios)}"
      f" (min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x)")
PY
