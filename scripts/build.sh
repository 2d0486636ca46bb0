#!/usr/bin/env bash
# Configures and builds Tandem into build/ (or $TANDEM_BUILD_DIR). Extra arguments go to CMake.
# Incremental: a second run with nothing changed takes a second.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${TANDEM_BUILD_TYPE:-RelWithDebInfo} \
        -DTANDEM_WERROR=ON "$@" >/dev/null
fi
cmake --build "$build"
