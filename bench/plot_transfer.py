#!/usr/bin/env python3
"""Plot tandem-bench-transfer JSON: throughput against image size per transfer path (banded and
whole-image), with the copy ceilings measured in the same run as lines.

Usage: bench/plot_transfer.py RESULT.json [-o OUT.png]
Needs python3-matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="file written by tandem-bench-transfer --json")
    parser.add_argument("-o", "--out", help="PNG to write (default: the JSON name with .png)")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plotting needs matplotlib: apt-get install python3-matplotlib", file=sys.stderr)
        return 1

    with open(args.json) as f:
        doc = json.load(f)
    if doc.get("benchmark") != "transfer":
        print(f"{args.json} is not a transfer benchmark result", file=sys.stderr)
        return 1

    sizes = doc["config"]["sizes"]

    def megapixels(size: str) -> float:
        w, h = size.lower().split("x")
        return int(w) * int(h) / 1e6

    xs = [megapixels(s) for s in sizes]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ceilings = doc["ceilings"]
    for key, label, style in [
        ("worker_d2h_gbps", "ceiling: worker d2h", ":"),
        ("primary_h2d_gbps", "ceiling: primary h2d", "--"),
    ]:
        ax.plot(xs, [ceilings[s][key] for s in sizes], style, color="black", label=label)

    series = {}
    for row in doc["rows"]:
        if row["throughput_gbps"]["n"] == 0:
            continue
        name = row["path"] + (" banded" if row["banded"] else " whole")
        series.setdefault(name, []).append(
            (megapixels(row["size"]), row["throughput_gbps"]["median"],
             row["throughput_gbps"]["min"], row["throughput_gbps"]["max"]))
    for name, points in sorted(series.items()):
        points.sort()
        x = [p[0] for p in points]
        y = [p[1] for p in points]
        err = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=name,
                    linestyle="-" if "whole" in name else "-.")

    ax.set_xscale("log")
    ax.set_xlabel("image size (megapixels, %s)" % doc["config"].get("format", ""))
    ax.set_ylabel("throughput (GB/s, median; bars: min-max)")
    devices = doc.get("machine", {}).get("devices", [])
    names = " -> ".join(d["name"] for d in sorted(devices, key=lambda d: d["role"] != "worker"))
    ax.set_title(f"Tandem transfer paths, worker -> primary ({names})")
    ax.set_xticks(xs)
    ax.set_xticklabels(sizes, rotation=30, ha="right")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    out = args.out or (args.json[:-5] if args.json.endswith(".json") else args.json) + ".png"
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
