#!/usr/bin/env bash
# Installs the Debian 12 packages qsf needs to build, test and run its demo.
# Idempotent: does nothing when every package is already installed. Run as root.
set -euo pipefail
# python3-prometheus-client: the Prometheus text parser the metrics_text test
# reads qsf_metrics_prometheus with. g++, pkg-config and binutils (readelf, nm):
# the install suite builds C and C++ programs against an install of qsf through
# pkg-config and reads the installed libraries. iproute2 (tc): the sender_frozen
# test makes the loopback of its own network namespace drop every packet.
PKGS=(gcc g++ binutils meson ninja-build pkg-config libwebsockets-dev libssl-dev
      libisal-dev libcmocka-dev clang-format openssl python3-prometheus-client
      iproute2)
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
