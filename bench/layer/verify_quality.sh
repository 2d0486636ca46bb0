#!/usr/bin/env bash
# Frame generation from colour alone, on programs written elsewhere, in the layer's verify mode
# (TANDEM_FRAMEGEN_VERIFY=1): every other real frame is held back from the worker, generated from
# its neighbours, and compared with the frame the program drew, beside the blend of the two. On
# lavapipe opened twice (primary and worker) under a virtual X server, without validation.
#
#   verify_quality.sh BUILD_DIR OUT_DIR
#
# Runs vkcube (a fixed turn of 4 degrees a frame) at 128x128 and 256x256, and mpv playing a
# testsrc2 clip ffmpeg makes here (320x240, 30 fps, 6 s; --untimed: each frame presented once).
# Writes OUT_DIR/verify-quality.json (each run's verify figures and the goal: generated >= blend
# + 3 dB) and, per run, a PNG of the first comparison's truth, generated frame and blend.
set -euo pipefail
build=$1
out=$2
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lvp_icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json | head -n 1)
export VK_DRIVER_FILES=$lvp_icd XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export VK_ADD_LAYER_PATH=$build/layer VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation
export TANDEM_FRAMEGEN_VERIFY=1 TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_DUMP_FRAMES=8
unset TANDEM_FRAMEGEN_MULTIPLIER TANDEM_FRAMEGEN_WORKER TANDEM_FRAMEGEN_CONFIG
export XDG_CONFIG_HOME=$out/no-config

# run NAME COMMAND...: the program under xvfb-run with the layer in verify mode.
run() {
    local name=$1
    shift
    rm -rf "$out/$name.dump"
    echo "$name: $*" >&2
    TANDEM_FRAMEGEN_REPORT=$out/$name.report.json TANDEM_FRAMEGEN_DUMP=$out/$name.dump \
        timeout -k 5 300 xvfb-run -a "$@" >"$out/$name.out" 2>"$out/$name.err"
    python3 "$here/side_by_side.py" "$out/$name.png" 2 "$out/$name.dump/00004-truth.ppm" \
        "$out/$name.dump/00004-generated.ppm" "$out/$name.dump/00004-blend.ppm"
}

run vkcube-128 vkcube --c 600 --width 128 --height 128
run vkcube-256 vkcube --c 600 --width 256 --height 256
ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=30:duration=6 -c:v mpeg4 \
    -q:v 2 "$out/testsrc2.mkv"
device=$(vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName *= //p' | head -n 1)
run mpv-testsrc2 mpv --no-config --terminal=no --no-audio --osc=no --vo=gpu --gpu-api=vulkan \
    --gpu-context=x11vk --vulkan-device="$device" --untimed --framedrop=no --keep-open=no \
    "$out/testsrc2.mkv"

python3 - "$out" "$device" <<'PY'
import datetime, json, os, sys
out, device = sys.argv[1], sys.argv[2]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
runs = []
for name in ("vkcube-128", "vkcube-256", "mpv-testsrc2"):
    report = json.load(open(os.path.join(out, name + ".report.json")))
    v = report["verify"]
    runs.append({"run": name, "program": report["program"], "verify": v,
                 "real_frames_presented": report["real_frames_presented"],
                 "goal_gain_db": 3.0, "met": v["frames"] > 0 and v["gain_db"] >= 3.0})
doc = {"date": datetime.date.today().isoformat(),
       "machine": f"{os.cpu_count()}-core host ({cpu}), {device} opened twice (primary and worker)",
       "what": "layer verify mode: PSNR of each held-back frame generated from its neighbours, "
               "and of the blend of the two, against the frame the program drew",
       "runs": runs}
json.dump(doc, open(os.path.join(out, "verify-quality.json"), "w"), indent=2)
for r in runs:
    v = r["verify"]
    print(f"{r['run']:14} frames {v['frames']:4}  generated {v['generated_psnr_db_mean']:.2f} dB  "
          f"blend {v['blend_psnr_db_mean']:.2f} dB  gain {v['gain_db']:+.2f} dB  "
          f"{'met' if r['met'] else 'NOT met'}")
PY
