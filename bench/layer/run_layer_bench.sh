#!/usr/bin/env bash
# The frame-generation layer on a GPU machine without a display: tandem-layer-present-probe at
# each size and frame rate, first without the layer, then with it at 2x (its report beside), and
# one JSON file of both per run. Both runs present to swapchains of the bench's own layer beneath
# (VK_LAYER_TANDEM_bench_headless_swapchain: plain images, each free again once its present's
# semaphores signalled, as a display with no refresh).
#
#   run_layer_bench.sh BUILD_DIR OUT_DIR [DEVICE-NAME-PART]
#
# Each run: the probe's own figures (its frame rate, the time its present calls took) without and
# with the layer, and the layer's report (real, generated and skipped frames, the worker's pass
# time, the primary's copy of each frame, the paths). TANDEM_FRAMEGEN_WORKER picks the worker
# (default: the program's device opened a second time where it is the only one), and the layer's
# other settings reach it from the environment as well: with TANDEM_FRAMEGEN_SCALE (scaling), the
# sizes are the program's (the window's is each divided by the scale), and the figures of the
# report include the frames upscaled on the worker and by the primary. LAYER_BENCH_SIZES (default
# "1920x1080 2560x1440") and LAYER_BENCH_RATES ("60 120") choose the runs.
set -euo pipefail
build=$1
out=$2
device=${3:-}
mkdir -p "$out"
probe=$build/bench/layer/tandem-layer-present-probe
# The driver's swapchains would do where it has VK_EXT_headless_surface; the GPU machines' NVIDIA
# driver has none, so both runs present through the bench's swapchain layer
# (headless_swapchain_layer.cpp), the program's own frame rate measured alike.
headless=VK_LAYER_TANDEM_bench_headless_swapchain
for size in ${LAYER_BENCH_SIZES:-1920x1080 2560x1440}; do
    for fps in ${LAYER_BENCH_RATES:-60 120}; do
        w=${size%x*}
        h=${size#*x}
        name=$out/layer-${size}-${fps}fps
        args=(--width "$w" --height "$h" --fps "$fps" --frames $((fps * 5)))
        [ -z "$device" ] || args+=(--device "$device")
        VK_ADD_LAYER_PATH=$build/bench/layer VK_INSTANCE_LAYERS=$headless \
            "$probe" "${args[@]}" >"$name.off.json"
        # The loader (1.3.239) orders explicit layers by where it found their manifests: the
        # frame-generation layer's folder first puts it above the swapchain layer.
        VK_ADD_LAYER_PATH=$build/layer:$build/bench/layer \
            VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation:$headless \
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
      f"layer's copies p50 {dev['layer_copy_us_p50'] or 0:.0f} us, "
      f"present call p50 {off['present_call_us_p50']:.0f} -> {on['present_call_us_p50']:.0f} us"
      + (f", upscaled {dev['upscaled_frames']} blitted {dev['blitted_frames']} to "
         f"{dev['window_extent']}" if dev.get("window_extent") else ""))
PY
    done
done
