#!/usr/bin/python3
"""Plots a `tlscmp sweep` CSV: throughput and messages per second against the
first swept setting (a size), one line per mode and setting, and the TLS/TCP
time ratio against it. Writes PREFIX.png and PREFIX.svg.

Usage: scripts/plot.py SWEEP.csv [PREFIX]      (PREFIX defaults to the CSV's name without .csv)
Needs matplotlib (Debian's python3-matplotlib; scripts/install-deps installs it).
"""
import csv
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_of(text):
    """'1K' -> 1024; None for what is not a size (then the axis is categorical)."""
    m = re.fullmatch(r"([0-9.]+)([KMGTkmgt]?)", text.strip())
    return float(m.group(1)) * UNITS[m.group(2).upper()] if m else None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else re.sub(r"\.csv$", "", path)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = reader.fieldnames or []
    if not rows:
        sys.exit(f"plot.py: {path} has no points")
    axis = columns[0]  # the first swept setting: the x axis
    others = columns[1:columns.index("variant")]  # the other settings: part of each line's name
    sizes = [size_of(r[axis]) for r in rows]
    numeric = all(s is not None for s in sizes)

    series = defaultdict(list)  # line name -> [(x, row)]
    labels = []
    for row in rows:
        name = " ".join([row["variant"]] + [f"{o}={row[o]}" for o in others])
        x = size_of(row[axis]) if numeric else row[axis]
        if not numeric and x not in labels:
            labels.append(x)
        series[name].append((x, row))

    has_messages = any(float(r["messages_per_s_median"] or 0) > 0 for r in rows)
    panels = ["mbytes_per_s"] + (["messages_per_s"] if has_messages else []) + ["over_tcp"]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 3.6 * len(panels)), squeeze=False)
    for ax, panel in zip(axes[:, 0], panels):
        for name, points in series.items():
            xs = [p[0] if numeric else labels.index(p[0]) for p in points]
            if panel == "over_tcp":
                ys = [float(p[1]["over_tcp_median"]) if p[1]["over_tcp_median"] else None for p in points]
                if all(y is None for y in ys):
                    continue
                lows = [float(p[1]["over_tcp_ci95_low"] or y or 0) for p, y in zip(points, ys)]
                highs = [float(p[1]["over_tcp_ci95_high"] or y or 0) for p, y in zip(points, ys)]
                ys = [y or 0 for y in ys]
            else:
                ys = [float(p[1][f"{panel}_median"]) for p in points]
                lows = [float(p[1][f"{panel}_min"]) for p in points]
                highs = [float(p[1][f"{panel}_max"]) for p in points]
            errors = [[max(0.0, y - lo) for y, lo in zip(ys, lows)], [max(0.0, hi - y) for y, hi in zip(ys, highs)]]
            ax.errorbar(xs, ys, yerr=errors, marker="o", capsize=3, label=name)
        if numeric:
            ax.set_xscale("log", base=2)
        else:
            ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel(axis + (" (bytes)" if numeric else ""))
        ax.set_ylabel({"mbytes_per_s": "MB/s (10^6 B/s)", "messages_per_s": "messages/s",
                       "over_tcp": "TLS time / TCP time"}[panel])
        if panel == "messages_per_s":
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    axes[0, 0].set_title(f"tlscmp sweep: median, min-max over rounds ({path})")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}")
    print(f"wrote {prefix}.png and {prefix}.svg")


if __name__ == "__main__":
    main()
