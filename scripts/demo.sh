#!/usr/bin/env bash
# The main job: publishes a few million trades through a store-and-forward sender
# into the bundled qwp-sink, takes the sink away for a few seconds midway while
# the producer keeps publishing, and reports rows/s, the outage, the frames
# replayed and the rows lost (0). Usage: scripts/demo.sh [rows], or any arguments
# of the demo (scripts/demo.sh --help; --conf CONNECT_STRING for a real QuestDB).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${QSF_DEMO_BUILD:-build-demo}
[ -d "$BUILD" ] || meson setup "$BUILD" -Dbuildtype=release -Dfault_injection=false -Dtests=false >/dev/null
ninja -C "$BUILD" examples/demo >/dev/null
[ $# -gt 0 ] || set -- 4000000
exec "$BUILD/examples/demo" "$@"
