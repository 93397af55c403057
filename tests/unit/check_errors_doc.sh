#!/usr/bin/env bash
# Every QSF_E_* code and every QSF_CAT_* error-record category of the public
# header is documented in docs/ERRORS.md.
set -euo pipefail
hdr=$1; doc=$2
codes=$(grep -oE '^\s+QSF_E_[A-Z_]+ = -[0-9]+' "$hdr" | awk '{print $1}')
cats=$(grep -oE '^\s+QSF_CAT_[A-Z_]+ = [0-9]+' "$hdr" | awk '{print $1}')
n=$(( $(echo "$codes" | wc -l) + $(echo "$cats" | wc -l) ))
echo "1..$n"; i=0; bad=0
for c in $codes; do
  i=$((i+1))
  if grep -q "\`$c\`" "$doc"; then echo "ok $i - $c documented"; else echo "not ok $i - $c missing from ERRORS.md"; bad=1; fi
done
for c in $cats; do
  i=$((i+1)); name=${c#QSF_CAT_}
  if grep -q "\`$name\`" "$doc"; then echo "ok $i - category $name documented"; else echo "not ok $i - category $name missing from ERRORS.md"; bad=1; fi
done
exit $bad
