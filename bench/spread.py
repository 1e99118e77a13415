#!/usr/bin/env python3
"""The spread behind the medians: every RESULT figure with its rounds
(min / median / max), and, for each peer, its ratio to mainloop round by
round, so a second mode shows instead of hiding behind a median.

usage: spread.py bench/latest.txt     (the output of bench/run.sh; rounds
are delimited by its "NOTE round=N" lines)
"""
import re
import statistics
import sys

# Figures where a larger value is better; for the others (latencies) the
# ratio is inverted, so that a ratio above 1 always favours mainloop.
HIGHER_IS_BETTER = ("throughput",)


def read(path):
    rounds, current = [], None
    for line in open(path):
        if line.startswith("NOTE round="):
            current = {}
            rounds.append(current)
            continue
        m = re.match(r"RESULT peer=(\S+) metric=(\S+) value=(\S+) unit=(\S+)", line)
        if m:
            if current is None:
                current = {}
                rounds.append(current)
            peer, metric, value, unit = m.groups()
            current[(metric, peer)] = (float(value), unit)
    return rounds


def main():
    rounds = read(sys.argv[1])
    keys = sorted({key for r in rounds for key in r})
    print(f"Spread over {len(rounds)} round(s): min / median / max, and the ratio mainloop / peer in each round")
    print("(above 1: mainloop ahead; for latencies the inverse).")
    print()
    print("| metric | peer | min | median | max | ratio per round |")
    print("|---|---|---|---|---|---|")
    for metric, peer in keys:
        values = [r[(metric, peer)][0] for r in rounds if (metric, peer) in r]
        unit = next(r[(metric, peer)][1] for r in rounds if (metric, peer) in r)
        ratios = []
        for r in rounds:
            if (metric, peer) in r and (metric, "mainloop") in r and peer != "mainloop":
                ours, theirs = r[(metric, "mainloop")][0], r[(metric, peer)][0]
                if ours > 0 and theirs > 0:
                    higher = metric.startswith(HIGHER_IS_BETTER)
                    ratios.append(ours / theirs if higher else theirs / ours)
        shown = ", ".join(f"{x:.2f}" for x in ratios) if ratios else "-"
        print(
            f"| {metric} | {peer} | {min(values):.4g} | {statistics.median(values):.4g} | {max(values):.4g} {unit} | {shown} |"
        )


if __name__ == "__main__":
    main()
