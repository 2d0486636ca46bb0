#!/usr/bin/env bash
# The layer's configuration file (docs/layer.md, "Configuration file") with a real program:
# vkcube on lavapipe under a virtual X server, the Khronos validation layer beneath the layer, the
# file in the case's own XDG_CONFIG_HOME.
#
#   layer_config.sh CASE LAYER_DIR TANDEM_CLI WORK_DIR
#
# CASE: profile      a [program vkcube] profile's multiplier, report and present mode are used
#       bad_line     a bad line is logged as FILE:LINE, the rest of the file is used, and the
#                    program runs as without it
#       cli_status   `tandem layer status --program vkcube --json` shows the profile's values and
#                    where each came from, the environment over the file
set -euo pipefail
case_name=config_$1
layer_dir=$2
tandem_cli=$3
work=$4/$case_name
rm -rf "$work"
mkdir -p "$work"

# shellcheck source=tests/layer/layer_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/layer_common.sh"

require_tools "scripts/install-deps.sh installs xvfb and vulkan-tools" xvfb-run vkcube python3
lavapipe_only
config=$XDG_CONFIG_HOME/tandem/framegen.conf
mkdir -p "$(dirname "$config")"

validation_to_file
export VK_ADD_LAYER_PATH=$layer_dir
export VK_INSTANCE_LAYERS=VK_LAYER_TANDEM_frame_generation${validation_layers:+:$validation_layers}

# run_vkcube NAME ARGS...: vkcube under xvfb-run with a minute's limit, output in $work/NAME.*.
run_vkcube() {
    local name=$1
    shift
    local status=0
    timeout -k 5 60 xvfb-run -a vkcube "$@" >"$work/$name.out" 2>"$work/$name.err" || status=$?
    [ "$status" -ne 124 ] || fail "vkcube did not end within 60 s (a hang)"
    [ "$status" -eq 0 ] || fail "vkcube exited with status $status: $(tail -5 "$work/$name.err")"
    if [ -s "$validation_log" ]; then
        head -c 3000 "$validation_log" >&2
        fail "validation messages (above) with the layer enabled"
    fi
}

case "$1" in
profile)
    cat >"$config" <<EOF
# every program
wait_ms = 1000

[program vkcubepp]
multiplier = 1

[program vkcube]
multiplier = 3
report = $work/report.json
present_mode = immediate
EOF
    TANDEM_FRAMEGEN_LOG=1 run_vkcube vkcube --c 60 --width 96 --height 96
    check_report "$work/report.json" "r['program'] == 'vkcube'" "r['multiplier_requested'] == 3" \
        "r['multiplier_setting'] == '3'" "r['wait_ms'] == 1000" \
        "r['real_frames_presented'] == 60" "r['mode'] == 'generating'"
    grep -q "tandem-layer: .*present mode immediate" "$work/vkcube.err" ||
        fail "no log line of the profile's present mode: $(grep tandem-layer "$work/vkcube.err")"
    # The environment wins over the profile.
    TANDEM_FRAMEGEN_MULTIPLIER=2 run_vkcube vkcube-env --c 30 --width 96 --height 96
    check_report "$work/report.json" "r['multiplier_requested'] == 2" \
        "r['real_frames_presented'] == 30"
    ;;
bad_line)
    cat >"$config" <<EOF
[program vkcube]
multiplier = 7
report = $work/report.json
EOF
    run_vkcube vkcube --c 30
    lines=$(grep -c "tandem-layer:" "$work/vkcube.err" || true)
    [ "$lines" -eq 1 ] || fail "want one log line for the bad line, got $lines"
    grep -q "tandem-layer: $config:2: multiplier = 7: '7' is not 1, 2 or 3; write 1" \
        "$work/vkcube.err" || fail "the log line does not name FILE:LINE: $(cat "$work/vkcube.err")"
    # The line is ignored (the default multiplier), the report line of the file is used.
    check_report "$work/report.json" "r['multiplier_requested'] == 2" \
        "r['real_frames_presented'] == 30" "r['mode'] == 'generating'"
    ;;
cli_status)
    cat >"$config" <<EOF
wait_ms = 20
[program vkcube]
multiplier = 3
report = /tmp/vkcube-report.json
worker = 2
EOF
    # The status lists devices on an instance of its own: without the layers named for vkcube.
    status() { env -u VK_INSTANCE_LAYERS "$tandem_cli" layer status "$@"; }
    status --program vkcube --json >"$work/status.json"
    check_report "$work/status.json" "r['config_file']['path'] == '$config'" \
        "r['config_file']['found'] is True" "r['profile'] == 'vkcube'" "r['multiplier'] == 3" \
        "r['settings']['multiplier'] == {'value': 3, 'text': '3', 'source': 'file', \
'where': '$config:3'}" \
        "r['settings']['report']['value'] == '/tmp/vkcube-report.json'" \
        "r['settings']['wait_ms']['where'] == '$config:1'" \
        "r['settings']['worker']['value'] == 'auto'" \
        "r['settings']['worker']['source'] == 'default'" \
        "len(r['problems']) == 1 and r['problems'][0].startswith('$config:5: worker = 2:')" \
        "len(r['devices']) >= 1" "r['worker_device']['workers'] != []"
    # The global section alone without --program; the environment over the file.
    TANDEM_FRAMEGEN_WAIT_MS=3 status --json >"$work/status.json"
    check_report "$work/status.json" "r['profile'] is None" "r['multiplier'] == 2" \
        "r['settings']['multiplier']['source'] == 'default'" \
        "r['settings']['wait_ms'] == {'value': 3, 'text': '3', 'source': 'environment', \
'where': 'TANDEM_FRAMEGEN_WAIT_MS'}"
    # No file: where it was looked for.
    rm "$config"
    status >"$work/status.txt"
    grep -q "config file  *$config (from XDG_CONFIG_HOME): absent, so no profile" \
        "$work/status.txt" || fail "the status does not say where it looked: $(cat "$work/status.txt")"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "layer.$case_name: PASS"
