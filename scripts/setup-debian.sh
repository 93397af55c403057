#!/usr/bin/env bash
# Installs the Debian 12 packages qsf needs to build, test and run its demo.
# Idempotent: does nothing when every package is already installed. Run as root.
set -euo pipefail
# python3-prometheus-client: the Prometheus text parser the metrics_text test
# reads qsf_metrics_prometheus with. g++, pkg-config and binutils (readelf, nm):
# the install suite builds C and C++ programs against an install of qsf through
# pkg-config and reads the installed libraries. cmake: the install suite builds
# a CMake project against the installed CMake package. python3-numpy:
# examples/numpy_ctypes.py (run by the examples suite) hands NumPy arrays to the
# chunk API. iproute2 (tc): the sender_frozen test makes the loopback of its own
# network namespace drop every packet.
PKGS=(gcc g++ binutils meson ninja-build pkg-config libwebsockets-dev libssl-dev
      libisal-dev libcmocka-dev clang-format openssl python3-prometheus-client cmake
      python3-numpy iproute2)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
else
  echo "setup: all packages present"
fi
# DuckDB's libduckdb.so (the Arrow producer of the arrow_duckdb tests and
# examples/arrow_duckdb.c) comes from the npm registry, not from Debian; where it
# cannot be fetched those tests are skipped and say why, so this never fails setup.
# npm: Debian's package, unless a node.js that brings its own npm (which
# conflicts with Debian's) is installed already.
if ! command -v npm >/dev/null; then
  apt-get install -y -q npm || echo "setup: npm could not be installed"
fi
bash "$(dirname "$0")/fetch-duckdb.sh" ||
  echo "setup: DuckDB was not fetched: the tests that need it will be skipped"
