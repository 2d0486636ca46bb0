#!/usr/bin/env bash
# The README's first command: installs what is missing, builds what the demo runs (the `tandem`
# CLI and what it needs; scripts/test.sh builds the rest), and runs the main job, `tandem run` on
# the built-in demo, on whatever Vulkan devices exist (lavapipe when there is no GPU); the PNGs
# and report.json land in ./tandem-out. Arguments go to `tandem` instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" --target tandem
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# The demo runs under the Khronos validation layer unless told otherwise; any message fails it
# (exit status 3).
export TANDEM_VALIDATION=${TANDEM_VALIDATION:-core}
if [ $# -eq 0 ]; then
    set -- run
fi
exec "$build/apps/tandem/tandem" "$@"
