#!/usr/bin/env bash
# Every global the static library defines carries the qsf_ prefix, as the
# shared library's exports do (check_exports.sh): a program that links libqsf.a
# must not meet our internal names in its own namespace. TAP output.
set -euo pipefail
lib=$1
echo "1..2"
syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort -u)
# Without these the check below could not fail.
if grep -qx 'qsf_err_name' <<<"$syms" && grep -qx 'qsf_sfa_header_encode' <<<"$syms"; then
  echo "ok 1 - $(wc -l <<<"$syms") globals defined, public and internal"; else
  echo "not ok 1 - $lib defines neither qsf_err_name nor qsf_sfa_header_encode"; exit 1; fi
# Names starting with __ are reserved to the implementation: the compiler's
# own, e.g. the __odr_asan.<global> markers of AddressSanitizer builds.
bad=$(grep -v -e '^qsf_' -e '^__' <<<"$syms" || true)
if [ -z "$bad" ]; then echo "ok 2 - every defined global starts with qsf_"; else
  echo "not ok 2 - $(wc -l <<<"$bad") globals without the qsf_ prefix:"
  echo "$bad" | sed 's/^/# /'; exit 1; fi
