#!/usr/bin/env python3
"""tandem-bench-stream-fps: a task's ready rate with an unlimited primary frame loop, against the
same stream with a 30 FPS frame loop (the ceiling: a frame loop that leaves the CPU alone),
measured side by side in one run.

Each configuration is one `tandem stream` of the pattern task at --rate Hz on the chosen worker,
for --duration seconds, with --fps 30 and with --fps unlimited; configurations are interleaved,
--runs times each, and the median run is reported with its minimum and maximum (percentile rule:
nearest rank, bench/percentile.py, as in Tandem's own reports). A frame loop that
spins, or calls into the worker every frame, takes the CPU a CPU worker (lavapipe) renders with
and lowers the ready rate it reaches.

Goal: ready rate at --fps unlimited >= 0.97 of the rate at --fps 30.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import percentile  # noqa: E402  (bench/percentile.py: the one percentile rule)


def run_stream(args, fps):
    cmd = [args.tandem, "--primary", args.primary, "--workers", args.workers]
    if args.validation:
        cmd += ["--validation", args.validation]
    cmd += ["stream", "--rate", str(args.rate), "--fps", fps, "--duration", str(args.duration),
            "--size", args.size, "--placement", args.placement, "--quiet", "--json"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"tandem-bench-stream-fps: '{' '.join(cmd)}' exited with "
                         f"{proc.returncode}")
    return json.loads(proc.stdout), " ".join(cmd)


def summary(values):
    return {"median": percentile.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tandem", default="tandem", help="the tandem executable")
    p.add_argument("--primary", default="auto", help="primary adapter selector")
    p.add_argument("--workers", default="auto", help="worker adapter selectors")
    p.add_argument("--placement", default="worker:0", help="the task's placement")
    p.add_argument("--rate", type=float, default=1000.0, help="submit rate, Hz")
    p.add_argument("--duration", type=float, default=8.0, help="seconds per stream")
    p.add_argument("--size", default="256x256", help="task output size")
    p.add_argument("--runs", type=int, default=3, help="runs per configuration (median kept)")
    p.add_argument("--validation", default="", help="off, core or sync (default: tandem's)")
    p.add_argument("--machine", default="", help="a sentence describing the machine")
    p.add_argument("--json", default="", help="write the results as JSON to FILE")
    args = p.parse_args()
    if args.runs < 1 or args.duration <= 0 or args.rate <= 0:
        raise SystemExit("tandem-bench-stream-fps: --runs >= 1, --duration > 0, --rate > 0")

    configs = ["30", "unlimited"]
    ready = {c: [] for c in configs}
    frames = {c: [] for c in configs}
    docs = {c: [] for c in configs}
    commands = {}
    for r in range(args.runs):
        for fps in configs:
            sys.stderr.write(f"\rrun {r + 1}/{args.runs}: --fps {fps}\033[K")
            sys.stderr.flush()
            doc, cmd = run_stream(args, fps)
            commands[fps] = cmd
            ready[fps].append(doc["rates_hz"]["ready"])
            frames[fps].append(doc["rates_hz"]["frames"])
            docs[fps].append(doc)
    sys.stderr.write("\n")

    rows = [{"fps": fps, "ready_hz": summary(ready[fps]), "frames_hz": summary(frames[fps]),
             "command": commands[fps]} for fps in configs]
    ratio = rows[1]["ready_hz"]["median"] / rows[0]["ready_hz"]["median"]
    print(f"\nmedian of {args.runs} runs (percentile rule: {percentile.RULE})")
    print(f"{'frame loop':<12} {'ready/s':>10} {'min':>10} {'max':>10} {'frames/s':>10}")
    for r in rows:
        print(f"--fps {r['fps']:<6} {r['ready_hz']['median']:>10.1f} {r['ready_hz']['min']:>10.1f} "
              f"{r['ready_hz']['max']:>10.1f} {r['frames_hz']['median']:>10.1f}")
    goals = [{"name": "ready rate --fps unlimited / --fps 30", "measured": ratio, "target": 0.97,
              "met": ratio >= 0.97}]
    print(f"\n  {goals[0]['name']:<45} {ratio:.3f} (target 0.97): "
          f"{'met' if goals[0]['met'] else 'NOT met'}")
    if args.json:
        doc = {
            "benchmark": "stream-fps",
            "machine": {"host": platform.node(), "description": args.machine,
                        "cpus": os.cpu_count()},
            "config": {"rate_hz": args.rate, "duration_s": args.duration, "size": args.size,
                       "placement": args.placement, "runs": args.runs, "primary": args.primary,
                       "workers": args.workers},
            "percentile_rule": percentile.RULE,
            "ceilings": {"ready_hz_fps_30": rows[0]["ready_hz"]["median"]},
            "rows": rows,
            "goals": goals,
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
