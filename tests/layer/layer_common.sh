# Shared by the layer's test scripts (sourced): failing a case, the tools a case needs, lavapipe
# as the only driver with no Tandem setting inherited from the caller, and checks of a JSON report.
# The sourcing script sets case_name first.

fail() {
    echo "layer.$case_name: FAIL: $*" >&2
    exit 1
}

# require_tools HINT TOOL...: fails the case (never skips it) when a tool is missing, HINT saying
# what installs it: a test that skipped on a machine without them would hide a broken layer.
require_tools() {
    local hint=$1
    shift
    for tool in "$@"; do
        command -v "$tool" >/dev/null || fail "$tool is missing ($hint)"
    done
}

# lavapipe_only: Debian's lavapipe as the only Vulkan driver, and none of the layer's settings
# (environment or configuration file) nor the loader's layer variables from the caller's
# environment. The sourcing script sets work first.
lavapipe_only() {
    local candidate
    lvp_icd=
    for candidate in /usr/share/vulkan/icd.d/lvp_icd.*.json; do
        [ -f "$candidate" ] && lvp_icd=$candidate
    done
    [ -n "$lvp_icd" ] || fail "no lavapipe ICD (mesa-vulkan-drivers) under /usr/share/vulkan/icd.d"
    unset ENABLE_TANDEM_FRAMEGEN DISABLE_TANDEM_FRAMEGEN TANDEM_FRAMEGEN_MULTIPLIER \
        TANDEM_FRAMEGEN_REPORT TANDEM_FRAMEGEN_LOG TANDEM_FRAMEGEN_WAIT_MS TANDEM_FRAMEGEN_WORKER \
        TANDEM_FRAMEGEN_VERIFY TANDEM_FRAMEGEN_DUMP TANDEM_FRAMEGEN_DUMP_FRAMES TANDEM_FRAMEGEN_SCALE \
        TANDEM_FRAMEGEN_QUEUE TANDEM_FRAMEGEN_CONFIG TANDEM_FAULT_WORKER_LOST XDG_CONFIG_HOME \
        VK_INSTANCE_LAYERS VK_LAYER_PATH VK_ADD_LAYER_PATH VK_ICD_FILENAMES VK_LAYER_SETTINGS_PATH
    export VK_DRIVER_FILES=$lvp_icd
    # No profile of the user's (~/.config/tandem) reaches a case: a folder of its own, empty.
    export XDG_CONFIG_HOME=$work/xdg-config
    export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
}

# validation_to_file: the Khronos validation layer (synchronisation validation too, unless
# TANDEM_VALIDATION is off or 0) writes its messages to $work/validation.log
# (vk_layer_settings.txt in $work), so that any message fails the case whatever the program does
# with its own output. Sets validation_log, and validation_layers (empty when off).
validation_to_file() {
    validation_log=$work/validation.log
    validation_layers=VK_LAYER_KHRONOS_validation
    case "${TANDEM_VALIDATION:-sync}" in
    0 | off) validation_layers= ;;
    *)
        {
            echo "khronos_validation.report_flags = error,warn"
            echo "khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG"
            echo "khronos_validation.log_filename = $validation_log"
            if [ "${TANDEM_VALIDATION:-sync}" = sync ]; then
                echo "khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
            fi
        } >"$work/vk_layer_settings.txt"
        export VK_LAYER_SETTINGS_PATH=$work
        ;;
    esac
}

# check_report FILE PYTHON-EXPRESSION...: each expression, on the report `r`, must hold.
check_report() {
    local file=$1
    shift
    [ -f "$file" ] || fail "no report at $file"
    python3 - "$file" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for check in sys.argv[2:]:
    if not eval(check, {"r": r}):
        print(json.dumps(r, indent=2), file=sys.stderr)
        sys.exit(f"report check failed: {check}")
PY
}
