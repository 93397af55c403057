#!/usr/bin/env bash
# Builds qsf with fault injection and runs every test suite. Ends with a line
# "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${QSF_TEST_BUILD:-build-test}
# -Dtests=true: without cmocka this stops here instead of running no test.
if [ -d "$BUILD" ]; then
  meson setup --reconfigure "$BUILD" -Dtests=true -Dfault_injection=true -Dwerror=true >/dev/null
else
  meson setup "$BUILD" -Dtests=true -Dfault_injection=true -Dwerror=true >/dev/null
fi
ninja -C "$BUILD"
set +e
meson test -C "$BUILD" --print-errorlogs --num-processes 2 "$@"
rc=$?
set -e
bash scripts/test-summary.sh "$BUILD/meson-logs/testlog.json"
exit $rc
