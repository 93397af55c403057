#!/usr/bin/env bash
# scripts/test-summary.sh on a made-up meson testlog.json: every skip is
# printed with its reason (a skipped program's "# SKIP" line, a skipped
# subtest of a program that passed, what an exit-77 program said), a failed
# program with its failed subtests, and the counts. TAP output.
set -uo pipefail
summary=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/qsf-summary.XXXXXX")
trap 'rm -rf "$W"' EXIT
cat >"$W/testlog.json" <<'LOG'
{"name": "interop_sf", "result": "SKIP", "returncode": 0, "stdout": "1..0 # SKIP no ../../shared/reference\n"}
{"name": "fault_arm", "result": "SKIP", "returncode": 77, "stdout": "", "stderr": "needs -Dfault_injection=true\n"}
{"name": "mute", "result": "SKIP", "returncode": 77, "stdout": "", "stderr": ""}
{"name": "segment", "result": "OK", "returncode": 0, "stdout": "ok 1 - a\nok 2 - io_accounting # SKIP no per-thread I/O accounting\n1..2\n"}
{"name": "bad", "result": "FAIL", "returncode": 1, "stdout": "ok 1 - a\nnot ok 2 - b\n# assertion x\n1..2\n"}
{"name": "good", "result": "OK", "returncode": 0, "stdout": "ok 1 - a\n1..1\n# a quoted line: ok 2 - x # SKIP y\n"}
LOG
out=$(bash "$summary" "$W/testlog.json" 2>&1)
want=(
  "== interop_sf: SKIP: 1..0 # SKIP no ../../shared/reference"
  "== fault_arm: SKIP: needs -Dfault_injection=true"
  "== mute: SKIP: exit 77, no reason printed"
  "== segment: skipped: ok 2 - io_accounting # SKIP no per-thread I/O accounting"
  "== bad: FAIL (exit 1)"
  "   not ok 2 - b"
  "   # assertion x"
  "tests: 2 passed, 1 failed, 3 skipped"
)
echo "1..$((${#want[@]} + 1))"
i=0
for line in "${want[@]}"; do
  i=$((i + 1))
  # (a "#" in a description would read as a TAP directive)
  if grep -qxF -- "$line" <<<"$out"; then echo "ok $i - expected line $i"; else
    echo "not ok $i - expected line $i missing"; echo "# missing: $line"; fi
done
i=$((i + 1))
# (good's diagnostic line quotes a skip: it is not one)
if grep -q good <<<"$out"; then echo "not ok $i - a passing program without skips is named"; else echo "ok $i - a passing program without skips is not named"; fi
echo "$out" | sed 's/^/# /'
