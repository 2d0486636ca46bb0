#!/usr/bin/env bash
# Compares the tests a CTest run skipped (its JUnit file, `ctest --output-junit`) with
# tests/expected-skips.txt, and fails when they differ: a test that skips unexpectedly, one
# expected to skip that ran (or did not run at all), or a skip whose message starts with a tag
# ("[expected-skip:<reason>]") other than the one listed. A skip hides a regression as well as a
# failure would, so the set of skips is part of what the suite checks.
#
#   scripts/check-skips.sh JUNIT.xml [EXPECTED.txt] [--also-allow REASON]...
#
# --also-allow REASON: skips with that tag are accepted besides the list (scripts/test.sh passes
# validation-off when TANDEM_VALIDATION turns validation off).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$root" "$@" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET

root, args = sys.argv[1], sys.argv[2:]
also_allowed = set()
positional = []
i = 0
while i < len(args):
    if args[i] == "--also-allow" and i + 1 < len(args):
        also_allowed.add(args[i + 1])
        i += 2
    else:
        positional.append(args[i])
        i += 1
if not positional or len(positional) > 2:
    sys.exit("usage: check-skips.sh JUNIT.xml [EXPECTED.txt] [--also-allow REASON]...")
junit = positional[0]
expected_file = positional[1] if len(positional) > 1 else root + "/tests/expected-skips.txt"

expected = {}  # test name -> reason id
with open(expected_file, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            sys.exit(f"{expected_file}:{number}: want '<test name> <reason id>', got '{line}'")
        if fields[0] in expected:
            sys.exit(f"{expected_file}:{number}: {fields[0]} is listed twice")
        expected[fields[0]] = fields[1]

tag = re.compile(r"\[expected-skip:([A-Za-z0-9_.-]+)\]")
ran = set()
skipped = {}  # test name -> the tag its output carries, or None
for case in ET.parse(junit).getroot().iter("testcase"):
    # gtest_discover_tests names a parameterised test "Suite.Test/case  # GetParam() = ...".
    name = case.get("name").split("  #", 1)[0].strip()
    ran.add(name)
    if case.find("skipped") is None and case.get("status") != "notrun":
        continue
    out = case.find("system-out")
    found = tag.search(out.text or "") if out is not None else None
    skipped[name] = found.group(1) if found else None

problems = []
for name, reason in sorted(skipped.items()):
    if name in expected:
        if reason is not None and reason != expected[name]:
            problems.append(f"{name}: skipped for [{reason}], listed for [{expected[name]}]")
    elif reason is None or reason not in also_allowed:
        problems.append(f"{name}: skipped ([{reason or 'no tag'}]) but not expected to skip")
for name, reason in sorted(expected.items()):
    if name not in ran:
        problems.append(f"{name}: expected to skip ([{reason}]) but is not in this run")
    elif name not in skipped:
        problems.append(f"{name}: expected to skip ([{reason}]) but ran")

if problems:
    print(f"check-skips: the skipped tests differ from {expected_file}:", file=sys.stderr)
    for p in problems:
        print("  " + p, file=sys.stderr)
    sys.exit(1)
print(f"check-skips: {len(skipped)} skipped tests, as {expected_file} expects")
PY
