#!/usr/bin/env bash
# Runs programs written elsewhere (vkcube, vkcubepp from vulkan-tools) with the Tandem layer
# enabled on lavapipe, under a virtual X server (xvfb-run -a), with the Khronos validation layer
# beneath it (synchronisation validation too, unless TANDEM_VALIDATION is off or 0), and checks
# what a user depends on: the program behaves as without the layer, the validation layer sees
# nothing wrong in what the layer and the Tandem runtime it embeds do on the program's device,
# frames are generated on the worker (lavapipe opened a second time) and presented, and the
# layer's report counts what was presented.
#
#   layer_programs.sh CASE LAYER_DIR TANDEM_CLI BUILD_DIR WORK_DIR EXIT_PROBE SWAPCHAIN_PROBE
#                     WINDOWS_PROBE
#
# CASE: vkcube | vkcubepp | generated | generated_three | multiplier_one | swapchain_churn |
#       two_programs | validation_canary | bad_multiplier | killed | installed_implicit | exit_without_destroy |
#       cli_status | cli_run | worker_lost | verify | verify_compute | dump | dump_compute |
#       display_worker | display_worker_scaled | display_worker_churn | display_worker_lost |
#       pacing |
#       swapchain_same_size |
#       scaling | scaling_generated | scaling_no_worker | scaling_churn | two_windows |
#       two_windows_together | two_windows_scaled | ten_bit | ten_bit_scaled |
#       device_before_swapchain
# A missing xvfb-run or vkcube fails the case (scripts/install-deps.sh installs both): a test
# that skipped on a machine without them would hide a layer that no longer loads.
set -euo pipefail
case_name=$1
layer_dir=$2
tandem_cli=$3
build_dir=$4
work=$5/$case_name
exit_probe=$6
swapchain_probe=${7:-}
windows_probe=${8:-}
rm -rf "$work"
mkdir -p "$work"

source_dir=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/layer/layer_common.sh
source "$source_dir/layer_common.sh"

require_tools "scripts/install-deps.sh installs xvfb and vulkan-tools" xvfb-run vkcube vkcubepp \
    python3
lavapipe_only

validation_to_file

# The layer from the build folder, explicitly, the validation layer beneath it (the first name in
# VK_INSTANCE_LAYERS is the closest to the program).
explicit_layer() {
    export VK_ADD_LAYER_PATH=$layer_dir
    export VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation${validation_layers:+:$validation_layers}
}

# run_program NAME ARGS...: runs it under xvfb-run with a minute's limit (the X server's
# arguments from $xvfb_server_args, when set); stdout and stderr go to $work/NAME.out and .err;
# returns its exit status.
run_program() {
    local name=$1
    shift
    local status=0
    timeout -k 5 60 xvfb-run -a ${xvfb_server_args:+-s "$xvfb_server_args"} "$@" \
        >"$work/$name.out" 2>"$work/$name.err" || status=$?
    [ "$status" -ne 124 ] || fail "$name did not end within 60 s (a hang)"
    return "$status"
}

# expect_scaled_swapchains COUNT NAME: the layer logged COUNT swapchains made at the window's
# size for the program's smaller images in $work/NAME.err (TANDEM_FRAMEGEN_LOG=1).
expect_scaled_swapchains() {
    local scaled
    scaled=$(grep -c "upscaled to it" "$work/$2.err" || true)
    [ "$scaled" -eq "$1" ] || fail "want $1 scaled swapchains, got $scaled"
}

expect_no_validation_messages() {
    if [ -s "$validation_log" ]; then
        head -c 3000 "$validation_log" >&2
        fail "validation messages (above) with the layer enabled"
    fi
}

# same_frames_presented DUMP_A DUMP_B WHAT [ALLOWED]: two runs of vkcube --c 60 (which draws frame
# k alike in every run) presented the same frames, as their dumps read them from the swapchain
# images: all 60 real frames byte for byte (but ALLOWED of them, default 0: frames the first run
# upscaled on its own device), and at least 10 generated frames between the same two real frames,
# each byte for byte. The program's own frames a scaled dump keeps ("-rendered") are not
# compared. WHAT names the second run in the failure.
same_frames_presented() {
    python3 - "$1" "$2" "${4:-0}" <<'PY' || fail "$3 presents other frames"
import os, sys
def frames(folder):
    real, generated = [], {}
    for name in sorted(os.listdir(folder)):
        data = open(os.path.join(folder, name), "rb").read()
        if name.endswith("-real.ppm"):
            real.append(data)
        elif name.endswith("-generated.ppm"):
            generated[len(real)] = data  # between real frames len(real)-1 and len(real)
    return real, generated
real_a, generated_a = frames(sys.argv[1])
real_b, generated_b = frames(sys.argv[2])
assert len(real_a) == len(real_b) == 60, (len(real_a), len(real_b))
differ = [k for k in range(60) if real_a[k] != real_b[k]]
assert len(differ) <= int(sys.argv[3]), f"real frames {differ[:5]} differ"
both = sorted(set(generated_a) & set(generated_b))
assert len(both) >= 10, f"only {len(both)} generated frames between the same real frames"
differ = [k for k in both if generated_a[k] != generated_b[k]]
assert not differ, f"generated frames before real frames {differ[:5]} differ"
print(f"60 real and {len(both)} generated frames presented alike")
PY
}

# The run of a real program at the default settings (2x, never waiting for a generated frame):
# exit 0, no validation message, nothing of the layer's on stdout, no log line on stderr, and a
# report with the frames the program presented. Uncapped on lavapipe, the program draws faster
# than the worker (the same CPU) generates, so most generated frames are skipped, never waited
# for: each real frame still goes out, and every generated frame either went out or was skipped.
real_program() {
    local program=$1
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program "$program" "$program" --c 300 || fail "$program exited with status $?"
    expect_no_validation_messages
    ! grep -qi tandem "$work/$program.out" || fail "the layer wrote to the program's stdout"
    ! grep -q "tandem-layer:" "$work/$program.err" || fail "log lines without TANDEM_FRAMEGEN_LOG"
    # vkcube and vkcubepp present exactly --c frames, each on its one swapchain; the layer
    # presents each of them, the last when the swapchain is destroyed.
    check_report "$work/report.json" "r['program'] == '$program'" \
        "r['real_frames_presented'] == 300" "r['swapchains_created'] >= 1" \
        "r['mode'] == 'generating'" "r['generated_frames'] + r['skipped_frames'] <= 299" \
        "r['multiplier_requested'] == 2" "'llvmpipe' in r['device']" "r['devices_open'] == 0" \
        "len(r['devices']) == 1" "r['devices'][0]['devices'] == 1"
    # With TANDEM_FRAMEGEN_LOG=1 it tells what it did, on stderr only.
    export TANDEM_FRAMEGEN_LOG=1
    run_program "$program-log" "$program" --c 10 || fail "$program exited with status $?"
    grep -q "tandem-layer: swapchain created" "$work/$program-log.err" ||
        fail "no log line with TANDEM_FRAMEGEN_LOG=1"
    ! grep -qi tandem "$work/$program-log.out" || fail "the layer logged to stdout"
}

# The build's package installed into a prefix of this case's, whose share/ the loader reads as
# one of XDG_DATA_DIRS: the implicit manifest as a user's system would have it.
install_prefix() {
    local prefix=$work/prefix
    cmake --install "$build_dir" --prefix "$prefix" --component package >"$work/install.log"
    [ -f "$prefix/share/vulkan/implicit_layer.d/VkLayer_tandem_frame_generation.json" ] ||
        fail "cmake --install put no implicit manifest under share/vulkan/implicit_layer.d"
    export XDG_DATA_DIRS=$prefix/share:/usr/local/share:/usr/share
}

# generated_run MULTIPLIER FRAMES: vkcube at 96x96 (small enough for the worker to keep up) with
# every present waiting up to a second for its generated frames (TANDEM_FRAMEGEN_WAIT_MS), so
# that the generated path runs on every frame once the worker's tasks are prepared: copied
# from the worker's output into a swapchain image of the layer's and presented before the real
# frame, with nothing for the validation layer to report.
generated_run() {
    local multiplier=$1 frames=$2
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_MULTIPLIER=$multiplier
    export TANDEM_FRAMEGEN_WAIT_MS=1000
    run_program vkcube vkcube --c "$frames" --width 96 --height 96 ||
        fail "vkcube exited with status $?"
    expect_no_validation_messages
    python3 -c "import json; r = json.load(open('$work/report.json')); print('generated', \
        r['generated_frames'], 'skipped', r['skipped_frames'], 'real', r['real_frames_presented'])"
}

case "$case_name" in
vkcube | vkcubepp)
    real_program "$case_name"
    ;;
generated)
    # The presents wait up to a second each for the task to be prepared on the worker (the
    # first frame makes none: it has no frame before it); after that, one generated frame per
    # real frame, each waited for. A few may be skipped on a loaded machine (no swapchain image
    # free at once for one, or a preparation longer than the first presents' waits): at most 2%.
    # A queue of Tandem's own is asked for: lavapipe's family has one queue, none to spare, so
    # Tandem shares the program's and says so.
    export TANDEM_FRAMEGEN_QUEUE=own
    generated_run 2 600
    unset TANDEM_FRAMEGEN_QUEUE
    check_report "$work/report.json" "r['real_frames_presented'] == 600" \
        "r['mode'] == 'generating'" "r['generated_frames'] >= 580" \
        "r['skipped_frames'] <= max(2, r['generated_frames'] // 50)" \
        "r['devices'][0]['generating']" \
        "r['devices'][0]['transfer_path'] != ''" "r['devices'][0]['jobs'] >= 20" \
        "r['devices'][0]['real_frame_delay_us_p50'] is not None" \
        "len(r['devices'][0]['real_frame_delays_us']) == 600" \
        "min(r['devices'][0]['real_frame_delays_us']) > 0" \
        "r['devices'][0]['tandem_queue'] == 'shared'"
    ;;
generated_three)
    generated_run 3 600
    check_report "$work/report.json" "r['real_frames_presented'] == 600" \
        "r['multiplier_requested'] == 3" "r['generated_frames'] >= 1160" \
        "r['skipped_frames'] <= max(4, r['generated_frames'] // 50)"
    ;;
multiplier_one)
    # Generation off: the instance and device are left as the program asked, nothing is
    # generated or embedded.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_MULTIPLIER=1
    export TANDEM_FRAMEGEN_LOG=1
    run_program vkcube vkcube --c 60 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    ! grep -q "Tandem's extensions and features added" "$work/vkcube.err" ||
        fail "the device was changed with generation off"
    check_report "$work/report.json" "r['real_frames_presented'] == 60" \
        "r['mode'] == 'pass-through'" "r['generated_frames'] == 0" \
        "'MULTIPLIER=1' in r['mode_reason']" "len(r['devices']) == 1"
    ;;
swapchain_churn)
    # A program that resizes its window and recreates its swapchain (oldSwapchain, then the old
    # one destroyed) 40 times, 8 frames each and 300 on the last, with frames generated: every
    # frame it presented reaches the display (the one held back for a swapchain goes out before
    # it is replaced), one runtime lives on across the swapchains, each swapchain's tasks are the
    # one before's reconfigured to its size (never submitted to before the new size took over:
    # the old shape would copy the image at the old size, which validation reports), the last
    # swapchain gets generated frames, and nothing is left for validation to report.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_WAIT_MS=1000
    export TANDEM_FRAMEGEN_LOG=1
    run_program churn "$swapchain_probe" --swapchains 40 --frames 8 --last-frames 300 ||
        fail "layer_swapchain_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 612" "$work/churn.out" || fail "the probe's presents: $(cat "$work/churn.out")"
    runtimes=$(grep -c "tandem-layer: frame generation on" "$work/churn.err" || true)
    [ "$runtimes" -eq 1 ] || fail "want one runtime for all the swapchains, got $runtimes"
    reshaped=$(grep -c "tasks are kept, reconfigured to it" "$work/churn.err" || true)
    [ "$reshaped" -eq 39 ] || fail "want the tasks reconfigured at 39 resizes, got $reshaped"
    ! grep -q "could not take the new size" "$work/churn.err" ||
        fail "a reconfigure was refused: $(grep "could not take" "$work/churn.err" | head -1)"
    check_report "$work/report.json" "r['swapchains_created'] == 40" \
        "r['real_frames_presented'] == 612" "r['mode'] == 'generating'" \
        "r['generated_frames'] >= 1" "r['program'] == 'layer_swapchain_probe'"
    ;;
display_worker_scaled)
    # The display on the worker, scaled (TANDEM_FRAMEGEN_SCALE=0.5): vkcube renders 128x128 into
    # the layer's images, the worker upscales each real frame (a chain from the real frame's task
    # kept there) and each generated one to its 256x256 swapchain on the window, and presents
    # them. The frames are those the program's device presents scaled, byte for byte (but the
    # few it upscaled itself, its worker's upscale not there in time), and every frame is shown.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_DUMP_FRAMES=10000 TANDEM_FRAMEGEN_LOG=1
    export TANDEM_FRAMEGEN_SCALE=0.5
    for display in program worker; do
        TANDEM_FRAMEGEN_DISPLAY=$display TANDEM_FRAMEGEN_DUMP=$work/dump-$display \
            TANDEM_FRAMEGEN_REPORT=$work/report-$display.json \
            run_program "vkcube-$display" vkcube --c 60 --width 256 --height 256 ||
            fail "vkcube exited with status $?"
        expect_no_validation_messages
    done
    grep -q "swapchain created on the worker .*: 256x256, the program's images 128x128" \
        "$work/vkcube-worker.err" ||
        fail "no scaled swapchain on the worker: $(grep tandem-layer "$work/vkcube-worker.err")"
    check_report "$work/report-worker.json" "r['devices'][0]['display'] == 'worker'" \
        "r['real_frames_presented'] == 60" "r['generated_frames'] >= 10" \
        "r['devices'][0]['real_frames_not_shown'] == 0" \
        "r['devices'][0]['program_extent'] == [128, 128]" \
        "r['devices'][0]['window_extent'] == [256, 256]" \
        "r['devices'][0]['input_copies'] == r['devices'][0]['jobs']"
    blitted=$(python3 -c "import json; print(json.load(open('$work/report-program.json'))['devices'][0]['blitted_frames'])")
    same_frames_presented "$work/dump-program" "$work/dump-worker" \
        "the worker's display, scaled," "$blitted"
    ;;
display_worker_churn)
    # The display on the worker while the program resizes its window and recreates its
    # swapchain 20 times (oldSwapchain, then the old one destroyed): each time the worker's
    # swapchain is recreated on the window (the old one retired, then destroyed), every frame
    # the program presented is shown, and nothing is left for validation to report.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_WAIT_MS=1000
    export TANDEM_FRAMEGEN_LOG=1 TANDEM_FRAMEGEN_DISPLAY=worker
    run_program churn "$swapchain_probe" --swapchains 20 --frames 8 --last-frames 60 ||
        fail "layer_swapchain_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 212" "$work/churn.out" || fail "the probe's presents: $(cat "$work/churn.out")"
    made=$(grep -c "swapchain created on the worker" "$work/churn.err" || true)
    [ "$made" -eq 20 ] || fail "want 20 swapchains on the worker, got $made"
    check_report "$work/report.json" "r['swapchains_created'] == 20" \
        "r['real_frames_presented'] == 212" "r['generated_frames'] >= 1" \
        "r['devices'][0]['display'] == 'worker'" "r['devices'][0]['real_frames_not_shown'] == 0"
    ;;
device_before_swapchain)
    # Programs' bugs the layer must survive: the last swapchain never destroyed, its surface
    # destroyed before the device (swapchain), or left too, so that the device goes while the
    # swapchain's frames are still generated (surface, and scaled), or the device left too, so
    # that the instance goes first (device), or nothing destroyed, the program returning from
    # main right after its last present (instance, and scaled). The layer ends its work on the
    # swapchain where the surface, the device or the instance goes, and stops its threads and
    # Tandem's at the process's exit: the program exits 0, frames were generated, and the
    # validation layer says of the run what it says of the program alone.
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_LOG=1
    for run in swapchain surface surface-scaled device instance instance-scaled; do
        kept=${run%-scaled}
        scale=1
        [ "$run" = "$kept" ] || scale=0.5
        export VK_INSTANCE_LAYERS=$validation_layers
        run_program "alone-$run" "$swapchain_probe" --swapchains 2 --frames 30 --keep-last "$kept" ||
            fail "layer_swapchain_probe alone exited with status $?"
        [ ! -f "$validation_log" ] || mv "$validation_log" "$work/alone-$run.validation"
        explicit_layer
        export TANDEM_FRAMEGEN_REPORT=$work/$run.json TANDEM_FRAMEGEN_SCALE=$scale
        run_program "layer-$run" "$swapchain_probe" --swapchains 2 --frames 30 \
            --keep-last "$kept" || fail "layer_swapchain_probe ($run) exited with status $?"
        [ ! -f "$validation_log" ] || mv "$validation_log" "$work/layer-$run.validation"
        unset TANDEM_FRAMEGEN_REPORT TANDEM_FRAMEGEN_SCALE
        grep -q "presented 60" "$work/layer-$run.out" ||
            fail "the probe's presents ($run): $(cat "$work/layer-$run.out")"
        open=0
        presented=60
        ended="runtime ends with the device"
        if [ "$kept" = device ]; then
            open=1
            ended="vkDestroyInstance with .* still open: its frame generation ends"
        elif [ "$kept" = instance ]; then
            # The frame presented just before the program returned from main may be dropped.
            open=1
            presented=59
            ended="process exit while frames are generated on .*: the layer's threads and Tandem's stop"
        fi
        grep -q "$ended" "$work/layer-$run.err" ||
            fail "no line saying the frame generation ended ($run)"
        check_report "$work/$run.json" "r['real_frames_presented'] >= $presented" \
            "r['generated_frames'] >= 20" "r['devices_open'] == $open"
        if [ -n "$validation_layers" ]; then
            # A program that destroys nothing leaks nothing the validation layer reports at a
            # destroy: its run alone may be silent (the runs before showed the layer there).
            silent_ok=0
            [ "$kept" != instance ] || silent_ok=1
            python3 - "$work/alone-$run.validation" "$work/layer-$run.validation" "$silent_ok" \
                <<'PY' ||
import collections, re, sys
def ids(path):
    try:
        return collections.Counter(re.findall(r"(?:VUID|SYNC)-[A-Za-z0-9_-]+", open(path).read()))
    except FileNotFoundError:
        return collections.Counter()
alone, layer = ids(sys.argv[1]), ids(sys.argv[2])
if not alone and sys.argv[3] != "1":
    sys.exit("the program alone made no validation message: was the validation layer there?")
if layer != alone:
    sys.exit(f"validation messages alone {dict(alone)}, with the layer {dict(layer)}")
PY
                fail "the validation messages differ from the program's own ($run)"
        fi
    done
    ;;
swapchain_same_size)
    # A swapchain recreated at the same size 20 times (as after VK_SUBOPTIMAL_KHR): the tasks
    # go on from one swapchain to the next, prepared once, so that every swapchain after the
    # first gets generated frames from its first present, and every frame reaches the display.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_WAIT_MS=1000
    export TANDEM_FRAMEGEN_LOG=1
    run_program same "$swapchain_probe" --swapchains 20 --frames 10 --last-frames 100 \
        --same-size 1 || fail "layer_swapchain_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 290" "$work/same.out" || fail "the probe's presents: $(cat "$work/same.out")"
    kept=$(grep -c "tasks are kept" "$work/same.err" || true)
    [ "$kept" -eq 19 ] || fail "want the tasks kept at 19 recreations, got $kept"
    check_report "$work/report.json" "r['swapchains_created'] == 20" \
        "r['real_frames_presented'] == 290" "r['generated_frames'] >= 100" \
        "r['devices'][0]['jobs'] >= 100"
    ;;
two_programs)
    # A second program started with the layer while the first runs (two vkcubes on one X
    # server, each with its own report): each embeds its own runtime and worker, both run to
    # their end, each counts its own frames, and validation reports nothing for either.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 WORK=$work
    run_program two bash -c '
        TANDEM_FRAMEGEN_REPORT=$WORK/first.json vkcube --c 400 --width 96 --height 96 &
        first=$!
        sleep 1
        TANDEM_FRAMEGEN_REPORT=$WORK/second.json vkcube --c 200 --width 96 --height 96 &
        second=$!
        wait $first || exit 1
        wait $second || exit 2' || fail "a vkcube exited with an error ($?)"
    expect_no_validation_messages
    check_report "$work/first.json" "r['real_frames_presented'] == 400" \
        "r['mode'] == 'generating'" "r['devices_open'] == 0"
    check_report "$work/second.json" "r['real_frames_presented'] == 200" \
        "r['mode'] == 'generating'" "r['devices_open'] == 0"
    ;;
validation_canary)
    # The check itself: vkcube --force_errors makes validation errors on purpose, and they must
    # reach the log through the layer, or a clean run above proves nothing.
    [ -n "$validation_layers" ] || exit 0
    explicit_layer
    run_program canary vkcube --c 10 --force_errors || true
    [ -s "$validation_log" ] || fail "vkcube --force_errors left no validation message"
    ;;
bad_multiplier)
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_MULTIPLIER=seven
    run_program vkcube vkcube --c 30 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    lines=$(grep -c "tandem-layer:" "$work/vkcube.err" || true)
    [ "$lines" -eq 1 ] || fail "want one log line for a bad multiplier, got $lines"
    grep -q "TANDEM_FRAMEGEN_MULTIPLIER='seven'" "$work/vkcube.err" ||
        fail "the log line does not name the bad value"
    check_report "$work/report.json" "r['multiplier_requested'] is None" \
        "r['multiplier_setting'] == 'seven'" "'seven' in r['mode_reason']" \
        "r['real_frames_presented'] == 30"
    ;;
killed)
    # The program killed mid-stream, by SIGTERM and by SIGKILL a second after its swapchain was
    # created (its log line, polled for up to 30 s on a busy machine): the run ends (no hang in
    # the layer or the X server), and no report, whole or partial, is left behind: a killed
    # process runs no exit code.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_LOG=1
    for signal in TERM KILL; do
        status=0
        export KILL_SIGNAL=$signal KILL_LOG=$work/killed-$signal.err
        run_program "killed-$signal" bash -c 'vkcube --c 1000000 & pid=$!
            for _ in $(seq 300); do
                ! grep -q "swapchain created" "$KILL_LOG" || break
                sleep 0.1
            done
            sleep 1; kill -"$KILL_SIGNAL" $pid; wait $pid' || status=$?
        want=$((128 + $(kill -l "$signal")))
        [ "$status" -eq "$want" ] || fail "SIG$signal: status $status, want $want"
        grep -q "tandem-layer: swapchain created" "$work/killed-$signal.err" ||
            fail "SIG$signal came before the program presented with the layer"
        [ ! -e "$work/report.json" ] && [ ! -e "$work/report.json.partial" ] ||
            fail "a killed program left a report"
    done
    ;;
installed_implicit)
    install_prefix
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    export VK_INSTANCE_LAYERS=$validation_layers
    # Installed but not enabled: off.
    run_program off vkcube --c 20 || fail "vkcube exited with status $?"
    [ ! -e "$work/report.json" ] || fail "the implicit layer ran without ENABLE_TANDEM_FRAMEGEN"
    # Enabled and disabled: DISABLE_TANDEM_FRAMEGEN wins, no report.
    ENABLE_TANDEM_FRAMEGEN=1 DISABLE_TANDEM_FRAMEGEN=1 run_program disabled vkcube --c 20 ||
        fail "vkcube exited with status $?"
    [ ! -e "$work/report.json" ] || fail "DISABLE_TANDEM_FRAMEGEN=1 left a report"
    # Enabled: the installed manifest finds its library (a path relative to the manifest).
    ENABLE_TANDEM_FRAMEGEN=1 run_program enabled vkcube --c 20 || fail "vkcube exited with $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['real_frames_presented'] == 20"
    ;;
exit_without_destroy)
    # A program that exits with its device and instance open: the report is written at exit,
    # with the device counted as open.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    "$exit_probe" >"$work/probe.out" 2>"$work/probe.err" || fail "layer_exit_probe exited with $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['devices_open'] == 1" "r['devices'][0]['open'] == 1" \
        "r['program'] == 'layer_exit_probe'" "r['application_name'] == 'layer_exit_probe'" \
        "r['real_frames_presented'] == 0"
    ;;
cli_status)
    install_prefix
    status_of() { "$tandem_cli" layer status --json >"$work/status.json"; }
    status_of
    check_report "$work/status.json" "r['build_manifest'] is not None" \
        "r['installed_manifest'] is not None and '$work/prefix/' in r['installed_manifest']" \
        "r['enable_tandem_framegen'] is False" "r['active'] is False" "r['multiplier'] == 2"
    ENABLE_TANDEM_FRAMEGEN=1 TANDEM_FRAMEGEN_MULTIPLIER=3 status_of
    check_report "$work/status.json" "r['enable_tandem_framegen'] is True" "r['active'] is True" \
        "r['multiplier'] == 3"
    TANDEM_FRAMEGEN_MULTIPLIER=x status_of
    check_report "$work/status.json" "r['multiplier'] is None" "r['multiplier_setting'] == 'x'"
    XDG_DATA_DIRS=/nonexistent status_of
    check_report "$work/status.json" "r['installed_manifest'] is None"
    "$tandem_cli" layer status >"$work/status.txt"
    grep -q "generates frames" "$work/status.txt" || fail "the status does not say it generates"
    check_report "$work/status.json" "r['mode'] == 'generating'" "r['worker'] == 'auto'"
    TANDEM_FRAMEGEN_MULTIPLIER=1 "$tandem_cli" layer status >"$work/status.txt"
    grep -q "pass-through" "$work/status.txt" || fail "the status does not say pass-through"
    ;;
cli_run)
    # From the build, nothing installed: `tandem layer run` names the build's layer to the
    # loader, above the validation layer the caller asked for.
    export XDG_DATA_DIRS=/usr/local/share:/usr/share
    export VK_INSTANCE_LAYERS=$validation_layers
    run_program run "$tandem_cli" layer run --multiplier 3 --report "$work/report.json" -- \
        vkcube --c 40 || fail "tandem layer run -- vkcube exited with status $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['real_frames_presented'] == 40" \
        "r['multiplier_requested'] == 3" "r['program'] == 'vkcube'"
    # Verify mode and the dump through its options (a relative dump folder made absolute).
    (cd "$work" && run_program run-verify "$tandem_cli" layer run --verify 1 --dump dump \
        --present-mode immediate --report "$work/verify.json" -- vkcube --c 40 --width 64 \
        --height 64) || fail "tandem layer run --verify 1 -- vkcube exited with status $?"
    expect_no_validation_messages
    check_report "$work/verify.json" "r['verify']['frames'] == 19" \
        "r['dump_folder'] == '$work/dump'"
    [ -s "$work/dump/00000-truth.ppm" ] || fail "--dump wrote no frames to $work/dump"
    status=0
    "$tandem_cli" layer run -- "$work/no-such-program" 2>"$work/missing.err" || status=$?
    [ "$status" -eq 1 ] || fail "a missing program: status $status, want 1"
    grep -q "no-such-program" "$work/missing.err" || fail "the error does not name the program"
    status=0
    "$tandem_cli" layer run --multiplier 5 -- vkcube 2>/dev/null || status=$?
    [ "$status" -eq 2 ] || fail "--multiplier 5: status $status, want 2 (bad usage)"
    ;;
worker_lost)
    # The worker lost mid-stream (fault injection: every worker submission after the first 40
    # reports VK_ERROR_DEVICE_LOST): frames generated before, then the program's frames pass
    # through to its end, one log line says why, no hang, no crash, nothing for validation.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_WAIT_MS=1000
    export TANDEM_FAULT_WORKER_LOST=40
    run_program vkcube vkcube --c 400 --width 96 --height 96 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    grep -q "tandem-layer: the frame-generation worker was lost" "$work/vkcube.err" ||
        fail "no log line about the lost worker: $(head -c 2000 "$work/vkcube.err")"
    check_report "$work/report.json" "r['real_frames_presented'] == 400" "r['worker_lost']" \
        "r['generated_frames'] >= 1" "r['generated_frames'] < 40" \
        "r['devices'][0]['worker_lost_reason'] != ''"
    ;;
verify)
    # Verify mode on vkcube (steady motion: a fixed turn per frame): every other frame is held
    # back from the worker and generated from its neighbours; each is compared with the frame
    # vkcube drew, beside the blend of the two. The dump keeps the first comparisons' frames.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_VERIFY=1
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_DUMP=$work/dump TANDEM_FRAMEGEN_DUMP_FRAMES=2
    run_program vkcube vkcube --c 240 --width 128 --height 128 ||
        fail "vkcube exited with status $?"
    expect_no_validation_messages
    # The program waits for the task to be prepared: every held-back frame but the first is
    # compared. vkcube turns 4 degrees a frame: the goal (docs/layer.md) is 3 dB over the blend.
    check_report "$work/report.json" "r['real_frames_presented'] == 240" \
        "r['verify']['frames'] == 119" "r['verify']['missed'] == 0" \
        "r['generated_frames'] == 0" "r['verify']['gain_db'] >= 3.0" \
        "r['verify']['blend_psnr_db_mean'] > 20"
    for kind in truth generated blend; do
        for index in 00000 00001; do
            [ -s "$work/dump/$index-$kind.ppm" ] || fail "no $index-$kind.ppm in the dump"
        done
    done
    [ ! -e "$work/dump/00002-truth.ppm" ] || fail "the dump went past TANDEM_FRAMEGEN_DUMP_FRAMES"
    python3 -c "import json; v = json.load(open('$work/report.json'))['verify']; \
        print('verify: generated %.2f dB, blend %.2f dB, gain %.2f dB over %d frames' % \
        (v['generated_psnr_db_mean'], v['blend_psnr_db_mean'], v['gain_db'], v['frames']))"
    ;;
verify_compute)
    # The same with each presented frame copied into Tandem's input by a compute dispatch
    # (TANDEM_FRAMEGEN_COPIES=compute; on a GPU the default): vkcube's BGRA8 swapchain is made
    # with mutable formats and read through an RGBA8 view, byte for byte as the copy command
    # reads it. A frame read in another channel order, or not at all, falls far below the blend.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_VERIFY=1
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_COPIES=compute
    run_program vkcube vkcube --c 120 --width 128 --height 128 ||
        fail "vkcube exited with status $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['real_frames_presented'] == 120" \
        "r['devices'][0]['input_copy'] == 'compute'" \
        "r['verify']['frames'] == 59" "r['verify']['missed'] == 0" \
        "r['verify']['gain_db'] >= 3.0" "r['verify']['blend_psnr_db_mean'] > 20"
    ;;
dump)
    # Every frame presented, real and generated, in the order presented: a generated frame is
    # always followed by the real frame it was generated before.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json TANDEM_FRAMEGEN_WAIT_MS=1000
    export TANDEM_FRAMEGEN_DUMP=$work/dump TANDEM_FRAMEGEN_DUMP_FRAMES=10000
    run_program vkcube vkcube --c 200 --width 96 --height 96 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['real_frames_presented'] == 200" \
        "r['generated_frames'] >= 1"
    python3 - "$work/dump" "$work/report.json" <<'PY' || fail "the dump does not hold the frames"
import json, os, sys
folder, report = sys.argv[1], json.load(open(sys.argv[2]))
names = sorted(os.listdir(folder))
kinds = [n.split("-", 1)[1] for n in names]
assert [n.split("-", 1)[0] for n in names] == [f"{i:05d}" for i in range(len(names))], names[:5]
assert kinds.count("real.ppm") == 200, kinds.count("real.ppm")
assert kinds.count("generated.ppm") == report["generated_frames"], kinds.count("generated.ppm")
assert kinds[-1] == "real.ppm"
for a, b in zip(kinds, kinds[1:]):
    assert not (a == b == "generated.ppm"), "two generated frames in a row at 2x"
for name in names[:3]:
    data = open(os.path.join(folder, name), "rb").read()
    assert data.startswith(b"P6\n96 96\n255\n") and len(data) == 13 + 96 * 96 * 3, name
PY
    ;;
dump_compute)
    # The worker's frames copied into the swapchain by a compute dispatch present the bytes the
    # copy command presents: vkcube draws frame k alike in every run, so each generated frame
    # between the same two real frames is compared, as presented (the dump reads the swapchain
    # image), between a run with TANDEM_FRAMEGEN_COPIES=command and one with =compute (its
    # swapchain read and written through RGBA8 views: the input copy and the layer's copies are
    # compute dispatches). A frame in another channel order, or not written, differs.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_DUMP_FRAMES=10000
    for copies in command compute; do
        TANDEM_FRAMEGEN_COPIES=$copies TANDEM_FRAMEGEN_DUMP=$work/dump-$copies \
            TANDEM_FRAMEGEN_REPORT=$work/report-$copies.json \
            run_program "vkcube-$copies" vkcube --c 60 --width 96 --height 96 ||
            fail "vkcube exited with status $?"
        expect_no_validation_messages
    done
    check_report "$work/report-command.json" "r['devices'][0]['input_copy'] == 'copy command'" \
        "r['devices'][0]['layer_copy'] == 'copy command'"
    check_report "$work/report-compute.json" "r['devices'][0]['input_copy'] == 'compute'" \
        "r['devices'][0]['layer_copy'] == 'compute'" "r['generated_frames'] >= 10"
    same_frames_presented "$work/dump-command" "$work/dump-compute" "the compute copy"
    ;;
display_worker)
    # The display on the worker: the worker's device makes the real swapchain on vkcube's window
    # and presents real and generated frames; vkcube renders into images of the layer's own on
    # its device, each crossing to the worker once. vkcube draws frame k alike in every run, so
    # the frames presented are compared with a run presented by the program's device, as each
    # was presented (the dump reads the swapchain image): every real frame byte for byte, and
    # every generated frame between the same two real frames. A frame not passed through
    # unchanged, or shown out of order, differs; a lease released too early would let the
    # worker's next frame overwrite the one being copied, and differ too.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_DUMP_FRAMES=10000 TANDEM_FRAMEGEN_LOG=1
    # worker-compute: the input copy and the worker's copies into its swapchain as compute
    # dispatches (its swapchain read and written through RGBA8 views), as on a GPU.
    for run in program worker worker-compute; do
        copies=command
        [ "$run" != worker-compute ] || copies=compute
        TANDEM_FRAMEGEN_DISPLAY=${run%-compute} TANDEM_FRAMEGEN_COPIES=$copies \
            TANDEM_FRAMEGEN_DUMP=$work/dump-$run TANDEM_FRAMEGEN_REPORT=$work/report-$run.json \
            run_program "vkcube-$run" vkcube --c 60 --width 96 --height 96 ||
            fail "vkcube exited with status $?"
        expect_no_validation_messages
    done
    grep -q "swapchain created on the worker" "$work/vkcube-worker.err" ||
        fail "no swapchain was made on the worker: $(grep -i worker "$work/vkcube-worker.err")"
    check_report "$work/report-program.json" "r['devices'][0]['display'] == 'program'"
    # One copy of each frame on vkcube's device with the worker as the display too: its frame
    # task reads the real frame's task's output on the worker instead of a copy of its own.
    check_report "$work/report-worker.json" "r['devices'][0]['display'] == 'worker'" \
        "r['devices'][0]['input_copies'] == r['devices'][0]['jobs']" \
        "r['real_frames_presented'] == 60" "r['generated_frames'] >= 10" \
        "r['devices'][0]['real_frames_not_shown'] == 0"
    check_report "$work/report-worker-compute.json" "r['devices'][0]['display'] == 'worker'" \
        "r['devices'][0]['layer_copy'] == 'compute'" "r['devices'][0]['input_copy'] == 'compute'"
    same_frames_presented "$work/dump-program" "$work/dump-worker" "the worker's display"
    same_frames_presented "$work/dump-program" "$work/dump-worker-compute" \
        "the worker's display with compute copies"
    ;;
display_worker_lost)
    # The display on the worker, the worker lost mid-stream (fault injection: every worker
    # submission after the first 40 reports VK_ERROR_DEVICE_LOST). Nothing else can show the
    # frames then: the program's device takes the display back (the worker's swapchain goes,
    # one of the program's device takes the window) and the frames pass through to the end, one
    # log line says so, no hang, nothing for validation. Then the same while the program
    # recreates its swapchain 20 times: the recreations after the loss replace the swapchain
    # the program's device took the display back with, and every frame presented is shown.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_LOG=1 TANDEM_FRAMEGEN_DISPLAY=worker
    export TANDEM_FAULT_WORKER_LOST=40
    TANDEM_FRAMEGEN_REPORT=$work/report.json \
        run_program vkcube vkcube --c 200 --width 96 --height 96 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    taken="the program's device shows them from now on"
    grep -q "tandem-layer: the frame-generation worker was lost" "$work/vkcube.err" ||
        fail "no log line about the lost worker: $(grep -i worker "$work/vkcube.err")"
    grep -q "$taken" "$work/vkcube.err" ||
        fail "no log line about the display taken back: $(grep -i worker "$work/vkcube.err")"
    # At most the frame the worker lost on goes unshown; each one after is the program's
    # device's blit of vkcube's frame.
    check_report "$work/report.json" "r['worker_lost']" "r['devices'][0]['displays_taken_back'] == 1" \
        "r['devices'][0]['display'] == 'worker'" "r['generated_frames'] >= 1" \
        "r['real_frames_presented'] + r['devices'][0]['real_frames_not_shown'] == 200" \
        "r['devices'][0]['real_frames_not_shown'] <= 2" "r['devices'][0]['blitted_frames'] >= 150"
    TANDEM_FRAMEGEN_REPORT=$work/report-churn.json \
        run_program churn "$swapchain_probe" --swapchains 20 --frames 8 --last-frames 60 ||
        fail "layer_swapchain_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 212" "$work/churn.out" || fail "the probe's presents: $(cat "$work/churn.out")"
    grep -q "$taken" "$work/churn.err" ||
        fail "no log line about the display taken back: $(grep -i worker "$work/churn.err")"
    check_report "$work/report-churn.json" "r['worker_lost']" "r['swapchains_created'] == 20" \
        "r['devices'][0]['displays_taken_back'] == 1" \
        "r['real_frames_presented'] + r['devices'][0]['real_frames_not_shown'] == 212" \
        "r['devices'][0]['real_frames_not_shown'] <= 2"
    ;;
pacing)
    # Where the display does not pace the presents (vkcube --present_mode 0: immediate), the
    # layer sends the real frame half the program's frame after its generated frame; with FIFO
    # (the default) the display paces them and the two go out back to back.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000
    for mode in 0 2; do
        TANDEM_FRAMEGEN_REPORT=$work/report-$mode.json run_program "vkcube-$mode" vkcube --c 300 \
            --width 96 --height 96 --present_mode "$mode" || fail "vkcube exited with status $?"
        expect_no_validation_messages
        check_report "$work/report-$mode.json" "r['generated_frames'] >= 10"
    done
    python3 - "$work/report-0.json" "$work/report-2.json" <<'PY' || fail "the presents are not paced"
import json, sys
paced, fifo = (json.load(open(p))["devices"][0] for p in sys.argv[1:])
interval_us = 1e6 / paced["program_fps"]
gap, back_to_back = paced["generated_to_next_present_us_p50"], fifo["generated_to_next_present_us_p50"]
print(f"immediate: {gap:.0f} us from a generated frame to its real one (program frame "
      f"{interval_us:.0f} us); fifo: {back_to_back:.0f} us")
assert gap > 500 and gap > 4 * back_to_back, "immediate is not paced"
assert back_to_back < 0.25 * interval_us, "FIFO waits where the display paces"
PY
    ;;
scaling)
    # The program renders at half its window's size (TANDEM_FRAMEGEN_SCALE=0.5, 1x): it is told
    # its 256x256 window is 128x128, renders into the layer's images, and each frame reaches the
    # window upscaled on the worker. vkcube draws frame k the same at any size, so its run at the
    # window's size is the truth: every presented frame is the program's frame at 256x256 (well
    # above 20 dB of it: a wrong frame, offset or channel order falls far below), and the
    # worker's upscale stays within 1 dB of a bilinear one of the same rendered frame
    # (bench/layer/scaling_quality.py; docs/layer.md gives the figures).
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_DUMP_FRAMES=1000
    TANDEM_FRAMEGEN_MULTIPLIER=2 TANDEM_FRAMEGEN_DUMP=$work/truth \
        run_program truth vkcube --c 24 --width 256 --height 256 || fail "vkcube exited with status $?"
    export TANDEM_FRAMEGEN_SCALE=0.5 TANDEM_FRAMEGEN_MULTIPLIER=1 TANDEM_FRAMEGEN_LOG=1
    export TANDEM_FRAMEGEN_DUMP=$work/scaled TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program vkcube vkcube --c 24 --width 256 --height 256 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    grep -q "swapchain created: 256x256, the program's images 128x128 upscaled to it" \
        "$work/vkcube.err" || fail "no scaled swapchain: $(grep tandem-layer "$work/vkcube.err")"
    check_report "$work/report.json" "r['real_frames_presented'] == 24" "r['scale'] == 0.5" \
        "r['mode'] == 'generating'" "r['generated_frames'] == 0" \
        "r['devices'][0]['program_extent'] == [128, 128]" \
        "r['devices'][0]['window_extent'] == [256, 256]" \
        "r['devices'][0]['upscaled_frames'] + r['devices'][0]['blitted_frames'] == 24" \
        "r['devices'][0]['upscaled_frames'] >= 20"
    python3 "$source_dir/../../bench/layer/scaling_quality.py" "$work/truth" "$work/scaled" \
        --frames 12 --json "$work/quality.json" >/dev/null || fail "the dumps hold no frames"
    check_report "$work/quality.json" "r['frames'] == 12" "r['window'] == [256, 256]" \
        "r['rendered'] == [128, 128]" "min(f['upscaled_db'] for f in r['per_frame']) > 20" \
        "r['upscaled_db_mean'] >= r['bilinear_db_mean'] - 1.0"
    python3 -c "import json; r = json.load(open('$work/quality.json')); print('upscaled', \
        r['upscaled_db_mean'], 'dB, bilinear', r['bilinear_db_mean'], 'dB')"
    ;;
scaling_generated)
    # Scaled and 2x: frames are generated at the program's size and upscaled on the worker too,
    # each presented at the window's size before its real frame.
    explicit_layer
    export TANDEM_FRAMEGEN_SCALE=0.5 TANDEM_FRAMEGEN_WAIT_MS=1000
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program vkcube vkcube --c 200 --width 192 --height 192 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['real_frames_presented'] == 200" \
        "r['devices'][0]['program_extent'] == [96, 96]" \
        "r['generated_frames'] >= 190" "r['devices'][0]['upscaled_frames'] >= 190"
    ;;
scaling_no_worker)
    # Scaled with no worker to be had: the program still renders at its smaller size, and the
    # primary upscales each frame itself (a bilinear blit), every one presented.
    explicit_layer
    export TANDEM_FRAMEGEN_SCALE=0.5 TANDEM_FRAMEGEN_WORKER=no-such-device
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program vkcube vkcube --c 100 --width 128 --height 128 || fail "vkcube exited with status $?"
    expect_no_validation_messages
    check_report "$work/report.json" "r['real_frames_presented'] == 100" \
        "r['mode'] == 'pass-through'" "r['devices'][0]['blitted_frames'] == 100" \
        "r['devices'][0]['program_extent'] == [64, 64]"
    ;;
scaling_churn)
    # Scaled while the program resizes its window 20 times: each swapchain the layer's images
    # at half the new size, every frame presented. (A scaled swapchain's tasks are new ones, each
    # prepared while its first presents wait: fewer swapchains than swapchain_churn.)
    explicit_layer
    export TANDEM_FRAMEGEN_SCALE=0.5 TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_LOG=1
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program churn "$swapchain_probe" --swapchains 20 --frames 8 --last-frames 60 ||
        fail "layer_swapchain_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 212" "$work/churn.out" || fail "the probe's presents: $(cat "$work/churn.out")"
    expect_scaled_swapchains 20 churn
    check_report "$work/report.json" "r['swapchains_created'] == 20" \
        "r['real_frames_presented'] == 212" "r['generated_frames'] >= 1" \
        "r['devices'][0]['upscaled_frames'] >= 1"
    ;;
two_windows)
    # Two windows, a swapchain each, presented one after the other: each swapchain has frames
    # generated for it on the worker, every real frame of both presented.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program windows "$windows_probe" --frames 60 --together 0 ||
        fail "layer_windows_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 60 60" "$work/windows.out" || fail "the probe's presents: $(cat "$work/windows.out")"
    check_report "$work/report.json" "r['swapchains_created'] == 2" \
        "r['real_frames_presented'] == 120" "r['generated_frames'] >= 100"
    ;;
two_windows_together)
    # Both windows' images in one present: the layer generates for a present of one swapchain
    # only, so these pass through, after any frame it held for either; all 120 go out.
    explicit_layer
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program windows "$windows_probe" --frames 60 --together 1 ||
        fail "layer_windows_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 60 60" "$work/windows.out" || fail "the probe's presents: $(cat "$work/windows.out")"
    check_report "$work/report.json" "r['swapchains_created'] == 2" \
        "r['real_frames_presented'] == 120"
    ;;
two_windows_scaled)
    # Scaled, both windows' images in one present: the layer waits for the program's semaphores
    # once and presents each window's image on its own, each upscaled to its window (by the
    # worker, or by the primary's blit), all 120 presented and counted.
    explicit_layer
    export TANDEM_FRAMEGEN_SCALE=0.5 TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_LOG=1
    export TANDEM_FRAMEGEN_REPORT=$work/report.json
    run_program windows "$windows_probe" --frames 60 --together 1 ||
        fail "layer_windows_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 60 60" "$work/windows.out" || fail "the probe's presents: $(cat "$work/windows.out")"
    expect_scaled_swapchains 2 windows
    check_report "$work/report.json" "r['swapchains_created'] == 2" \
        "r['real_frames_presented'] == 120" \
        "r['devices'][0]['upscaled_frames'] + r['devices'][0]['blitted_frames'] == 120" \
        "r['generated_frames'] >= 100"
    ;;
ten_bit | ten_bit_scaled)
    # A 10-bit swapchain (A2R10G10B10, the one format of an X server of depth 30): the worker's
    # frames are 8-bit, so its frames pass through. Scaled, lavapipe cannot blit that format, so
    # nothing could upscale the program's images: the program is told the window's own size
    # (never handed a smaller image than its window that nothing upscales), and its frames pass
    # through at that size. Every one presented, with no validation message either way.
    explicit_layer
    export TANDEM_FRAMEGEN_WAIT_MS=1000 TANDEM_FRAMEGEN_LOG=1 TANDEM_FRAMEGEN_REPORT=$work/report.json
    [ "$case_name" = ten_bit ] || export TANDEM_FRAMEGEN_SCALE=0.5
    xvfb_server_args="-screen 0 640x480x30"
    run_program windows "$windows_probe" --frames 30 --together 0 --format a2r10g10b10 ||
        fail "layer_windows_probe exited with status $?"
    expect_no_validation_messages
    grep -q "presented 30 30" "$work/windows.out" || fail "the probe's presents: $(cat "$work/windows.out")"
    grep -q "swapchain created: 160x120" "$work/windows.err" &&
        grep -q "swapchain created: 128x96" "$work/windows.err" ||
        fail "want swapchains at the windows' sizes: $(grep tandem-layer "$work/windows.err")"
    check_report "$work/report.json" "r['swapchains_created'] == 2" \
        "r['real_frames_presented'] == 60" "r['generated_frames'] == 0" \
        "r['devices'][0]['blitted_frames'] == 0" "r['devices'][0]['upscaled_frames'] == 0"
    if [ "$case_name" = ten_bit_scaled ]; then
        grep -q "not scaled: the window offers a format (58) the device cannot blit" \
            "$work/windows.err" || fail "no line saying why the window is not scaled"
    fi
    ;;
*)
    fail "unknown case"
    ;;
esac
# The installed prefix holds the whole package (some 200 MB): kept only when a case failed.
rm -rf "$work/prefix"
echo "layer.$case_name: ok"
