#!/usr/bin/env bash
# The shared library exports only qsf_ symbols (hidden visibility elsewhere).
# TAP output so meson counts it.
set -euo pipefail
lib=$1
echo "1..2"
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^$' || true)
bad=$(echo "$syms" | grep -v '^qsf_' || true)
if [ -z "$bad" ]; then echo "ok 1 - only qsf_ symbols exported"; else
  echo "not ok 1 - foreign exported symbols:"; echo "$bad" | sed 's/^/# /'; exit 1; fi
if echo "$syms" | grep -qx 'qsf_err_name'; then echo "ok 2 - qsf_err_name exported"; else
  echo "not ok 2 - qsf_err_name missing"; exit 1; fi
