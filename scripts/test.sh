#!/usr/bin/env bash
# The README's second command: installs what is missing, builds with warnings as errors, checks
# formatting, and runs the whole test suite through CTest with Khronos validation (including
# synchronisation validation) on every Vulkan test. Then builds the libFuzzer targets with clang
# (AddressSanitizer + UBSan) in build-fuzz/ and runs each briefly over its seed corpus
# (TANDEM_SKIP_FUZZ=1 skips that part).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
"$root/scripts/check-format.sh"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export TANDEM_VALIDATION=${TANDEM_VALIDATION:-sync}
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --output-on-failure --timeout 600 -j "$jobs"

if [ "${TANDEM_SKIP_FUZZ:-0}" != 1 ]; then
    fuzz_build=${TANDEM_FUZZ_BUILD_DIR:-$root/build-fuzz}
    if [ ! -f "$fuzz_build/build.ninja" ]; then
        cmake -S "$root" -B "$fuzz_build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_WERROR=ON -DTANDEM_BUILD_FUZZERS=ON \
            -DTANDEM_BUILD_TESTS=OFF -DTANDEM_BUILD_BENCH=OFF >/dev/null
    fi
    cmake --build "$fuzz_build" --target fuzz_gltf fuzz_tasks fuzz_snapshot
    ctest --test-dir "$fuzz_build" --output-on-failure --timeout 600
fi
