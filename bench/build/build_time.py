#!/usr/bin/env python3
"""tandem-bench-build: how long a new user waits for the README's first command to build, the
unity build (the default) against one compiler run per source, in the same run on the same
machine, timed alike.

Each run clones the repository's HEAD afresh (what a new user starts from) and times
`scripts/build.sh --target tandem` (the build of scripts/demo.sh: configure, then the `tandem`
CLI and what it needs) from the clone to the linked binary, once with -DTANDEM_UNITY_BUILD=ON
and once with OFF, alternating which goes first from run to run. Compiler caches are not used
(the build uses none). The clone and the installs that scripts/install-deps.sh checks are outside
the timing; it checks them once before the first run so that no run waits for apt.

Goal: the unity build takes at most half of the one-source-per-run build (ratio <= 0.5). Medians
follow Tandem's one percentile rule, nearest rank (bench/percentile.py).

    build_time.py [--runs N] [--target tandem] [--json FILE]
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import percentile  # noqa: E402  (bench/percentile.py: the one percentile rule)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = {"unity": "ON", "per-source": "OFF"}


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def compiler():
    proc = subprocess.run(["c++", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True)
    return proc.stdout.splitlines()[0] if proc.returncode == 0 and proc.stdout else "unknown"


def timed_build(workdir, mode, target, index, total):
    clone = os.path.join(workdir, f"{mode}-{index}")
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    log_path = os.path.join(workdir, f"{mode}-{index}.log")
    sys.stderr.write(f"tandem-bench-build: run {index + 1}/{total}, {mode} build of {target}...\n")
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.run([os.path.join(clone, "scripts", "build.sh"), "--target", target,
                               f"-DTANDEM_UNITY_BUILD={MODES[mode]}"],
                              stdout=log, stderr=subprocess.STDOUT,
                              env=dict(os.environ, TANDEM_BUILD_DIR=os.path.join(clone, "build")))
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        with open(log_path) as log:
            sys.stderr.write(log.read()[-4000:])
        raise SystemExit(f"tandem-bench-build: the {mode} build exited with {proc.returncode}")
    shutil.rmtree(clone, ignore_errors=True)
    sys.stderr.write(f"tandem-bench-build: {mode}: {seconds:.1f} s\n")
    return seconds


def row(name, samples):
    return {"name": name, "median_s": percentile.median(samples), "min_s": min(samples),
            "max_s": max(samples), "n": len(samples), "samples_s": samples}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--runs", type=int, default=1,
                        help="builds of each kind (default 1; each takes minutes on 2 cores)")
    parser.add_argument("--target", default="tandem", help="what to build (default: tandem)")
    parser.add_argument("--json", help="write the result document here")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    subprocess.run([os.path.join(ROOT, "scripts", "install-deps.sh")], check=True,
                   stdout=subprocess.DEVNULL)
    samples = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="tandem-bench-build-") as workdir:
        for i in range(args.runs):
            order = list(MODES) if i % 2 == 0 else list(reversed(MODES))
            for mode in order:
                samples[mode].append(timed_build(workdir, mode, args.target, i, args.runs))

    unity = percentile.median(samples["unity"])
    per_source = percentile.median(samples["per-source"])
    ratio = unity / per_source
    doc = {
        "benchmark": "tandem-bench-build",
        "machine": {"description": f"{os.cpu_count()} CPUs, {cpu_model()}, no ccache",
                    "cpus": os.cpu_count(), "compiler": compiler(),
                    "date": time.strftime("%Y-%m-%d", time.gmtime())},
        "config": {"commit": git("rev-parse", "HEAD"), "target": args.target, "runs": args.runs,
                   "command": f"scripts/build.sh --target {args.target} "
                              "-DTANDEM_UNITY_BUILD=ON|OFF, from a fresh clone",
                   "percentile_rule": percentile.RULE},
        "rows": [row("unity", samples["unity"]), row("per-source", samples["per-source"])],
        "unity_vs_per_source": ratio,
        "goals": [{"name": "unity build / per-source build", "target": "<= 0.5", "value": ratio,
                   "met": ratio <= 0.5}],
    }
    print(f"{args.target} from a fresh clone, {os.cpu_count()} CPUs, median of {args.runs}:")
    print(f"  unity build      {unity:7.1f} s")
    print(f"  per-source build {per_source:7.1f} s")
    print(f"  ratio            {ratio:7.3f}  (goal <= 0.5: {'met' if ratio <= 0.5 else 'not met'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
