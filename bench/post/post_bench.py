#!/usr/bin/env python3
"""tandem-bench-post: the primary's frames processed on a worker (`tandem run --post`), against
the same pass run on the primary in the same run, with the quality of its output measured
against a reference the primary renders, beside a naive baseline computed in the same run.

Configurations (each one `tandem run --post KIND` of the built-in demo, --frames frames):
  interpolate on the worker and on the primary at --size and --fps on the wall clock (frame
    generation: outputs per real frame, the application thread's cost of a submit with its
    three inputs, submit to ready as pump() observes it, the pass's GPU time on each device);
  interpolate at --quality-fps on the frames clock (the scene moves 1/fps per frame: the
    quality of generated frames against the true in-between render and the 50/50 blend);
  upscale from half the size and blur, on the worker.
Every number comes from the runs' report.json ("post" part, README's `tandem run --post`); its
p50s and p99s follow Tandem's one percentile rule, nearest rank (bench/percentile.py,
src/core/stats.hpp), which the output names.

Goals: >= 0.99 generated frames per real frame; interpolation >= 3 dB above the blend; upscale
above bilinear; a submit with inputs < 20 us on the application thread; <= 0.1 ms of primary GPU
time for the inputs per frame (Tandem's timestamped copies, TaskStats::input_copy_gpu_us). The
latency from a real frame's end to its generated frame is measured at the sampled frames, the
application polling pump() and acquire() every 20 us.

--from-reports DIR builds the document from report folders a run already wrote (DIR/NAME/
report.json, NAME one of the configurations above), e.g. on a machine where Python ran apart.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import percentile  # noqa: E402  (bench/percentile.py: the one percentile rule)

CONFIGS = {
    # name: (kind, placement, fps key, clock)
    "interpolate-worker": ("interpolate", "worker", "fps", "wall"),
    "interpolate-primary": ("interpolate", "primary", "fps", "wall"),
    "interpolate-quality": ("interpolate", "worker", "quality_fps", "frames"),
    "upscale-worker": ("upscale", "worker", "fps", "wall"),
    "blur-worker": ("blur", "worker", "fps", "wall"),
}


def run_config(args, name, workdir):
    kind, placement, fps_key, clock = CONFIGS[name]
    out = os.path.join(workdir, name)
    cmd = [args.tandem, "--primary", args.primary, "--workers", args.workers]
    if args.virtual_devices:
        cmd += ["--virtual-devices", str(args.virtual_devices)]
    cmd += ["run", "--post", kind, "--placement", placement, "--size", args.size, "--fps",
            str(getattr(args, fps_key)), "--frames", str(args.frames), "--clock", clock,
            "--png-every", str(args.png_every), "--out", out, "--quiet"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"tandem-bench-post: '{' '.join(cmd)}' exited with {proc.returncode}")
    return cmd


def machine(args):
    devices = []
    try:
        cmd = [args.tandem, "--primary", args.primary, "--workers", args.workers]
        if args.virtual_devices:
            cmd += ["--virtual-devices", str(args.virtual_devices)]
        out = subprocess.run(cmd + ["devices", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, check=True).stdout
        for d in json.loads(out)["devices"]:
            devices.append({"index": d.get("index"), "name": d["name"],
                            "driver": d.get("driver_info") or d.get("driver_name"),
                            "uuid": d.get("device_uuid")})
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        pass
    return {"host": platform.node(), "cpus": os.cpu_count(), "devices": devices}


def row(name, report):
    p = report["post"]
    q = p["quality"]
    gpu = p.get("pass_gpu_us") or {}
    return {
        "config": name, "kind": p["kind"], "device": p["device"],
        "device_name": p["device_name"], "input_path": p["input_path"],
        "output_path": p["output_path"], "render_size": p["render_size"],
        "output_size": p["output_size"], "real_frames": p["real_frames"],
        "outputs_per_real_frame": p["outputs_per_real_frame"],
        "display_frames": p["display_frames"], "submit_us": p["submit_us"],
        "submit_to_ready_us": p["submit_to_ready_us"],
        "frame_end_to_ready_us": p.get("frame_end_to_ready_us"), "pass_gpu_us": gpu or None,
        "input_copy_gpu_us": p.get("input_copy_gpu_us"),
        "psnr_db": q.get("psnr_db"), "baseline": q.get("baseline"),
        "baseline_psnr_db": q.get("baseline_psnr_db"), "samples": q.get("samples"),
    }


def goal(name, measured, target, met, note=""):
    g = {"name": name, "measured": measured, "target": target, "met": met}
    if note:
        g["note"] = note
    return g


def goals(rows):
    out = []
    w = rows.get("interpolate-worker")
    if w:
        r = w["outputs_per_real_frame"]
        out.append(goal("generated frames per real frame (interpolate on the worker)", r, 0.99,
                        r >= 0.99))
        s = w["submit_us"]["p50"]
        out.append(goal("application thread per submit with 3 inputs, p50 us", s, 20.0, s < 20.0,
                        "the copies are recorded and submitted on the calling thread"))
        lat = (w.get("frame_end_to_ready_us") or {}).get("p50")
        gpu = (w.get("pass_gpu_us") or {}).get("p50")
        if lat is not None and gpu is not None and w["frame_end_to_ready_us"].get("n"):
            target = 1000.0 + gpu
            out.append(goal("real frame's end to its generated frame acquirable, p50 us", lat,
                            target, lat <= target, "target: 1 ms plus the pass's GPU time"))
    q = rows.get("interpolate-quality")
    if q and q["psnr_db"] and q["baseline_psnr_db"]:
        gain = q["psnr_db"]["mean"] - q["baseline_psnr_db"]["mean"]
        out.append(goal("interpolation PSNR above the 50/50 blend, dB", gain, 3.0, gain >= 3.0))
    u = rows.get("upscale-worker")
    if u and u["psnr_db"] and u["baseline_psnr_db"]:
        gain = u["psnr_db"]["mean"] - u["baseline_psnr_db"]["mean"]
        out.append(goal("upscale PSNR above bilinear, dB", gain, 0.0, gain > 0.0))
    copies = (w or {}).get("input_copy_gpu_us") or {}
    if copies.get("p50") is not None:
        ms = copies["p50"] / 1000.0
        out.append(goal("primary GPU time of the inputs per frame, p50 ms", ms, 0.1, ms <= 0.1,
                        "Tandem's copies of colour, depth and motion on the primary's main "
                        "queue, timestamped"))
    else:
        out.append(goal("primary GPU time of the inputs per frame, ms", None, 0.1, None,
                        "not measured: the primary writes no timestamps"))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tandem", default="tandem", help="the tandem executable")
    p.add_argument("--primary", default="auto", help="primary adapter selector")
    p.add_argument("--workers", default="auto", help="worker adapter selectors")
    p.add_argument("--virtual-devices", type=int, default=0,
                   help="open each device N times (2: one GPU as primary and worker)")
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--fps", type=float, default=60.0, help="frame rate of the timed runs")
    p.add_argument("--quality-fps", type=float, default=30.0,
                   help="frame rate (scene step) of the quality run")
    p.add_argument("--frames", type=int, default=600)
    p.add_argument("--png-every", type=int, default=100, help="sampled frames (quality)")
    p.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset")
    p.add_argument("--from-reports", help="build the document from DIR/NAME/report.json")
    p.add_argument("--machine-description", default="", help="free text kept in the JSON")
    p.add_argument("--json", help="write the JSON document here")
    args = p.parse_args()

    names = [n for n in args.configs.split(",") if n]
    for n in names:
        if n not in CONFIGS:
            raise SystemExit(f"tandem-bench-post: unknown configuration '{n}' "
                             f"(choose from {', '.join(CONFIGS)})")
    commands = {}
    workdir = args.from_reports or tempfile.mkdtemp(prefix="tandem-bench-post-")
    if not args.from_reports:
        for n in names:
            commands[n] = " ".join(run_config(args, n, workdir))
    rows = {}
    for n in names:
        path = os.path.join(workdir, n, "report.json")
        if os.path.exists(path):
            with open(path) as f:
                rows[n] = row(n, json.load(f))
    doc = {
        "benchmark": "post",
        "percentile_rule": percentile.RULE,
        "machine": machine(args) if not args.from_reports else {"host": platform.node()},
        "config": {"size": args.size, "fps": args.fps, "quality_fps": args.quality_fps,
                   "frames": args.frames, "png_every": args.png_every,
                   "virtual_devices": args.virtual_devices, "commands": commands},
        "ceilings": {
            "pass_gpu_us_on_primary":
                (rows.get("interpolate-primary") or {}).get("pass_gpu_us"),
            "note": "the same pass run on the primary: the primary GPU time offload saves",
        },
        "rows": list(rows.values()),
        "goals": goals(rows),
    }
    if args.machine_description:
        doc["machine"]["description"] = args.machine_description
    print(f"percentile rule: {percentile.RULE}")
    print(f"{'config':22} {'device':26} {'path':14} {'out/real':>8} {'submit p50 us':>13} "
          f"{'pass p50 us':>11} {'PSNR dB':>8} {'baseline':>8}")
    for r in rows.values():
        gpu = r["pass_gpu_us"] or {}
        psnr = r["psnr_db"]["mean"] if r["psnr_db"] else float("nan")
        base = r["baseline_psnr_db"]["mean"] if r["baseline_psnr_db"] else float("nan")
        print(f"{r['config']:22} {r['device_name'][:26]:26} {r['input_path']:14} "
              f"{r['outputs_per_real_frame']:8.3f} {r['submit_us']['p50']:13.1f} "
              f"{gpu.get('p50', float('nan')):11.1f} {psnr:8.2f} {base:8.2f}")
    for g in doc["goals"]:
        met = {True: "met", False: "NOT met", None: "not measured"}[g["met"]]
        print(f"goal: {g['name']}: {g['measured']} (target {g['target']}): {met}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
