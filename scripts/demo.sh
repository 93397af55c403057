#!/usr/bin/env bash
# The main job: builds qsf and checks an example connect string with the qsf tool.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${QSF_DEMO_BUILD:-build}
[ -d "$BUILD" ] || meson setup "$BUILD" -Dtests=false >/dev/null
ninja -C "$BUILD" >/dev/null
"$BUILD/tools/qsf/qsf" conf check 'ws::addr=127.0.0.1:9000;sf_dir=/tmp/qsf-demo;sender_id=demo;sf_durability=periodic;sf_sync_interval_millis=1000;'
