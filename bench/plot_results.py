#!/usr/bin/env python3
"""Plot Tandem benchmark results (bench/results/*.json), one subcommand per kind of result.

Usage: bench/plot_results.py SUBCOMMAND JSON [JSON ...] -o OUT.png

  latency TRANSFER.json [--sync PROBE.json]
      tandem-bench-transfer: latency (worker done -> primary ready) against image size per path,
      whole-image and banded, with the raw copy latency; with --sync (a `tandem probe --mode
      signal` result) the synchronisation latency and the zero-copy goal at 1920x1080,
      1.2 x sync p50 + 10 us.
  transfer TRANSFER.json [TRANSFER.json ...]
      tandem-bench-transfer: one column per file, throughput (with the copy ceilings measured in
      the same run and 0.9 x min(worker d2h, primary h2d)) above latency (with raw and
      1.2 x raw + 50 us).
  cuda TRANSFER.json [TRANSFER.json ...]
      tandem-bench-transfer runs of the cuda-peer path (--cuda-copies stream or host-step):
      latency and throughput against the path's own ceiling per size, whole and banded, one bar
      per file.
  probe PROBE.json [PROBE.json ...]
      tandem probe: latency per stage (p50, p95, p99), one panel per run.
  runtime RUNTIME.json [RUNTIME.json ...] [--label TEXT ...]
      tandem-bench-runtime: decoupling, pipelining, app-thread cost and, where the run moved
      tasks, frame times outside and during moves, one bar per file, with the goals.
  offload OFFLOAD.json [OFFLOAD.json ...]
      bench/offload/offload_bench.py: primary frame time with no captures, captures on the worker
      and captures on the primary (mean and, where present, p99), with the goals.
  run REPORT.json
      tandem run --json report: each task's request -> ready latency (p50, p90, p99) and its
      ready rate against the requested one.
  stream STREAM.json
      bench/stream/stream_fps_bench.py: ready rate with a 30 FPS and an unlimited frame loop,
      with the goal.
  placement PLACEMENT.json
      tandem-bench-placement: predicted against measured cost per task and device, and the
      primary frame time of every assignment.

The plots compute no statistic of their own: every median and percentile they show is the
result's, taken by Tandem's one rule, nearest rank (src/core/stats.hpp, bench/percentile.py),
which each figure names in its corner.

Needs python3-matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import percentile  # noqa: E402  (bench/percentile.py: the one percentile rule)

FIGSIZE = (9, 5.5)
DPI = 120


class ResultError(Exception):
    pass


def load(path, kind, check):
    """Reads a JSON file and checks that it is a `kind` result."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ResultError(f"{path}: cannot read JSON: {e}")
    if not isinstance(doc, dict) or not check(doc):
        raise ResultError(f"{path} is not a {kind} result")
    return doc


def machine_name(doc):
    """The machine named in a result: the part of its description before ':', or the devices."""
    machine = doc.get("machine") or {}
    texts = [machine.get("description"), machine.get("kind"),
             (doc.get("machine_description") or {}).get("kind")]
    for text in texts:
        if text:
            head = text.split(":")[0] if ":" in text else text.split(",")[0]
            return head.strip()
    devices = machine.get("devices") or doc.get("devices") or []
    names = sorted({d.get("name", "?") for d in devices})
    return " + ".join(names)


def megapixels(size):
    w, h = size.lower().split("x")
    return int(w) * int(h) / 1e6


def size_axis(ax, sizes, fmt):
    xs = [megapixels(s) for s in sizes]
    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels(sizes, rotation=30, ha="right")
    ax.minorticks_off()
    ax.set_xlabel(f"image size ({fmt})" if fmt else "image size")


def pair_names(doc):
    devices = (doc.get("machine") or {}).get("devices", [])
    by_role = {d.get("role"): d.get("name", "?") for d in devices}
    return by_role.get("worker", "?"), by_role.get("primary", "?")


def short_device(name):
    return name.split(" (")[0]


def log_y(ax):
    """Log scale on y with plain numbers at 1, 2 and 5 of each decade."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def save(fig, out):
    fig.text(0.995, 0.005, f"percentile rule: {percentile.RULE}", ha="right", va="bottom",
             fontsize=7, color="0.4")
    fig.savefig(out, dpi=DPI)
    print(f"wrote {out}")


def transfer_series(doc, key):
    series = {}
    for row in doc["rows"]:
        stat = row.get(key) or {}
        if not stat.get("n"):
            continue
        name = row["path"] + (" banded" if row["banded"] else " whole")
        series.setdefault(name, []).append(
            (megapixels(row["size"]), stat["median"], stat["min"], stat["max"]))
    for points in series.values():
        points.sort()
    return series


PATH_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:brown", "tab:pink"]


def plot_series(ax, series):
    paths = sorted({name.rsplit(" ", 1)[0] for name in series})
    for name, points in sorted(series.items()):
        x = [p[0] for p in points]
        y = [p[1] for p in points]
        err = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
        whole = name.endswith("whole")
        colour = PATH_COLOURS[paths.index(name.rsplit(" ", 1)[0]) % len(PATH_COLOURS)]
        ax.errorbar(x, y, yerr=err, marker="o" if whole else "s", capsize=3, label=name,
                    color=colour, alpha=1.0 if whole else 0.75,
                    linestyle="-" if whole else "-.")


def raw_latency(doc):
    raw = {}
    for row in doc["rows"]:
        if row.get("raw_latency_us"):
            raw.setdefault(row["size"], row["raw_latency_us"])
    return raw


def is_transfer(doc):
    return doc.get("benchmark") == "transfer" and "rows" in doc and "ceilings" in doc


def is_probe_run(doc):
    return (doc.get("command") == "probe" or doc.get("benchmark") == "probe") and \
        "latency_us" in doc


def cmd_latency(args, plt):
    doc = load(args.json[0], "tandem-bench-transfer", is_transfer)
    sizes = doc["config"]["sizes"]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    plot_series(ax, transfer_series(doc, "latency_us"))
    raw = raw_latency(doc)
    ax.plot([megapixels(s) for s in sizes if s in raw], [raw[s] for s in sizes if s in raw], ":",
            color="black", label="raw: one worker d2h + one primary h2d copy")
    if args.sync:
        probe = load(args.sync, "tandem probe", is_probe_run)
        sync = probe["latency_us"]["total"]["p50"]
        ax.axhline(sync, color="grey", linestyle="--",
                   label=f"sync only (tandem probe --mode signal, {probe.get('queue', '')} "
                         f"queues): p50 {sync:.1f} us")
        if "1920x1080" in sizes:
            goal = 1.2 * sync + 10
            ax.plot([megapixels("1920x1080")], [goal], marker="_", markersize=28, mew=3,
                    linestyle="none", color="black",
                    label=f"goal 1920x1080 zero-copy: <= 1.2 x sync + 10 us = {goal:.1f} us")
    log_y(ax)
    size_axis(ax, sizes, doc["config"].get("format", ""))
    ax.set_ylabel("latency, worker done -> primary ready (us)")
    worker, primary = pair_names(doc)
    ax.set_title(f"Tandem transfer latency, {machine_name(doc)}: {short_device(worker)} -> "
                 f"{short_device(primary)}\nmedian of {doc['config'].get('runs', '?')} "
                 "(bars: min-max)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    save(fig, args.out)


def cmd_transfer(args, plt):
    docs = [load(p, "tandem-bench-transfer", is_transfer) for p in args.json]
    fig, axes = plt.subplots(2, len(docs), figsize=FIGSIZE, sharex="col", squeeze=False)
    for col, doc in enumerate(docs):
        config = doc["config"]
        sizes = config["sizes"]
        xs = [megapixels(s) for s in sizes]
        ceilings = doc["ceilings"]
        top, bottom = axes[0][col], axes[1][col]
        ceiling = [min(ceilings[s]["worker_d2h_gbps"], ceilings[s]["primary_h2d_gbps"])
                   for s in sizes]
        top.plot(xs, ceiling, "--", color="black", label="ceiling: min(worker d2h, primary h2d)")
        big = [i for i, s in enumerate(sizes) if megapixels(s) >= megapixels("1920x1080")]
        top.plot([xs[i] for i in big], [0.9 * ceiling[i] for i in big], color="black",
                 linewidth=4, alpha=0.35, label="goal: >= 0.9 x ceiling")
        # One side in place (a CPU device working on the staging itself): the other side's copy
        # is the whole transfer, so that copy alone is the ceiling that matters.
        in_place = ("written in place" if config.get("write_in_place") else
                    "read in place" if config.get("read_in_place") else "")
        one_copy = []
        if in_place:
            key = "primary_h2d_gbps" if config.get("write_in_place") else "worker_d2h_gbps"
            one_copy = [ceilings[s][key] for s in sizes]
            top.plot(xs, one_copy, ":", color="grey", linewidth=2,
                     label="in place: the other side's copy alone")
        throughput = transfer_series(doc, "throughput_gbps")
        plot_series(top, throughput)
        plot_series(bottom, transfer_series(doc, "latency_us"))
        raw = raw_latency(doc)
        rs = [s for s in sizes if s in raw]
        bottom.plot([megapixels(s) for s in rs], [raw[s] for s in rs], ":", color="black",
                    label="raw: worker d2h + primary h2d")
        if "1920x1080" in raw:
            bottom.plot([megapixels("1920x1080")], [1.2 * raw["1920x1080"] + 50], marker="_",
                        markersize=20, mew=3, linestyle="none", color="black",
                        label="goal 1920x1080 whole: 1.2 x raw + 50 us")
        worker, primary = pair_names(doc)
        title = f"{short_device(worker)} -> {short_device(primary)}"
        top.set_title(title + (f"\n{in_place}" if in_place else ""), fontsize="medium")
        log_y(bottom)
        size_axis(bottom, sizes, config.get("format", ""))
        for ax in (top, bottom):
            ax.grid(True, which="both", alpha=0.3)
        highest = max(ceiling + one_copy +
                      [p[3] for points in throughput.values() for p in points])
        top.set_ylim(0, highest * 1.35)
        top.set_ylabel("throughput (GB/s)")
        bottom.set_ylabel("latency (us)")
    handles, labels = [], []
    for ax in [ax for row in axes for ax in row]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize="x-small")
    machines = sorted({machine_name(d) for d in docs})
    fig.suptitle(f"Tandem transfer paths, {', '.join(machines)} (median; bars: min-max)")
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    save(fig, args.out)


def cmd_cuda(args, plt):
    docs = [load(p, "tandem-bench-transfer", is_transfer) for p in args.json]
    cases = []  # (size, banded) in the order the first file has them
    for row in docs[0]["rows"]:
        if row["path"] == "cuda-peer" and (row["size"], row["banded"]) not in cases:
            cases.append((row["size"], row["banded"]))
    if not cases:
        raise ResultError(f"{args.json[0]}: no cuda-peer rows")
    fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE)
    width = 0.8 / len(docs)
    for i, doc in enumerate(docs):
        rows = {(r["size"], r["banded"]): r for r in doc["rows"] if r["path"] == "cuda-peer"}
        label = "CUDA copies " + doc["config"].get("cuda_copies", "host-step")
        xs = [c + (i - (len(docs) - 1) / 2) * width for c in range(len(cases))]
        latency = [rows[c]["latency_us"]["median"] if c in rows else 0 for c in cases]
        ratio = [rows[c]["throughput_vs_ceiling"] if c in rows else 0 for c in cases]
        colour = PATH_COLOURS[i % len(PATH_COLOURS)]
        left.bar(xs, latency, width, label=label, color=colour)
        right.bar(xs, ratio, width, label=label, color=colour)
        for x, y in zip(xs, latency):
            left.annotate(f"{y:.0f}", (x, y), ha="center", va="bottom", fontsize="x-small")
    names = [f"{size}\n{'banded' if banded else 'whole'}" for size, banded in cases]
    for ax in (left, right):
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(names, fontsize="small")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="x-small", loc="upper left")
    right.axhline(0.9, color="black", linestyle="--", label="goal: >= 0.9")
    left.set_ylabel("latency, worker done -> primary ready (us, median)")
    right.set_ylabel("throughput / the path's own ceiling")
    ceiling = docs[0]["rows"][0].get("ceiling", "") if docs[0]["rows"] else ""
    right.set_title(f"ceiling: {ceiling}" if ceiling else "throughput", fontsize="small")
    left.set_title("latency", fontsize="small")
    worker, primary = pair_names(docs[0])
    fig.suptitle(f"Tandem cuda-peer path, {machine_name(docs[0])}: {short_device(worker)} -> "
                 f"{short_device(primary)}, median of {docs[0]['config'].get('runs', '?')}",
                 fontsize="medium")
    fig.tight_layout()
    save(fig, args.out)


def cmd_probe(args, plt):
    runs = []
    for path in args.json:
        doc = load(path, "tandem probe",
                   lambda d: is_probe_run(d) or (d.get("benchmark") == "probe"
                                                 and isinstance(d.get("runs"), list)))
        for run in doc.get("runs", [doc]):
            if "latency_us" not in run:
                raise ResultError(f"{path}: a run has no latency_us")
            runs.append((doc, run))
    stages = [("submit", "submit"), ("worker_done", "worker\ndone"), ("bridge", "bridge"),
              ("primary_done", "primary\ndone"), ("total", "total")]
    fig, axes = plt.subplots(1, len(runs), figsize=FIGSIZE, sharey=True, squeeze=False)
    width = 0.27
    for ax, (doc, run) in zip(axes[0], runs):
        present = [(k, label) for k, label in stages if run["latency_us"].get(k, {}).get("n")]
        for i, (p, colour) in enumerate([("p50", "tab:blue"), ("p95", "tab:orange"),
                                         ("p99", "tab:red")]):
            values = [run["latency_us"][k][p] for k, _ in present]
            bars = ax.bar([j + (i - 1) * width for j in range(len(present))], values, width,
                          label=p, color=colour)
            if p == "p50":
                ax.bar_label(bars, fmt="%.1f", fontsize="x-small")
        ax.set_xticks(range(len(present)))
        ax.set_xticklabels([label for _, label in present], fontsize="small")
        command = run.get("command", "")
        opened = " (one GPU opened twice)" if "--virtual-devices" in command else ""
        sync = {"host-bridge": "host bridge", "gpu": "GPU-side wait"}.get(run.get("sync"),
                                                                          run.get("sync"))
        ax.set_title(f"adapter {run['worker']['index']} -> {run['primary']['index']}{opened}\n"
                     f"{run.get('mode', '')} jobs, {run.get('queue', '')} queues, {sync}; "
                     f"ready {run['ready_rate_hz']:.0f}/s of {run['target_rate_hz']:.0f}/s",
                     fontsize="small")
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_xlabel("stage")
    axes[0][0].set_ylabel("latency per job (us)")
    axes[0][0].legend(fontsize="small")
    doc, run = runs[0]
    names = sorted({short_device(r["worker"]["name"]) for _, r in runs} |
                   {short_device(r["primary"]["name"]) for _, r in runs})
    jobs = sorted({r.get("jobs") for _, r in runs})
    fig.suptitle(f"Tandem probe stages, {machine_name(doc) or ' + '.join(names)} "
                 f"({', '.join(str(j) for j in jobs)} jobs each)")
    fig.text(0.5, 0.01, "submit: request -> submitted; worker done: -> worker's job done; "
             "bridge: -> host bridge forwarded it; primary done: -> primary's job done; "
             "total: request -> primary done", ha="center", fontsize="x-small")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, args.out)


def result_label(path):
    name = os.path.basename(path)
    name = re.sub(r"(-\d{4}-\d{2}-\d{2})?\.json$", "", name)
    return name


def goal(doc, name):
    for g in doc.get("goals", []):
        if g.get("name") == name:
            return g
    return None


def row(doc, name):
    for r in doc.get("rows", []):
        if r.get("name") == name:
            return r
    return None


def cmd_runtime(args, plt):
    docs = [load(p, "tandem-bench-runtime", lambda d: d.get("benchmark") == "runtime"
                 and "goals" in d and "rows" in d) for p in args.json]
    labels = args.label or []
    if labels and len(labels) != len(docs):
        raise ResultError("give one --label per JSON file or none")
    labels = labels or [result_label(p).replace("-runtime", "") for p in args.json]
    labels = [f"{label}\n{d['config'].get('transfer_path', '')}, {d['config'].get('slots', '?')}"
              f" slots" for label, d in zip(labels, docs)]
    panels = [("decoupling_ratio_30fps_over_unlimited",
               "decoupling:\nready rate 30 FPS / unlimited", "ratio"),
              ("pipelining_ratio_over_serial", "pipelining:\npipelined / serial", "ratio"),
              ("app_thread_us_median", "app-thread cost per task\nper frame, median", "us")]
    fig, axes = plt.subplots(1, 4, figsize=FIGSIZE, sharey=True)
    ys = list(range(len(docs)))[::-1]
    for ax, (name, title, unit) in zip(axes, panels):
        values, colours, target = [], [], None
        for d in docs:
            g = goal(d, name)
            values.append(g["measured"] if g else 0)
            colours.append("tab:green" if g and g["met"] else "tab:red")
            target = g["target"] if g else target
        bars = ax.barh(ys, values, color=colours, height=0.6)
        ax.bar_label(bars, fmt="%.2f", fontsize="x-small", label_type="center", color="white")
        if target is not None:
            ax.axvline(target, color="black", linestyle="--", label=f"goal {target:g}")
        ax.set_title(title, fontsize="small")
        ax.set_xlabel(unit)
        ax.legend(fontsize="x-small", loc="lower right")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_xlim(0, max(values + [target or 0]) * 1.3)
    ax = axes[3]
    h = 0.25
    shown = False
    for y, d in zip(ys, docs):
        outside = row(d, "frame_ms_60fps_outside_moves")
        during = row(d, "frame_ms_60fps_during_moves")
        if not outside or not during:
            continue
        ax.barh(y + h, outside["value"]["median"], h, color="tab:blue",
                label=None if shown else "outside moves: median")
        ax.barh(y, during["value"]["median"], h, color="tab:cyan",
                label=None if shown else "during: median")
        ax.barh(y - h, during["value"]["max"], h, color="tab:purple",
                label=None if shown else "during: longest")
        g = goal(d, "longest_frame_during_moves_over_median")
        if g:
            ax.plot([g["target"] * outside["value"]["median"]], [y], marker="|", markersize=14,
                    mew=2, color="black", linestyle="none",
                    label=None if shown else f"goal: {g['target']:g} x outside median")
            moves = row(d, "moves") or {}
            ax.text(max(during["value"]["max"], g["target"] * outside["value"]["median"]) + 1,
                    y,
                    f"{g['measured']:.3f}x, {moves.get('completed', '?')} moves",
                    fontsize="x-small", va="center")
        shown = True
    ax.set_title("60 FPS loop, frame start\nto start, task moves", fontsize="small")
    ax.set_xlabel("ms")
    ax.set_xlim(0, 58)
    ax.legend(fontsize="x-small", loc="upper right", handlelength=1.0, borderaxespad=0.2)
    ax.grid(True, axis="x", alpha=0.3)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(labels, fontsize="x-small")
    machines = []
    for d in docs:
        m = machine_name(d)
        if m not in machines:
            machines.append(m)
    fig.suptitle(f"Tandem runtime goals (tandem-bench-runtime), {'; '.join(machines)}\n"
                 "green: goal met, red: not met", fontsize="medium")
    fig.tight_layout()
    save(fig, args.out)


CONFIGS = [("no-captures", "no captures", "tab:grey"),
           ("captures-on-worker", "captures on worker", "tab:green"),
           ("captures-on-primary", "captures on primary", "tab:red")]
PHRASES = {"no captures": "no-captures", "captures on worker": "captures-on-worker",
           "captures on primary": "captures-on-primary"}


def cmd_offload(args, plt):
    docs = [load(p, "bench/offload", lambda d: d.get("benchmark") == "offload" and "rows" in d)
            for p in args.json]
    groups = []  # (label, doc, metric key)
    for d in docs:
        c = d.get("config", {})
        what = f"crowd {c.get('crowd', '?')}"
        if "slots" in c:
            what += f", {c['slots']} slots"
        what += f"\nmain view {c.get('size', '?')}"
        for key, metric in [("frame_ms", "mean"), ("frame_p99_ms", "p99")]:
            if all(key in r for r in d["rows"]):
                groups.append((f"{what}\nframe time {metric}", d, key, metric))
    fig, ax = plt.subplots(figsize=FIGSIZE)
    width = 0.27
    goal_labels = set()
    for gi, (label, d, key, metric) in enumerate(groups):
        rows = {r["name"]: r for r in d["rows"]}
        for i, (name, text, colour) in enumerate(CONFIGS):
            if name not in rows:
                continue
            s = rows[name][key]
            x = gi + (i - 1) * width
            bar = ax.bar([x], [s["median"]], width, color=colour,
                         yerr=[[s["median"] - s["min"]], [s["max"] - s["median"]]], capsize=3,
                         label=text if gi == 0 else None)
            ax.bar_label(bar, fmt="%.2f", fontsize="x-small", label_type="center",
                         color="white")
        for g in d.get("goals", []):
            m = re.match(r"frame time (p99 )?(.+?) / (.+?)( \(contrast\))?$", g.get("name", ""))
            if not m or g.get("target") is None or bool(m.group(1)) != (metric == "p99"):
                continue
            a, b = PHRASES.get(m.group(2)), PHRASES.get(m.group(3))
            if a not in rows or b not in rows:
                continue
            limit = g["target"] * rows[b][key]["median"]
            i = [n for n, _, _ in CONFIGS].index(a)
            x = gi + (i - 1) * width
            sign = "<=" if a == "captures-on-worker" else ">="
            text = f"goal: {m.group(1) or ''}{m.group(2)} {sign} {g['target']:g} x {m.group(3)}"
            ax.plot([x - width / 2, x + width / 2], [limit, limit],
                    color="black" if sign == "<=" else "tab:blue", linewidth=2.5,
                    label=text if text not in goal_labels else None)
            goal_labels.add(text)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize="small")
    ax.set_ylabel("primary frame time (ms, median of runs; bars: min-max)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    machines = sorted({machine_name(d) for d in docs})
    workers = sorted({short_device(pair_names(d)[0]) for d in docs})
    primaries = sorted({short_device(pair_names(d)[1]) for d in docs})
    tasks = sorted({d.get("config", {}).get("tasks", "?") for d in docs})
    ax.set_title(f"Tandem offload (tandem run), {', '.join(machines)}: primary "
                 f"{', '.join(primaries)}, worker {', '.join(workers)}\ntasks "
                 f"{'; '.join(tasks)}", fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    fig.tight_layout()
    save(fig, args.out)


def cmd_run(args, plt):
    doc = load(args.json[0], "tandem run report",
               lambda d: isinstance(d.get("tasks"), list) and "frame_time_ms" in d)
    tasks = doc["tasks"]
    fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE,
                                      gridspec_kw={"width_ratios": [3, 2]})
    width = 0.27
    xs = range(len(tasks))
    for i, (p, colour) in enumerate([("p50_us", "tab:blue"), ("p90_us", "tab:orange"),
                                     ("p99_us", "tab:red")]):
        # A task with no outputs has null figures: no bar.
        values = [(t["latency_us"]["ready_observed"][p] or 0) / 1000 for t in tasks]
        bars = left.bar([x + (i - 1) * width for x in xs], values, width, color=colour,
                        label=p.replace("_us", ""))
        left.bar_label(bars, fmt="%.1f", fontsize="x-small")
    log_y(left)
    left.set_ylabel("request -> ready (ms, log scale)")
    left.set_xticks(list(xs))
    left.set_xticklabels([f"{t['name']}\n{t['size'][0]}x{t['size'][1]}" for t in tasks])
    left.set_title("latency per task", fontsize="medium")
    left.legend(fontsize="small")
    left.grid(True, axis="y", which="both", alpha=0.3)
    right.bar([x - 0.2 for x in xs], [t["rate_hz"] for t in tasks], 0.4, color="tab:grey",
              label="requested")
    bars = right.bar([x + 0.2 for x in xs], [t["ready_rate_hz"] for t in tasks], 0.4,
                     color="tab:green", label="ready")
    right.bar_label(bars, fmt="%.1f", fontsize="x-small")
    right.set_ylabel("updates per second (Hz)")
    right.set_xticks(list(xs))
    right.set_xticklabels([t["name"] for t in tasks])
    right.set_title("rate per task", fontsize="medium")
    right.legend(fontsize="small", loc="upper right")
    right.grid(True, axis="y", alpha=0.3)
    right.set_ylim(0, max(t["rate_hz"] for t in tasks) * 1.25)
    devices = {d["index"]: d for d in doc.get("devices", [])}
    primary = next((d["name"] for d in devices.values() if d.get("role") == "primary"), "?")
    workers = sorted({short_device(t["device"]["name"]) for t in tasks})
    ft = doc["frame_time_ms"]
    fig.suptitle(f"tandem run: main view on {short_device(primary)}, captures on "
                 f"{', '.join(workers)} ({tasks[0].get('transfer_path', '')})\nprimary frame "
                 f"time mean {ft['mean']:.1f} ms, p99 {ft['p99']:.1f} ms, paced at "
                 f"{doc.get('fps'):g} FPS, {doc.get('frames')} frames", fontsize="medium")
    fig.tight_layout()
    save(fig, args.out)


def cmd_stream(args, plt):
    doc = load(args.json[0], "bench/stream", lambda d: d.get("benchmark") == "stream-fps"
               and "rows" in d)
    rows = doc["rows"]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    xs = range(len(rows))
    med = [r["ready_hz"]["median"] for r in rows]
    err = [[r["ready_hz"]["median"] - r["ready_hz"]["min"] for r in rows],
           [r["ready_hz"]["max"] - r["ready_hz"]["median"] for r in rows]]
    bars = ax.bar(list(xs), med, 0.35, yerr=err, capsize=4, color="tab:green",
                  label="task ready rate (median; bars: min-max)")
    ax.bar_label(bars, fmt="%.1f", label_type="center", color="white")
    rate = doc["config"].get("rate_hz")
    if rate:
        ax.axhline(rate, color="grey", linestyle=":", label=f"requested {rate:g} Hz")
    ceiling = doc.get("ceilings", {}).get("ready_hz_fps_30")
    g = (doc.get("goals") or [None])[0]
    if ceiling and g:
        ax.axhline(g["target"] * ceiling, color="black", linestyle="--",
                   label=f"goal: unlimited >= {g['target']:g} x 30 FPS "
                         f"(measured {g['measured']:.3f})")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"frame loop {r['fps']}"
                        f"{' FPS' if r['fps'] != 'unlimited' else ''}\n"
                        f"({r['frames_hz']['median']:,.0f} frames/s)" for r in rows])
    ax.set_ylabel("ready rate (Hz)")
    ax.set_xlim(-0.6, len(rows) + 0.6)
    ax.set_ylim(0, (rate or max(med)) * 1.15)
    c = doc["config"]
    ax.set_title(f"Tandem stream, {machine_name(doc)}: a {c.get('size', '')} pattern task on "
                 f"{c.get('workers', '?')} ({c.get('placement', '')}),\nmedian of "
                 f"{c.get('runs', '?')} runs of {c.get('duration_s', '?'):g} s",
                 fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    save(fig, args.out)


def cmd_placement(args, plt):
    doc = load(args.json[0], "tandem-bench-placement",
               lambda d: d.get("benchmark") == "placement" and "prediction_samples" in d)
    devices = {d["index"]: d for d in doc["machine"].get("devices", [])}
    fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE,
                                      gridspec_kw={"width_ratios": [3, 2]})
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    markers = {"security": "o", "mirror": "s", "minimap": "^"}
    samples = doc["prediction_samples"]
    adapters = sorted({s["adapter"] for s in samples})
    for a in adapters:
        for task, marker in markers.items():
            pts = [s for s in samples if s["adapter"] == a and s["task"] == task]
            left.scatter([s["measured_ms"] for s in pts],
                         [100 * (s["predicted_ms"] - s["measured_ms"]) / s["measured_ms"]
                          for s in pts],
                         marker=marker, color=colours[a % len(colours)], alpha=0.6, s=30)
    for a in adapters:
        name = short_device(devices.get(a, {}).get("name", f"adapter {a}"))
        left.scatter([], [], marker="o", color=colours[a % len(colours)],
                     label=f"adapter {a}: {name}")
    for task, marker in markers.items():
        left.scatter([], [], marker=marker, color="grey", label=task)
    left.axhline(0, color="black", linewidth=1)
    left.axhline(20, color="black", linestyle=":", label="goal: median |error| <= 20%")
    left.axhline(-20, color="black", linestyle=":")
    left.set_xscale("log")
    left.set_xlabel("measured GPU time per update (ms, log scale)")
    left.set_ylabel("predicted - measured (% of measured)")
    err = doc.get("prediction_error", {})
    by_type = err.get("by_device_type", {})
    parts = [f"{t} {v['median_error'] * 100:.1f}% ({v['samples']})"
             for t, v in sorted(by_type.items())]
    left.set_title(f"predicted execute cost against measured, per task and device\nmedian "
                   f"|error| {err.get('median', 0) * 100:.1f}% ({len(samples)} samples); "
                   f"{', '.join(parts)}", fontsize="small")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize="x-small", loc="lower left")
    lim = max(abs(100 * (s["predicted_ms"] - s["measured_ms"]) / s["measured_ms"])
              for s in samples)
    left.set_ylim(-max(lim, 20) * 1.3, max(lim, 20) * 1.3)

    rows = sorted(doc["rows"], key=lambda r: r["frame_ms"]["median"])
    cpu = {i for i, d in devices.items() if d.get("type") == "cpu"}
    for i, r in enumerate(rows):
        s = r["frame_ms"]
        auto = r["name"].startswith("auto")
        on_cpu = any(a in cpu for a in r["assignment"])
        colour = "black" if auto else ("tab:red" if on_cpu else "tab:blue")
        right.errorbar([i], [s["median"]], yerr=[[s["median"] - s["min"]],
                                                 [s["max"] - s["median"]]],
                       marker="D" if auto else "o", color=colour, capsize=2, markersize=5)
        if auto or i == 0:
            text = r["name"] if auto else f"best: {r['name']}"
            right.annotate(text, (i, s["median"]), xytext=(30, 40) if auto else (4, 70),
                           textcoords="offset points", fontsize="x-small",
                           arrowprops={"arrowstyle": "-", "color": "grey"})
    for colour, marker, text in [("black", "D", "auto"), ("tab:blue", "o", "fixed, GPUs only"),
                                 ("tab:red", "o", "fixed, a task on the CPU device")]:
        right.plot([], [], marker=marker, color=colour, linestyle="none", label=text)
    right.set_xticks([])
    right.set_xlabel(f"{len(rows)} runs, fastest first\n(assignment: adapter of "
                     f"{', '.join(doc['config'].get('tasks', []))})", fontsize="small")
    right.set_ylabel("primary frame time (ms, median; bars: min-max)")
    g = goal(doc, "best_over_auto_frame_time")
    right.set_title(f"frame time per assignment\nbest fixed / auto: {g['measured']:.3f} "
                    f"(goal >= {g['target']:g})" if g else "frame time per assignment",
                    fontsize="small")
    right.grid(True, axis="y", alpha=0.3)
    right.legend(fontsize="x-small", loc="upper left")
    c = doc.get("config", {})
    fig.suptitle(f"Tandem scheduler (tandem-bench-placement), {machine_name(doc)}: demo tasks, "
                 f"{c.get('frames', '?')} frames per run, median of {c.get('runs', '?')}",
                 fontsize="medium")
    fig.tight_layout()
    save(fig, args.out)


COMMANDS = {
    "latency": (cmd_latency, "transfer latency per path and image size", False),
    "transfer": (cmd_transfer, "transfer throughput and latency, one column per file", True),
    "cuda": (cmd_cuda, "cuda-peer path: latency and throughput per way of copying", True),
    "probe": (cmd_probe, "tandem probe latency per stage", True),
    "runtime": (cmd_runtime, "tandem-bench-runtime goals per result file", True),
    "offload": (cmd_offload, "offload benchmark primary frame times", True),
    "run": (cmd_run, "tandem run report: latency and rate per task", False),
    "stream": (cmd_stream, "stream benchmark ready rates", False),
    "placement": (cmd_placement, "placement benchmark: predicted against measured cost", False),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, text, many) in COMMANDS.items():
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("json", nargs="+" if many else 1, help="result file(s) in bench/results/")
        p.add_argument("-o", "--out", required=True, help="PNG to write")
        if name == "latency":
            p.add_argument("--sync", help="tandem probe --mode signal result: sync latency, goal")
        if name == "runtime":
            p.add_argument("--label", action="append", help="bar label per JSON, in order")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plotting needs matplotlib: apt-get install python3-matplotlib", file=sys.stderr)
        return 1
    try:
        COMMANDS[args.command][0](args, plt)
    except ResultError as e:
        print(e, file=sys.stderr)
        return 1
    except (KeyError, TypeError, IndexError) as e:
        print(f"{', '.join(args.json)}: not the {args.command} result expected "
              f"(missing or odd field: {e})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
