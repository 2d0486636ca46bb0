#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the main job on
# whatever Vulkan devices exist (lavapipe when there is no GPU). Arguments go to `tandem`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
if [ $# -eq 0 ]; then
    set -- devices
fi
exec "$build/apps/tandem/tandem" "$@"
