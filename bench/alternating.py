#!/usr/bin/env python3
"""Summaries of runs made as separate processes in alternating pairs.

usage: alternating.py latency-cost FILE   (bench/latency-cost.sh)
       alternating.py modes FILE          (bench/modes.sh)

latency-cost: for each throughput figure, the medians of the latency-on and
latency-off processes, their ratio, and the range and median of the ratio
within each pair. modes: for each peer, the range and median of its one-
producer throughput, and how far its furthest process is from that median.
"""
import re
import statistics
import sys


def results(path):
    """(peer, metric) -> values in M/s, in file order."""
    runs = {}
    for line in open(path):
        m = re.match(r"RESULT peer=(\S+) metric=(\S+) value=(\d+)", line)
        if m:
            runs.setdefault((m.group(1), m.group(2)), []).append(int(m.group(3)) / 1e6)
    return runs


def latency_cost(path):
    runs = results(path)
    for metric in sorted({metric for _, metric in runs}):
        on, off = runs[("mainloop_latency", metric)], runs[("mainloop_nolatency", metric)]
        ratios = [a / b for a, b in zip(on, off)]
        print(f"# {metric}: on {statistics.median(on):.2f} M/s, off {statistics.median(off):.2f} M/s "
              f"(medians), on/off {statistics.median(on) / statistics.median(off):.3f}; per pair "
              f"{min(ratios):.2f} to {max(ratios):.2f}, median {statistics.median(ratios):.3f}")


def modes(path):
    for (peer, metric), values in results(path).items():
        if metric != "throughput_p1":
            continue
        median = statistics.median(values)
        worst = max(abs(v / median - 1) for v in values)
        print(f"# {peer}: {min(values):.1f}-{max(values):.1f} M/s, median {median:.1f}; "
              f"every process within {100 * worst:.0f}% of the median")


if __name__ == "__main__":
    {"latency-cost": latency_cost, "modes": modes}[sys.argv[1]](sys.argv[2])
