#!/usr/bin/env bash
# libqsf (shared and static) holds no part of the server-side decoder: the
# decoder is the static library qwpdec (lib/qwpdec/), linked by the test server,
# the tests, the fuzz targets and the benchmarks only. The decoder's symbols are
# taken from qwpdec itself, so a new decoder function is checked too.
# Usage: check_no_decoder.sh libqwpdec.a libqsf.so libqsf.a. TAP output.
set -euo pipefail
dec=$1 so=$2 ar=$3
echo "1..3"
globals() { nm -g --defined-only "$1" | awk 'NF == 3 {print $3}' | sort -u; }
decsyms=$(globals "$dec")
sosyms=$(nm --defined-only "$so" | awk '{print $NF}' | sort -u)
# Without these the comparisons below could not fail: the decoder's symbols,
# and the .so's hidden functions in its symbol table (any of them: with
# link-time optimisation a given one may have been inlined away).
hidden=$(nm --defined-only "$so" | awk '$2 == "t" && $3 ~ /^qsf_/' | wc -l)
if grep -qx 'qsf_qwp_decode' <<<"$decsyms" && [ "$hidden" -gt 0 ]; then
  echo "ok 1 - $(echo "$decsyms" | wc -l) decoder symbols; libqsf.so keeps its symbol table"
else
  echo "not ok 1 - qwpdec defines no qsf_qwp_decode, or libqsf.so has no symbol table"; exit 1
fi
# Every symbol of the .so's symbol table, hidden ones included.
in_so=$(comm -12 <(echo "$decsyms") <(echo "$sosyms"))
if [ -z "$in_so" ]; then echo "ok 2 - no decoder symbol in libqsf.so"; else
  echo "not ok 2 - decoder symbols in libqsf.so:"; echo "$in_so" | sed 's/^/# /'; exit 1; fi
in_ar=$(comm -12 <(echo "$decsyms") <(globals "$ar"))
if [ -z "$in_ar" ]; then echo "ok 3 - no decoder symbol in libqsf.a"; else
  echo "not ok 3 - decoder symbols in libqsf.a:"; echo "$in_ar" | sed 's/^/# /'; exit 1; fi
