#!/usr/bin/env bash
# libqsf (shared and static) holds no part of a library kept out of it: the
# server-side decoder (lib/qwpdec/, linked by the test server, the tests, the
# fuzz targets and the benchmarks) or the operator tooling of the qsf CLI
# (lib/sfops/, linked by the CLI and its tests). The kept-out library's symbols
# are taken from it, so a function added to it is checked too.
# Usage: check_not_in_libqsf.sh <lib.a> <a symbol it defines> <its name>
#        libqsf.so libqsf.a. TAP output.
set -euo pipefail
lib=$1 sentinel=$2 what=$3 so=$4 ar=$5
echo "1..3"
globals() { nm -g --defined-only "$1" | awk 'NF == 3 {print $3}' | sort -u; }
libsyms=$(globals "$lib")
sosyms=$(nm --defined-only "$so" | awk '{print $NF}' | sort -u)
# Without these the comparisons below could not fail: the library's symbols,
# and the .so's hidden functions in its symbol table (any of them: with
# link-time optimisation a given one may have been inlined away).
hidden=$(nm --defined-only "$so" | awk '$2 == "t" && $3 ~ /^qsf_/' | wc -l)
if grep -qx "$sentinel" <<<"$libsyms" && [ "$hidden" -gt 0 ]; then
  echo "ok 1 - $(echo "$libsyms" | wc -l) $what symbols; libqsf.so keeps its symbol table"
else
  echo "not ok 1 - $lib defines no $sentinel, or libqsf.so has no symbol table"; exit 1
fi
# Every symbol of the .so's symbol table, hidden ones included.
in_so=$(comm -12 <(echo "$libsyms") <(echo "$sosyms"))
if [ -z "$in_so" ]; then echo "ok 2 - no $what symbol in libqsf.so"; else
  echo "not ok 2 - $what symbols in libqsf.so:"; echo "$in_so" | sed 's/^/# /'; exit 1; fi
in_ar=$(comm -12 <(echo "$libsyms") <(globals "$ar"))
if [ -z "$in_ar" ]; then echo "ok 3 - no $what symbol in libqsf.a"; else
  echo "not ok 3 - $what symbols in libqsf.a:"; echo "$in_ar" | sed 's/^/# /'; exit 1; fi
