#!/usr/bin/env bash
# Runs mpv (--vo=gpu on Vulkan through libplacebo) on lavapipe under a virtual X server, playing a
# clip that ffmpeg makes here (testsrc2), once with the validation layer alone and once with the
# Tandem layer above it at 2x, and checks what a user depends on: mpv plays to the clip's end and
# exits 0 with the layer, the layer adds no validation message to those mpv makes on its own, and
# the layer's report counts the frames mpv presented.
#
#   layer_mpv.sh CASE LAYER_DIR TANDEM_CLI BUILD_DIR WORK_DIR EXIT_PROBE
#
# The arguments are layer_programs.sh's (CASE is mpv, mpv_display_worker or mpv_scaling;
# TANDEM_CLI, BUILD_DIR and EXIT_PROBE are unused). mpv_display_worker is mpv with the worker as
# the display (TANDEM_FRAMEGEN_DISPLAY=worker): every frame shown by the worker, and no
# validation message beyond mpv's own. mpv_scaling plays the clip with the layer scaling it
# (TANDEM_FRAMEGEN_SCALE=0.5) without the validation layer: mpv sizes its swapchain by its window
# (libplacebo asks for the window's size and takes the surface's, half of it, so it may recreate
# its swapchain each frame), and its own validation messages then grow with the swapchains it
# makes, which its runs alone cannot match; the layer's scaling is held to no validation message
# on vkcube and the swapchain probe (layer_programs.sh). A missing mpv, ffmpeg, vulkaninfo or xvfb-run fails the test (scripts/install-deps.sh
# installs them): a test that skipped on a machine without them would hide a layer mpv can't load.
set -euo pipefail
case_name=$1
layer_dir=$2
work=$5/$case_name
rm -rf "$work"
mkdir -p "$work"

# shellcheck source=tests/layer/layer_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/layer_common.sh"

case "$case_name" in
mpv | mpv_display_worker | mpv_scaling) ;;
*) fail "unknown case" ;;
esac
require_tools "scripts/install-deps.sh installs xvfb, mpv, ffmpeg, vulkan-tools" xvfb-run mpv ffmpeg \
    vulkaninfo python3
lavapipe_only

# mpv refuses a CPU device unless --vulkan-device names it; libplacebo matches the deviceName.
device_name=$(vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName *= //p')
if [ "$(printf '%s\n' "$device_name" | wc -l)" -ne 1 ] || [[ $device_name != llvmpipe* ]]; then
    fail "vulkaninfo --summary names no single lavapipe device: '$device_name'"
fi

# 3 s at 30 fps, MPEG-4 part 2 (libavcodec's own encoder and decoder: no codec package needed).
clip_frames=90
ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x240:rate=30:duration=3 -c:v mpeg4 \
    -q:v 5 "$work/clip.mkv" || fail "ffmpeg could not make the clip"

validation=${TANDEM_VALIDATION:-sync}
[ "$case_name" != mpv_scaling ] || validation=off
case "$validation" in
0 | off) validation_layers= ;;
*) validation_layers=VK_LAYER_KHRONOS_validation ;;
esac

# run_mpv NAME: plays the clip under xvfb-run with a minute's limit, the validation layer's
# messages to $work/NAME.validation (vk_layer_settings.txt in a folder of the run's own),
# mpv's log to $work/NAME.log; returns mpv's exit status. --untimed and --framedrop=no: every
# frame of the clip rendered and presented once, as fast as lavapipe goes. --terminal=no: mpv
# writes nothing to stdout or stderr, so anything there is someone else's. vo=trace: libplacebo
# logs each vkQueuePresentKHR, the count the report is held to.
run_mpv() {
    local name=$1
    local settings=$work/$name.settings
    mkdir -p "$settings"
    {
        echo "khronos_validation.report_flags = error,warn"
        echo "khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG"
        echo "khronos_validation.log_filename = $work/$name.validation"
        if [ "$validation" = sync ]; then
            echo "khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
        fi
    } >"$settings/vk_layer_settings.txt"
    : >"$work/$name.validation"
    local status=0
    VK_LAYER_SETTINGS_PATH=$settings timeout -k 5 60 xvfb-run -a mpv --no-config --terminal=no \
        --log-file="$work/$name.log" --msg-level=vo=trace --no-audio --osc=no --ytdl=no \
        --load-stats-overlay=no --load-osd-console=no --load-auto-profiles=no \
        --vo=gpu --gpu-api=vulkan --gpu-context=x11vk --vulkan-device="$device_name" \
        --untimed --framedrop=no --keep-open=no ${mpv_extra:+"$mpv_extra"} "$work/clip.mkv" \
        >"$work/$name.out" 2>"$work/$name.err" || status=$?
    [ "$status" -ne 124 ] || fail "mpv ($name) did not end within 60 s (a hang)"
    [ "$status" -eq 0 ] || fail "mpv ($name) exited with status $status"
    grep -q "Exiting... (End of file)" "$work/$name.log" ||
        fail "mpv ($name) did not play to the clip's end (see $work/$name.log)"
}

presents_of() {
    grep -c "vkQueuePresentKHR waits on" "$work/$1.log" || true
}

# play NAME: run_mpv until mpv presents each frame of the clip once, up to 3 times. On a busy
# machine mpv now and then draws its first frame twice (a redraw before the second frame is
# decoded): that run did more work than the others, and its messages would not compare.
play() {
    local name=$1 presents
    for _ in 1 2 3; do
        run_mpv "$name"
        presents=$(presents_of "$name")
        [ "$presents" -ne "$clip_frames" ] || return 0
        echo "mpv ($name) presented $presents frames, the clip has $clip_frames: run again"
    done
    fail "mpv ($name) presented $presents frames in 3 runs, the clip has $clip_frames"
}

# compare_validation LAYER_RUN BASELINE_RUN...: prints the messages of LAYER_RUN beyond those
# mpv made on its own, message by message, and returns 3 if there are any. A message is its first
# line and its object list, with what differs run to run made equal (handles and addresses; the
# synchronisation validation's command and batch counters); each is allowed as many times as it
# came in the baseline run that had it most.
#
# One message is mpv's own in some runs and not in others, whatever the layer does, and is
# allowed once in any run: VUID-vkDestroySemaphore-semaphore-01137 on libplacebo's "swapchain
# out" semaphore. libplacebo 4.208 (vk_sw_destroy) destroys the semaphore its last
# vkQueuePresentKHR waited on after waiting for its own fences only, no vkQueueWaitIdle; the
# validation layer (1.3.239) counts that present pending until a later fence or idle wait on the
# queue, so the message comes when mpv's teardown happens to submit nothing after its last
# present (about 1 run in 4 without the layer, 1 in 2 with it).
compare_validation() {
    python3 - "$work" "$@" <<'PY'
import collections, re, sys

def messages(path):
    found, current = collections.Counter(), None
    def close():
        if current:
            text = " | ".join(current)
            text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
            text = re.sub(r"\b(seq_no|reset_no|batch_tag): \d+", r"\1: ?", text)
            found[(current[0].split("(", 1)[0], text)] += 1
    for line in open(path, errors="replace"):
        if "msgNum:" in line and not line[0].isspace():
            close()
            current = [line.strip()]
        elif current is not None and line.strip():
            current.append(line.strip())
    close()
    return found

def teardown_race(key):
    vuid, text = key
    return vuid == "VUID-vkDestroySemaphore-semaphore-01137" and "[swapchain out]" in text

work, layer_run, baselines = sys.argv[1], sys.argv[2], sys.argv[3:]
with_layer = messages(f"{work}/{layer_run}.validation")
own = collections.Counter()
for run in baselines:
    own |= messages(f"{work}/{run}.validation")  # per message, the largest count
seen_alone = sum(own.values())
excused = 0
for key in with_layer:
    if teardown_race(key) and own[key] == 0:
        own[key], excused = 1, 1
added = with_layer - own
print(f"validation messages: {seen_alone} from mpv alone (most of {len(baselines)} run(s)), "
      f"{sum(with_layer.values())} with the layer ({excused} of them mpv's teardown race, "
      f"not in a run alone), {sum(added.values())} added")
for (vuid, text), count in list(added.items())[:5]:
    print(f"  added {count}x {vuid}: {text[:600]}")
sys.exit(3 if added else 0)
PY
}

if [ "$case_name" = mpv_scaling ]; then
    # Every frame presented at the window's size as the worker upscaled it, and the frames
    # generated between them, with the tasks kept across the swapchains mpv makes at one size.
    export VK_ADD_LAYER_PATH=$layer_dir VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_SCALE=0.5
    export TANDEM_FRAMEGEN_WAIT_MS=1000
    play scaled
    check_report "$work/report.json" "r['real_frames_presented'] == $clip_frames" \
        "r['devices'][0]['program_extent'] == [160, 120]" \
        "r['devices'][0]['window_extent'] == [320, 240]" \
        "r['devices'][0]['upscaled_frames'] >= $((clip_frames - 2))" \
        "r['generated_frames'] >= $((clip_frames * 9 / 10))"
    echo "layer.$case_name: ok"
    exit 0
fi

start=$SECONDS
export VK_INSTANCE_LAYERS=$validation_layers
play baseline-1
# The layer gives each swapchain two more images than the program asks for (the frame it holds
# back, and one for a generated frame), and mpv names every object it makes per swapchain image
# with vkSetDebugUtilsObjectNameEXT without enabling VK_EXT_debug_utils: 7 messages of its own per
# image. Its own run with as many images (libplacebo makes --swapchain-depth images, 3 by
# default) is the baseline for those.
mpv_extra=--swapchain-depth=5 play baseline-2

export VK_ADD_LAYER_PATH=$layer_dir
export VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation${validation_layers:+:$validation_layers}
export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_MULTIPLIER=2
display=program
[ "$case_name" != mpv_display_worker ] || display=worker
TANDEM_FRAMEGEN_DISPLAY=$display play layer
unset VK_ADD_LAYER_PATH TANDEM_FRAMEGEN_REPORT TANDEM_FRAMEGEN_MULTIPLIER
export VK_INSTANCE_LAYERS=$validation_layers
layer_presents=$(presents_of layer)

[ ! -s "$work/layer.out" ] ||
    fail "something wrote to mpv's stdout with the layer: $(head -c 300 "$work/layer.out")"
! grep -q "tandem-layer:" "$work/layer.err" || fail "log lines without TANDEM_FRAMEGEN_LOG"

if [ -n "$validation_layers" ]; then
    # mpv 0.35 makes some 1,800 messages of its own (vkSetDebugUtilsObjectNameEXT and debug labels
    # without VK_EXT_debug_utils; a synchronisation hazard per frame): none in either run would
    # mean the validation layer was not there, and the comparison below would prove nothing.
    if [ ! -s "$work/baseline-1.validation" ] || [ ! -s "$work/layer.validation" ]; then
        fail "no validation message from mpv in a run: is the validation layer loaded?"
    fi
    # Other counts of mpv's own vary a little run to run too (one semaphore, so one object name,
    # fewer in about 1 run in 12): a message beyond the first baseline is looked for in more runs
    # without the layer, up to 6 in all. Only a message mpv was seen to make on its own is
    # subtracted, and never more often than it made it in one run.
    baselines=(baseline-1 baseline-2)
    while :; do
        status=0
        compare_validation layer "${baselines[@]}" >"$work/compare.txt" || status=$?
        [ "$status" -ne 0 ] || break
        [ "$status" -eq 3 ] || fail "the comparison of validation messages failed ($status)"
        if [ ${#baselines[@]} -ge 7 ]; then
            cat "$work/compare.txt" >&2
            fail "the layer added validation messages (above) to those of mpv alone"
        fi
        next=baseline-$((${#baselines[@]} + 1))
        play "$next"
        baselines+=("$next")
    done
    cat "$work/compare.txt"
fi

# The report counts exactly the presents mpv logged (play saw them equal the clip's frames).
report_checks=(
    "r['program'] == 'mpv'"
    "r['real_frames_presented'] == $layer_presents"
    "r['swapchains_created'] >= 1"
    "r['multiplier_requested'] == 2"
    "'llvmpipe' in r['device']"
    "r['devices_open'] == 0"
    "r['mode'] == 'generating'"
    "r['generated_frames'] + r['skipped_frames'] < r['real_frames_presented']"
    "r['devices'][0]['display'] == '$display'"
    "r['devices'][0]['real_frames_not_shown'] == 0"
)
check_report "$work/report.json" "${report_checks[@]}"
echo "frames presented with the layer: $layer_presents by mpv's log (the clip has $clip_frames)," \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["real_frames_presented"])' \
        "$work/report.json") in the report; $((SECONDS - start)) s for the runs"
echo "layer.$case_name: ok"
