#!/usr/bin/env bash
# The frame-generation layer on a GPU machine without a display: tandem-layer-present-probe at
# each size and frame rate, first without the layer, then with it at 2x (its report beside), and
# one JSON file of both per run.
#
#   run_layer_bench.sh BUILD_DIR OUT_DIR [DEVICE-NAME-PART]
#
# Each run: the probe's own figures (its frame rate, the time its present calls took) without and
# with the layer, and the layer's report (real, generated and skipped frames, the worker's pass
# time, the primary's copy of each frame, the paths). TANDEM_FRAMEGEN_WORKER picks the worker
# (default: the program's device opened a second time where it is the only one).
set -euo pipefail
build=$1
out=$2
device=${3:-}
mkdir -p "$out"
probe=$build/bench/layer/tandem-layer-present-probe
for size in 1920x1080 2560x1440; do
    for fps in 60 120; do
        w=${size%x*}
        h=${size#*x}
        name=$out/layer-${size}-${fps}fps
        args=(--width "$w" --height "$h" --fps "$fps" --frames $((fps * 5)))
        [ -z "$device" ] || args+=(--device "$device")
        env -u VK_INSTANCE_LAYERS "$probe" "${args[@]}" >"$name.off.json"
        VK_ADD_LAYER_PATH=$build/layer VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation \
            TANDEM_FRAMEGEN_REPORT=$name.report.json "$probe" "${args[@]}" >"$name.on.json"
        python3 - "$name" <<'PY'
import json, sys
name = sys.argv[1]
off = json.load(open(name + ".off.json"))
on = json.load(open(name + ".on.json"))
report = json.load(open(name + ".report.json"))
dev = report["devices"][0]
result = {
    "probe_without_layer": off,
    "probe_with_layer": on,
    "program_fps_ratio": on["fps"] / off["fps"],
    "generated_per_real": report["generated_frames"] / max(1, report["real_frames_presented"]),
    "layer_report": report,
}
json.dump(result, open(name + ".json", "w"), indent=2)
print(f"{name}: fps {off['fps']:.1f} -> {on['fps']:.1f}, generated/real "
      f"{result['generated_per_real']:.3f}, skipped {report['skipped_frames']}, "
      f"pass p50 {dev['worker_pass_us_p50']:.0f} us, copy p50 {dev['input_copy_us_p50']:.0f} us, "
      f"present call p50 {off['present_call_us_p50']:.0f} -> {on['present_call_us_p50']:.0f} us")
PY
    done
done
