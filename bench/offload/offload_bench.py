#!/usr/bin/env python3
"""tandem-bench-offload: the primary's frame time with the demo's captures offloaded to a worker,
against the same frame with no captures at all (the ceiling) and with the captures on the
primary, measured side by side in one run.

Each configuration is one `tandem run` of the built-in demo with --demo-crowd spheres (a main
view heavy enough to take milliseconds), the main view at unlimited FPS and the scene on the wall
clock, so the captures update at their own rate (60 Hz in tasks-720p60.json) whatever the frame
rate. The frame time is the mean of the wall-clock intervals between frame starts (`tandem run`
reports it; frames that write PNGs are left out): the mean, not the median, because captures
that share the primary make some frames longer and not others, and the frame rate pays for all. Configurations are interleaved, --runs times
each, and the median run is reported with its minimum and maximum (percentile rule: nearest rank,
bench/percentile.py, as in Tandem's own reports).

Goals (--goals):
  offload (default): the mean frame time with the captures on the worker within 10% of no
    captures (ratio <= 1.10), and at least 1.5x better than with the captures on the primary.
  slow-worker: a worker far slower than the primary (lavapipe beside a GPU) must not slow the
    primary: the p99 frame time with the captures on the worker within 5% of no captures (ratio
    <= 1.05); the captures on the primary are reported for contrast.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import percentile  # noqa: E402  (bench/percentile.py: the one percentile rule)


def run_config(args, name, tasks_file, placement, workdir):
    out = os.path.join(workdir, name)
    cmd = [args.tandem, "--primary", args.primary, "--workers", args.workers]
    if args.validation:
        cmd += ["--validation", args.validation]
    cmd += ["run", "--demo-crowd", str(args.crowd), "--tasks", tasks_file, "--frames",
            str(args.frames), "--fps", "0", "--clock", "wall", "--png-every", "0",
            "--size", args.size, "--slots", str(args.slots), "--out", out, "--quiet"]
    if placement:
        cmd += ["--placement", placement]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"tandem-bench-offload: '{' '.join(cmd)}' exited with {proc.returncode}")
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f), cmd


def summary(values):
    return {"median": percentile.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tandem", default="tandem", help="the tandem executable")
    p.add_argument("--primary", default="auto", help="primary adapter selector")
    p.add_argument("--workers", default="auto", help="worker adapter selectors")
    p.add_argument("--crowd", type=int, default=2000, help="--demo-crowd spheres")
    p.add_argument("--frames", type=int, default=600, help="frames per run")
    p.add_argument("--size", default="1920x1080", help="main view size")
    p.add_argument("--runs", type=int, default=3, help="runs per configuration (median kept)")
    p.add_argument("--slots", type=int, default=3,
                   help="slots per task: the main view holds leases for its frames in flight, "
                        "so a 60 Hz capture that takes longer than a frame needs more than 3")
    p.add_argument("--validation", default="", help="off, core or sync (default: tandem's)")
    p.add_argument("--machine", default="", help="a sentence describing the machine")
    p.add_argument("--json", default="", help="write the results as JSON to FILE")
    p.add_argument("--goals", choices=["offload", "slow-worker"], default="offload",
                   help="which goals to judge (see above)")
    p.add_argument("--tasks", default=os.path.join(HERE, "tasks-720p60.json"),
                   help="tasks file of the captures (default: three 1280x720 at 60 Hz)")
    args = p.parse_args()
    if args.runs < 1 or args.frames < 10 or args.crowd < 0:
        raise SystemExit("tandem-bench-offload: --runs >= 1, --frames >= 10, --crowd >= 0")

    configs = [
        ("no-captures", os.path.join(HERE, "tasks-none.json"), ""),
        ("captures-on-worker", args.tasks, "worker"),
        ("captures-on-primary", args.tasks, "primary"),
    ]
    frame_ms = {name: [] for name, _, _ in configs}
    frame_p99_ms = {name: [] for name, _, _ in configs}
    reports = {name: [] for name, _, _ in configs}
    commands = {}
    with tempfile.TemporaryDirectory(prefix="tandem-bench-offload-") as workdir:
        for r in range(args.runs):
            for name, tasks_file, placement in configs:
                sys.stderr.write(f"\rrun {r + 1}/{args.runs}: {name}\033[K")
                sys.stderr.flush()
                report, cmd = run_config(args, name, tasks_file, placement, workdir)
                commands[name] = " ".join(cmd)
                frame_ms[name].append(report["frame_time_ms"]["mean"])
                frame_p99_ms[name].append(report["frame_time_ms"]["p99"])
                reports[name].append(report)
    sys.stderr.write("\n")

    rows = []
    for name, _, _ in configs:
        s = summary(frame_ms[name])
        # The report of the median run, for the tasks' rates and devices.
        median_run = sorted(range(len(frame_ms[name])), key=lambda i: frame_ms[name][i])[
            percentile.rank_index(len(frame_ms[name]), 0.5)]
        rep = reports[name][median_run]
        tasks = [{"name": t.get("name"), "device": t.get("device"), "ready_hz": t.get("ready_rate_hz"),
                  "transfer_path": t.get("transfer_path"),
                  "gpu_ms_per_later_update": [r.get("gpu_ms_per_later_update")
                                              for r in t.get("registrations", [])]}
                 for t in rep.get("tasks", [])]
        rows.append({"name": name, "frame_ms": s, "frame_p99_ms": summary(frame_p99_ms[name]),
                     "main_view_gpu_ms_p50":
                     rep.get("main_view", {}).get("gpu_ms", {}).get("p50"), "tasks": tasks,
                     "command": commands[name]})
    by = {r["name"]: r["frame_ms"]["median"] for r in rows}
    by_p99 = {r["name"]: r["frame_p99_ms"]["median"] for r in rows}
    worker_over_none = by["captures-on-worker"] / by["no-captures"]
    primary_over_worker = by["captures-on-primary"] / by["captures-on-worker"]
    p99_worker_over_none = by_p99["captures-on-worker"] / by_p99["no-captures"]
    p99_primary_over_none = by_p99["captures-on-primary"] / by_p99["no-captures"]

    print(f"\nmedian of {args.runs} runs (percentile rule: {percentile.RULE})")
    print(f"{'configuration':<22} {'frame ms mean':>13} {'min':>8} {'max':>8} {'p99':>8}  tasks")
    for r in rows:
        t = ", ".join(f"{x['name']} {x['ready_hz'] or 0:.0f}/s" for x in r["tasks"]) or "-"
        print(f"{r['name']:<22} {r['frame_ms']['median']:>13.3f} {r['frame_ms']['min']:>8.3f} "
              f"{r['frame_ms']['max']:>8.3f} {r['frame_p99_ms']['median']:>8.3f}  {t}")
    if args.goals == "slow-worker":
        goals = [
            {"name": "frame time p99 captures on worker / no captures",
             "measured": p99_worker_over_none, "target": 1.05,
             "met": p99_worker_over_none <= 1.05},
            {"name": "frame time p99 captures on primary / no captures (contrast)",
             "measured": p99_primary_over_none, "target": None, "met": None},
        ]
    else:
        goals = [
            {"name": "frame time captures on worker / no captures", "measured": worker_over_none,
             "target": 1.10, "met": worker_over_none <= 1.10},
            {"name": "frame time captures on primary / captures on worker",
             "measured": primary_over_worker, "target": 1.5, "met": primary_over_worker >= 1.5},
        ]
    print()
    for g in goals:
        verdict = ("for contrast" if g["met"] is None else "met" if g["met"] else "NOT met")
        print(f"  {g['name']:<60} {g['measured']:.3f} (target {g['target']}): {verdict}")

    if args.json:
        first = reports["captures-on-worker"][0]
        doc = {
            "benchmark": "offload",
            "machine": {"host": platform.node(), "description": args.machine,
                        "cpus": os.cpu_count(),
                        "devices": [{"index": d.get("index"), "name": d.get("name"),
                                     "role": d.get("role")} for d in first.get("devices", [])]},
            "config": {"crowd": args.crowd, "frames": args.frames, "size": args.size,
                       "slots": args.slots,
                       "runs": args.runs, "primary": args.primary, "workers": args.workers,
                       "tasks": os.path.relpath(args.tasks, os.path.join(HERE, "..", "..")),
                       "goals": args.goals,
                       "fps": "unlimited", "clock": "wall"},
            "percentile_rule": percentile.RULE,
            "ceilings": {"frame_ms_no_captures": by["no-captures"],
                         "frame_p99_ms_no_captures": by_p99["no-captures"]},
            "rows": rows,
            "goals": goals,
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
