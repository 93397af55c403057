#!/usr/bin/env bash
# Prints "tests: N passed, N failed" from a meson testlog.json (one JSON object a
# test). Counts whole test programs; each program's TAP subtests are in the log.
# Before the count, every failed program's failed subtests are printed with the
# diagnostics cmocka wrote after them: meson's --print-errorlogs shows a TAP
# program's stderr, but the "not ok" lines and the assertion that failed are on
# its stdout. Every skip is printed with its reason too (meson's console says a
# bare SKIP): a skipped program's "# SKIP" line, or a skipped subtest's of a
# program that passed.
set -euo pipefail
python3 - "$1" <<'PY'
import json, re, sys
SKIP_LINE = re.compile(r"^(ok\b.*|1\.\.0\s*)#\s*(SKIP|skip)\b")
FAILED = ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS")
passed = failed = skipped = 0


def skip_reasons(t):
    """The "# SKIP ..." lines a test printed, or what says why it exited 77."""
    out = (t.get("stdout") or "").splitlines()
    # TAP directives only: a skipped subtest ("ok N ... # SKIP why") or a
    # skipped plan ("1..0 # SKIP why"), not a diagnostic line ("# ...") that
    # happens to quote one
    reasons = [l.strip() for l in out if SKIP_LINE.match(l)]
    if reasons or t.get("result") != "SKIP":
        return reasons
    tail = [l.strip() for l in out + (t.get("stderr") or "").splitlines() if l.strip()]
    return tail[-1:] or [f"exit {t.get('returncode')}, no reason printed"]


for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    t = json.loads(line)
    result = t.get("result")
    passed += result == "OK"
    skipped += result == "SKIP"
    if result in ("OK", "SKIP"):
        for reason in skip_reasons(t):
            print(f"== {t['name']}: {'SKIP' if result == 'SKIP' else 'skipped'}: {reason}")
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
