#!/usr/bin/env bash
# Why a MainActor round trip costs what it costs, by route: plain Swift on
# Linux (the swift_task_mainactor peer's round trip) against MainLoop's two
# MainActor routes, in the same run, 3 rounds. Each prints the hop there and
# the hop back (p50, p75) and the process's voluntary context switches per
# round trip, as FIGURE lines. Findings: Performance.md, "The MainActor rows".
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build/bench
swiftc -O -swift-version 6 bench/mainactor-wakeups.swift -o .build/bench/mainactor-wakeups
swift build -c release --product mainloop-bench > /dev/null
for round in 1 2 3; do
  echo "# round $round"
  timeout 120 .build/bench/mainactor-wakeups
  for mode in mainactor-executor mainactor-dispatch; do
    timeout 300 .build/release/mainloop-bench 16000 "$mode" | grep -E "roundtrip_(p50|there|back)|wakeups_per_roundtrip"
  done
done
