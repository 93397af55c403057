#!/usr/bin/env bash
# Fetches DuckDB's shared library, libduckdb.so (its C API, with Arrow export),
# from the npm package @duckdb/node-bindings-linux-x64 into a cache directory
# outside the checkout. The DuckDB test (tests/integration/test_arrow_duckdb.c)
# and examples/arrow_duckdb.c dlopen it from there (or from $QSF_DUCKDB_LIB)
# and are skipped, with the reason printed, where it is absent.
#   scripts/fetch-duckdb.sh            -> ${XDG_CACHE_HOME:-~/.cache}/qsf/duckdb/libduckdb.so
# QSF_DUCKDB_VERSION picks another package version; QSF_DUCKDB_DIR another directory.
# Needs npm (apt-get install -y npm) and network access to the npm registry.
set -euo pipefail
version=${QSF_DUCKDB_VERSION:-1.5.6-r.1}
dir=${QSF_DUCKDB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qsf/duckdb}
if [ -f "$dir/libduckdb.so" ] && [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$version" ]; then
  echo "fetch-duckdb: $dir/libduckdb.so ($version) is there"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-duckdb: npm is missing (apt-get install -y npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@duckdb/node-bindings-linux-x64@$version" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp" package/libduckdb.so
mkdir -p "$dir"
mv "$tmp/package/libduckdb.so" "$dir/libduckdb.so"
echo "$version" > "$dir/VERSION"
echo "fetch-duckdb: $dir/libduckdb.so ($version)"
