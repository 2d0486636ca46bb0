#!/usr/bin/env bash
# The README's second command: installs what is missing, builds with warnings as errors, checks
# formatting, and runs the whole test suite through CTest with Khronos validation (including
# synchronisation validation) on every Vulkan test. Then builds the libFuzzer targets with clang
# (AddressSanitizer + UBSan, every finding fatal) in build-fuzz/ and runs each for a minute from
# its seed corpus; any sanitizer report fails the run (TANDEM_SKIP_FUZZ=1 skips that part).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TANDEM_BUILD_DIR:-$root/build}
# Each part's wall time, printed at the end (CI's budget is 30 minutes on 2 cores).
timings=()
mark=$SECONDS
timed() { # NAME: the time since the last mark, as a part of the run
    timings+=("$1 $((SECONDS - mark)) s")
    mark=$SECONDS
}
report_timings() {
    local line="" t
    for t in "${timings[@]}"; do line+="${line:+, }$t"; done
    echo "test.sh: ${line}${line:+; }total $SECONDS s" >&2
}
trap report_timings EXIT
# A build folder made here has no debug information (TANDEM_DEBUG_INFO=OFF): a third less to
# compile and link, and nothing a test asserts depends on it. An existing folder is kept as it is.
fresh=()
[ -f "$build/build.ninja" ] || fresh=(-DTANDEM_DEBUG_INFO=OFF)
"$root/scripts/build.sh" "${fresh[@]}"
timed build
"$root/scripts/check-format.sh"
timed format
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export TANDEM_VALIDATION=${TANDEM_VALIDATION:-sync}
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --output-on-failure --timeout 600 -j "$jobs" \
    --output-junit "$build/ctest-junit.xml"

# The tests that skipped must be exactly those tests/expected-skips.txt lists for the CI machine
# (lavapipe, no GPU, no CUDA): a skip hides a regression as well as a failure does
# (scripts/check-skips.sh). Another machine names its own list in TANDEM_EXPECTED_SKIPS.
skip_args=()
case "$TANDEM_VALIDATION" in 0 | off) skip_args=(--also-allow validation-off) ;; esac
"$root/scripts/check-skips.sh" "$build/ctest-junit.xml" \
    "${TANDEM_EXPECTED_SKIPS:-$root/tests/expected-skips.txt}" "${skip_args[@]}"
timed tests

if [ "${TANDEM_SKIP_FUZZ:-0}" != 1 ]; then
    fuzz_build=${TANDEM_FUZZ_BUILD_DIR:-$root/build-fuzz}
    if [ ! -f "$fuzz_build/build.ninja" ]; then
        cmake -S "$root" -B "$fuzz_build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_WERROR=ON -DTANDEM_BUILD_FUZZERS=ON \
            -DTANDEM_BUILD_TESTS=OFF -DTANDEM_BUILD_BENCH=OFF >/dev/null
    fi
    cmake --build "$fuzz_build" --target fuzz_gltf fuzz_tasks fuzz_snapshot fuzz_capture fuzz_profile \
        fuzz_compute
    timed "fuzzers' build"
    # Each fuzzer runs for TANDEM_FUZZ_SECONDS (60 by default; fuzz/CMakeLists.txt), one per core.
    ctest --test-dir "$fuzz_build" --output-on-failure -j "$jobs"
    timed fuzzers
fi

# ThreadSanitizer: the threaded layers' tests (runtime, its inputs and chains, its scheduler, sync) again, built with -fsanitize=thread
# into build-tsan (only those test executables are built). TANDEM_SKIP_TSAN=1 skips it.
if [ "${TANDEM_SKIP_TSAN:-0}" != 1 ]; then
    tsan=${TANDEM_TSAN_BUILD_DIR:-$root/build-tsan}
    if [ ! -f "$tsan/build.ninja" ]; then
        cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DTANDEM_WERROR=ON -DTANDEM_SANITIZE=thread -DTANDEM_BUILD_BENCH=OFF >/dev/null
    fi
    cmake --build "$tsan" --target test_runtime test_slot_ring test_sync test_slow_worker \
        test_scheduler test_harness_stream test_task_lifetime test_task_inputs test_task_chains \
        test_worker_leases
    timed "TSan build"
    # scripts/tsan.supp: races inside lavapipe (not built with TSan) between its own threads.
    tsan_options="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/scripts/tsan.supp"
    # Each executable keeps about one core busy (lavapipe and the runtime's threads mostly take
    # turns), so they run `jobs` at a time, longest first; test_task_inputs, the longest by far,
    # in two shards. Validation layers are not instrumented and slow TSan down (the run above had
    # them on). The executables run directly: only they are built in build-tsan. A run's output
    # is shown when it fails, and marked by $logs/NAME.failed.
    logs="$tsan/logs"
    rm -rf "$logs"
    mkdir -p "$logs"
    tsan_run() { # NAME EXECUTABLE [VAR=VALUE...]: one run, its output in $logs/NAME.log
        local name=$1 exe=$2
        shift 2
        if ! env TANDEM_VALIDATION=off TSAN_OPTIONS="$tsan_options" "$@" \
            timeout 900 "$tsan/$exe" --gtest_brief=1 >"$logs/$name.log" 2>&1; then
            cat "$logs/$name.log" >&2
            echo "test.sh: $name failed under ThreadSanitizer" >&2
            touch "$logs/$name.failed"
        fi
    }
    runs=(
        "inputs-1 tests/runtime/test_task_inputs GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0"
        "inputs-2 tests/runtime/test_task_inputs GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1"
        "lifetime tests/runtime/test_task_lifetime"
        "chains tests/runtime/test_task_chains"
        # Worker threads and the bridge poll before sleeping only on machines with cores to
        # spare: the runtime once more with that forced, so both paths are checked here.
        "runtime-spare tests/runtime/test_runtime TANDEM_SPARE_CORES=1"
        "runtime tests/runtime/test_runtime"
        "scheduler tests/sched/test_scheduler"
        "slow-worker tests/runtime/test_slow_worker"
        "sync tests/sync/test_sync"
        "leases tests/runtime/test_worker_leases"
        "harness-stream tests/harness/test_harness_stream"
        "slot-ring tests/runtime/test_slot_ring"
    )
    for r in "${runs[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
        # shellcheck disable=SC2086 # the run's words: its name, executable and variables
        tsan_run $r &
    done
    wait
    if compgen -G "$logs/*.failed" >/dev/null; then
        echo "test.sh: ThreadSanitizer failed: $(cd "$logs" && echo *.failed)" >&2
        exit 1
    fi
    timed TSan
fi
