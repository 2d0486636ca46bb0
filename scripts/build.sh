#!/usr/bin/env bash
# Configures and builds Tandem into build/ (or $TANDEM_BUILD_DIR): everything, for scripts/test.sh.
# `--target NAME` (repeatable) builds only those targets and what they need (scripts/demo.sh
# builds the `tandem` CLI alone); other arguments go to CMake and configure again.
# Incremental: a second run with nothing changed takes a second.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
targets=()
configure=()
while [ $# -gt 0 ]; do
    case "$1" in
    --target)
        [ $# -ge 2 ] || { echo "build.sh: --target needs a target name" >&2; exit 2; }
        targets+=(--target "$2")
        shift 2
        ;;
    *)
        configure+=("$1")
        shift
        ;;
    esac
done
"$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ] || [ ${#configure[@]} -gt 0 ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${TANDEM_BUILD_TYPE:-RelWithDebInfo} \
        -DTANDEM_WERROR=ON ${configure[@]+"${configure[@]}"} >/dev/null
fi
cmake --build "$build" ${targets[@]+"${targets[@]}"}
