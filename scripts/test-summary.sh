#!/usr/bin/env bash
# Prints "tests: N passed, N failed" from a meson testlog.json (one JSON object a
# test). Counts whole test programs; each program's TAP subtests are in the log.
set -euo pipefail
log=$1
passed=$(grep -c '"result": "OK"' "$log" || true)
failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
skipped=$(grep -c '"result": "SKIP"' "$log" || true)
echo "tests: $passed passed, $failed failed, $skipped skipped"
