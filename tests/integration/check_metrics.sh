#!/usr/bin/env bash
# Runs metrics_dump, then check_metrics.py with a Python that has the
# Prometheus text parser (Debian: python3-prometheus-client, installed by
# scripts/setup-debian.sh). Without one the test is skipped (TAP plan 1..0).
set -uo pipefail
dump=$1 checker=$2
py=
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import prometheus_client.parser' 2>/dev/null; then
    py=$c
    break
  fi
done
if [ -z "$py" ]; then
  echo "1..0 # SKIP no python3 with prometheus_client (apt-get install python3-prometheus-client)"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! "$dump" "$dir"; then
  echo "1..1"
  echo "not ok 1 - metrics_dump wrote the stats"
  exit 1
fi
"$py" "$checker" "$dir"
