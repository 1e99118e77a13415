#!/usr/bin/env python3
"""The spread behind the medians: every RESULT figure with its rounds
(min / median / max), and, for each peer, its ratio to mainloop round by
round, so a second mode shows instead of hiding behind a median. Then the
invocation's share of a closure post (`invocation-pairs`) by the machine's
phase: its core-to-core round trip measured just before and after each
invocation half (the VM this was written on moves between two levels, near
100 and near 500 ns, with readings between them now and then).

usage: spread.py bench/latest.txt     (the output of bench/run.sh; rounds
are delimited by its "NOTE round=N" lines; the output of `mainloop-bench M
invocation-pairs N` alone gives the phase table only)
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
    if not keys:
        invocation_phases(sys.argv[1])
        return
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
    invocation_phases(sys.argv[1])


# Below this many ns a core-to-core round trip is the machine's near phase,
# at or above it the far one (the two levels sit near 100 and 500 ns).
PHASE_BOUNDARY_NS = 300


def invocation_phases(path):
    """Each invocation-pairs pair's share, by the phase around its invocation half."""
    phases = {"near": [], "far": [], "mixed": []}
    for line in open(path):
        m = re.match(r"NOTE pair=\d+ closure=(\d+) invocation=(\d+) ops_per_s pingpong_ns_around=\S+?,(\d+)-(\d+)", line)
        if not m:
            continue
        closure, invocation, before, after = (int(x) for x in m.groups())
        if closure == 0:
            continue
        if max(before, after) < PHASE_BOUNDARY_NS:
            phase = "near"
        elif min(before, after) >= PHASE_BOUNDARY_NS:
            phase = "far"
        else:
            phase = "mixed"
        phases[phase].append((invocation / closure, invocation / 1e6))
    if not any(phases.values()):
        return
    print()
    print("Invocation share of a closure post per pair, by the core-to-core round trip around its invocation half")
    print(f"(near: both under {PHASE_BOUNDARY_NS} ns; far: both at or over; mixed: one of each).")
    print()
    print("| phase | pairs | share min / median / max | invocations M/s min / median / max |")
    print("|---|---|---|---|")
    for phase, pairs in phases.items():
        if not pairs:
            continue
        shares, rates = [p[0] for p in pairs], [p[1] for p in pairs]
        print(
            f"| {phase} | {len(pairs)} | {min(shares):.3f} / {statistics.median(shares):.3f} / {max(shares):.3f} |"
            f" {min(rates):.2f} / {statistics.median(rates):.2f} / {max(rates):.2f} |"
        )


if __name__ == "__main__":
    main()
