#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (config: .clang-format) would write.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
files=$(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find . -name '*.[ch]pp' -not -path './build*')
[ -n "$files" ] || exit 0
# shellcheck disable=SC2086
if ! clang-format --dry-run --Werror $files 2>/tmp/tandem-format.log; then
    echo "tandem: clang-format differences (run: clang-format -i \$(git ls-files '*.cpp' '*.hpp')):"
    head -40 /tmp/tandem-format.log
    exit 1
fi
