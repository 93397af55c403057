#!/usr/bin/env bash
# Runs a metrics checker (check_metrics*.py CHECKER ARGS...) with a Python
# that has the Prometheus text parser (Debian: python3-prometheus-client,
# installed by scripts/setup-debian.sh). Without one the test is skipped
# (TAP plan 1..0).
set -uo pipefail
checker=$1
shift
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import prometheus_client.parser' 2>/dev/null; then
    exec "$c" "$checker" "$@"
  fi
done
echo "1..0 # SKIP no python3 with prometheus_client (apt-get install python3-prometheus-client)"
exit 0
