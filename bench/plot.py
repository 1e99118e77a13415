#!/usr/bin/env python3
"""Draws the benchmark's medians as an SVG, by hand, with the standard library.

  plot.py peers bench/latest.txt PICTURES/bench-peers.svg  (make bench)
  plot.py kvd bench/kvd-latest.txt PICTURES/bench-kvd.svg   (make bench-kvd)
  plot.py histogram bench/queue-delay.txt PICTURES/bench-queue-delay.svg
                                                        (make bench: mainloop-bench --histogram)

One panel per metric, one horizontal bar per peer (its median over the
rounds), MainLoop's rows (and kvd's) highlighted. The caption names the
machine and the date of the run. PICTURES is Sources/MainLoop/MainLoop.docc/Resources:
the DocC articles (Performance, kvd) and the README show the pictures from there.
"""
import datetime
import html
import os
import re
import statistics
import sys

HIGHLIGHT, OTHER = "#d9480f", "#868e96"
PEER_METRICS = [
    ("throughput_p1", "throughput, 1 producer (M posts/s, longer is better)", 1e-6),
    ("throughput_p4", "throughput, 4 producers (M posts/s, longer is better)", 1e-6),
    ("roundtrip_p50", "round trip p50 (us, shorter is better)", 1.0),
    ("roundtrip_p99", "round trip p99 (us, shorter is better)", 1.0),
    ("wake_p50", "wake-up p50 (us, shorter is better)", 1.0),
    ("wake_p99", "wake-up p99 (us, shorter is better)", 1.0),
]


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {os.uname().machine}, {model}"


def peer_panels(path):
    values = {}
    for line in open(path):
        m = re.match(r"RESULT peer=(\S+) metric=(\S+) value=(\S+) unit=(\S+)", line)
        if m:
            peer, metric, value, _ = m.groups()
            values.setdefault(metric, {}).setdefault(peer, []).append(float(value))
    panels = []
    for metric, title, scale in PEER_METRICS:
        rows = [(peer, statistics.median(v) * scale) for peer, v in sorted(values.get(metric, {}).items())]
        if rows:
            panels.append((title, rows, lambda peer: peer.startswith("mainloop")))
    return panels


def kvd_panels(path):
    """kvd (both topologies) and redis-server: throughput per test and shape."""
    values = {}
    for line in open(path):
        m = re.match(r"(\S+) c=(\d+) P=(\d+) (\S+) rps=(\d+)", line.strip())
        if m:
            name, clients, pipeline, test, rps = m.groups()
            key = f"{test.replace('_', ' ')} -c {clients} -P {pipeline}"
            values.setdefault(key, {}).setdefault(name, []).append(float(rps))
    rows = []
    for key in sorted(values, key=lambda k: (int(k.split()[-1]), int(k.split()[-3]), k)):
        for name in sorted(values[key]):
            rows.append((f"{key}: {name}", statistics.median(values[key][name]) / 1000))
    if not rows:
        return []
    return [("redis-benchmark (k requests/s, longer is better)", rows, lambda label: "kvd" in label)]


def format_ns(ns):
    if ns < 1000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1000:.0f} us"
    return f"{ns / 1_000_000:.0f} ms"


def histogram_panels(path):
    """The queue-delay histogram, its buckets gathered into powers of two."""
    bins, total, title = {}, 0, "queue delay"
    for line in open(path):
        if line.startswith("#"):
            title = line[1:].strip()
            continue
        parts = line.split()
        if len(parts) == 2:
            upper, count = int(parts[0]), int(parts[1])
            power = max(upper, 1).bit_length()  # the bin holds values up to 2^power
            bins[power] = bins.get(power, 0) + count
            total += count
    if not bins:
        return []
    rows = []
    for power in range(min(bins), max(bins) + 1):
        count = bins.get(power, 0)
        rows.append((f"<= {format_ns(2 ** power)}", 100.0 * count / total))
    return [(f"{title} (% of samples per bin)", rows, lambda label: True)]


def svg(panels, caption):
    width, label_width, bar_width, row, gap = 900, 260, 520, 18, 40
    height = 40 + sum(gap + row * len(rows) for _, rows, _ in panels) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{html.escape(caption)}</text>',
    ]
    y = 40
    for title, rows, highlighted in panels:
        out.append(f'<text x="10" y="{y + 16}" font-weight="bold">{html.escape(title)}</text>')
        y += gap - 16
        top = max(value for _, value in rows) or 1
        for label, value in rows:
            length = max(1, bar_width * value / top)
            color = HIGHLIGHT if highlighted(label) else OTHER
            out.append(f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end">{html.escape(label)}</text>')
            out.append(f'<rect x="{label_width}" y="{y + 3}" width="{length:.1f}" height="{row - 5}" fill="{color}"/>')
            out.append(f'<text x="{label_width + length + 4:.1f}" y="{y + 13}">{value:,.2f}</text>')
            y += row
        y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    kind, source, target = sys.argv[1:4]
    readers = {"peers": peer_panels, "kvd": kvd_panels, "histogram": histogram_panels}
    panels = readers[kind](source)
    if not panels:
        sys.exit(f"plot.py: no results in {source}")
    what = {
        "peers": "MainLoop against its peers",
        "kvd": "kvd against redis-server 7.0.15",
        "histogram": "EventLoop.main's queue delay under the peer benchmark (mainloop-bench --histogram)",
    }[kind]
    date = datetime.datetime.fromtimestamp(os.path.getmtime(source), datetime.timezone.utc).strftime("%Y-%m-%d")
    kind_of_figure = "" if kind == "histogram" else "medians, "
    caption = f"{what}: {kind_of_figure}measured {date} on {machine()}"
    with open(target, "w") as f:
        f.write(svg(panels, caption))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
