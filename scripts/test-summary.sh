#!/usr/bin/env bash
# Prints "tests: N passed, N failed" from a meson testlog.json (one JSON object a
# test). Counts whole test programs; each program's TAP subtests are in the log.
# Before the count, every failed program's failed subtests are printed with the
# diagnostics cmocka wrote after them: meson's --print-errorlogs shows a TAP
# program's stderr, but the "not ok" lines and the assertion that failed are on
# its stdout.
set -euo pipefail
log=$1
python3 - "$log" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    t = json.loads(line)
    if t.get("result") not in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
        continue
    print(f"== {t['name']}: {t['result']} (exit {t.get('returncode')})")
    showing = False
    for out in (t.get("stdout") or "").splitlines():
        if out.startswith("not ok"):
            showing = True
        elif out.startswith("ok ") or out.startswith("1.."):
            showing = False
        if showing:
            print("   " + out)
PY
passed=$(grep -c '"result": "OK"' "$log" || true)
failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
skipped=$(grep -c '"result": "SKIP"' "$log" || true)
echo "tests: $passed passed, $failed failed, $skipped skipped"
