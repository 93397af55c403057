#!/usr/bin/env bash
# Builds qsf with fault injection and runs every test suite. Ends with a line
# "tests: N passed, N failed, N skipped",
# after the reason of every skip (scripts/test-summary.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${QSF_TEST_BUILD:-build-test}
# -Dtests=true: without cmocka this stops here instead of running no test.
# -Dfuzz=true: the fuzz replays (suite fuzz). The benchmarks are not built.
OPTS=(-Dtests=true -Dfuzz=true -Dfault_injection=true -Dwerror=true)
if [ -d "$BUILD" ]; then
  meson setup --reconfigure "$BUILD" "${OPTS[@]}" >/dev/null
else
  meson setup "$BUILD" "${OPTS[@]}" >/dev/null
fi
ninja -C "$BUILD"
set +e
meson test -C "$BUILD" --print-errorlogs --num-processes 2 "$@"
rc=$?
set -e
bash scripts/test-summary.sh "$BUILD/meson-logs/testlog.json"
exit $rc
