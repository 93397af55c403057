#!/usr/bin/env bash
# Prints "tests: N passed, N failed" from a meson testlog.json (one JSON object a
# test). Counts whole test programs; each program's TAP subtests are in the log.
# Before the count, every failed program's failed subtests are printed with the
# diagnostics cmocka wrote after them: meson's --print-errorlogs shows a TAP
# program's stderr, but the "not ok" lines and the assertion that failed are on
# its stdout.
set -euo pipefail
python3 - "$1" <<'PY'
import json, sys
FAILED = ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS")
passed = failed = skipped = 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    t = json.loads(line)
    result = t.get("result")
    passed += result == "OK"
    skipped += result == "SKIP"
    if result not in FAILED:
        continue
    failed += 1
    print(f"== {t['name']}: {result} (exit {t.get('returncode')})")
    showing = False
    for out in (t.get("stdout") or "").splitlines():
        if out.startswith("not ok"):
            showing = True
        elif out.startswith("ok ") or out.startswith("1.."):
            showing = False
        if showing:
            print("   " + out)
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
