#!/usr/bin/env python3
"""Plots the delay the frame-generation layer added to each real frame, from its reports.

    delay_plot.py OUT.svg REPORT.json[=LABEL] ...

Each report's first device with frames: `real_frame_delays_us` (from the program's present of a
real frame to the layer's present of it returning, in the order presented) as a line, its p50
(the report's, nearest rank) dashed, and the goal dotted: half the program's frame
(`program_fps`) plus the worker's pass (`worker_pass_us_p50`). Standard library only: an SVG,
so that it runs where the reports are made."""
import json
import math
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
WIDTH, HEIGHT = 900, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50


def series(path):
    report = json.load(open(path))
    for device in report["devices"]:
        if device.get("real_frame_delays_us"):
            return report, device
    sys.exit(f"{path}: no device with real_frame_delays_us")


def nice_step(rough):
    """1, 2 or 5 times a power of ten, at least `rough`."""
    power = 10 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= rough)


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    if not specs:
        sys.exit(__doc__)
    lines = []
    for spec in specs:
        path, _, label = spec.partition("=")
        report, device = series(path)
        delays = [us / 1000.0 for us in device["real_frame_delays_us"]]
        fps = device.get("program_fps") or 0
        goal = (500.0 / fps + device.get("worker_pass_us_p50", 0) / 1000.0) if fps > 0 else None
        p50 = (device.get("real_frame_delay_us_p50") or 0) / 1000.0
        lines.append((label or path, delays, p50, goal))
    count = max(len(d) for _, d, _, _ in lines)
    top = max(max(max(d), g or 0) for _, d, _, g in lines) * 1.1
    sx = (WIDTH - LEFT - RIGHT) / max(count - 1, 1)
    sy = (HEIGHT - TOP - BOTTOM) / top

    def x(i):
        return LEFT + i * sx

    def y(ms):
        return HEIGHT - BOTTOM - ms * sy

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14">Delay the layer added to each real frame '
           f'(ms; dashed: p50, nearest rank; dotted: half a frame + the pass)</text>']
    step = nice_step(top / 5)
    for t in range(int(top / step) + 1):
        ms = t * step
        svg.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(ms):.1f}" y2="{y(ms):.1f}" '
                   f'stroke="#ddd"/><text x="{LEFT - 8}" y="{y(ms) + 4:.1f}" '
                   f'text-anchor="end">{ms:g}</text>')
    svg.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 12}" '
               f'text-anchor="middle">real frame, in the order presented</text>')
    for i in range(0, count, max(1, count // 10)):
        svg.append(f'<text x="{x(i):.1f}" y="{HEIGHT - BOTTOM + 16}" '
                   f'text-anchor="middle">{i}</text>')
    for n, (label, delays, p50, goal) in enumerate(lines):
        colour = COLOURS[n % len(COLOURS)]
        points = " ".join(f"{x(i):.1f},{y(ms):.1f}" for i, ms in enumerate(delays))
        svg.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1" points="{points}"/>')
        svg.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(p50):.1f}" y2="{y(p50):.1f}" '
                   f'stroke="{colour}" stroke-dasharray="6,4"/>')
        if goal is not None:
            svg.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(goal):.1f}" '
                       f'y2="{y(goal):.1f}" stroke="{colour}" stroke-dasharray="2,3"/>')
        svg.append(f'<text x="{WIDTH - RIGHT - 4}" y="{TOP + 16 * (n + 1)}" text-anchor="end" '
                   f'fill="{colour}">{escape(label)}: p50 {p50:.2f} ms'
                   + (f', goal {goal:.2f} ms' if goal is not None else "") + '</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
