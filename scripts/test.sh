#!/usr/bin/env bash
# The README's second command: installs what is missing, builds with warnings as errors, checks
# formatting, and runs the whole test suite through CTest with Khronos validation (including
# synchronisation validation) on every Vulkan test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
"$root/scripts/check-format.sh"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export TANDEM_VALIDATION=${TANDEM_VALIDATION:-sync}
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --output-on-failure --timeout 600 -j "$jobs"
