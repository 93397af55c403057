#!/usr/bin/env bash
# The Debian packages as a user gets them: builds libqsf0, libqsf-dev and
# qsf-tools from a copy of this tree with `dpkg-buildpackage -us -uc -b`,
# checks them with lintian (no warning allowed), then installs them into a
# fresh Debian 12 root made by mmdebstrap and, in that root, compiles the
# README's quick start with `cc -std=c11 ... $(pkg-config --cflags --libs qsf)`
# and runs it against the packaged qsf-test-sink: no ldconfig, no
# LD_LIBRARY_PATH, nothing but the packages and their dependencies.
#
#   scripts/debian-packages.sh [--no-root] [OUT_DIR]
#
# --no-root stops after lintian (no download of a root filesystem: about
# 1 minute instead of 3 to 5). OUT_DIR keeps the .debs (default: a temporary
# directory, removed). Exit 0 passed, 1 failed, 77 skipped (the reason is
# printed: a missing tool, not root for mmdebstrap, no network).
# Needs: apt-get install -y dpkg-dev debhelper lintian mmdebstrap
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
root_test=yes
if [ "${1:-}" = --no-root ]; then root_test=no; shift; fi
OUT=${1:-}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "== $* (at ${SECONDS}s)"; }

for t in dpkg-buildpackage dh lintian; do
  command -v $t >/dev/null || skip "no $t (apt-get install -y dpkg-dev debhelper lintian mmdebstrap)"
done

W=$(mktemp -d "${TMPDIR:-/tmp}/qsf-deb.XXXXXX")
trap 'rm -rf "$W"' EXIT
version=$(dpkg-parsechangelog -l debian/changelog -S Version)

# dpkg-buildpackage writes its .debs beside the tree: a copy of the tree's
# files (committed or not, without ignored ones such as build directories).
step "dpkg-buildpackage -us -uc -b (qsf $version)"
tree=$W/qsf-$version
mkdir "$tree"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree"
(cd "$tree" && nice dpkg-buildpackage -us -uc -b >"$W/build.log" 2>&1) ||
  { tail -n 40 "$W/build.log"; fail "dpkg-buildpackage failed (log above)"; }
debs=()
for p in libqsf0 libqsf-dev qsf-tools; do
  f=$W/${p}_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
  [ -e "$f" ] || fail "no $p package: $(cd "$W" && ls ./*.deb)"
  debs+=("$f")
done
echo "built: ${debs[*]##*/}"

step "lintian --fail-on warning"
lintian --fail-on warning "$W"/qsf_"${version}"_*.changes 2>&1 | grep -v 'running with root privileges' ||
  true
lintian --fail-on warning "$W"/qsf_"${version}"_*.changes >/dev/null 2>&1 ||
  fail "lintian found warnings or errors (above)"
echo "lintian: no warning"

if [ -n "$OUT" ]; then mkdir -p "$OUT" && cp "${debs[@]}" "$OUT/"; fi
[ $root_test = yes ] || { echo "PASS (built and checked in ${SECONDS}s; --no-root: no fresh root)"; exit 0; }

command -v mmdebstrap >/dev/null || skip "no mmdebstrap to make a fresh root (apt-get install -y mmdebstrap)"
[ "$(id -u)" = 0 ] || skip "mmdebstrap's root mode needs root (run as root, or with --no-root)"

# The quick start as the README has it, and the commands the root runs.
python3 tests/examples/readme_snippet.py README.md "Quick start in C" "$W/quickstart.c"
cat >"$W/in-root.sh" <<'EOF'
#!/bin/sh
# Runs inside the fresh root: build the quick start from the packages, run it
# against the packaged test sink on a free loopback port.
set -eu
cd /tmp
cc -std=c11 -Wall -Wextra -pedantic -Werror -o quickstart quickstart.c $(pkg-config --cflags --libs qsf)
qsf conf check 'ws::addr=127.0.0.1:9000;' >/dev/null
qsf-test-sink --port 0 >sink.out 2>sink.err &
sink=$!
port=
for i in $(seq 1 500); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' sink.err)
  [ -n "$port" ] && break
  sleep 0.01
done
[ -n "$port" ] || { cat sink.err; echo "qsf-test-sink did not say its port"; exit 1; }
./quickstart "ws::addr=127.0.0.1:$port;sf_dir=qdb-sf;sender_id=ingest-1;"
kill -TERM $sink
wait $sink || true
cat sink.out
grep -q '"rows":{"trades":1}' sink.out || { echo "the sink did not get the row"; exit 1; }
echo "quick start: built from the packages, ran, 1 row at the sink"
EOF

step "mmdebstrap: a fresh Debian 12 root with the packages, the quick start in it"
# The host's downloaded .debs seed the root's apt cache (fewer downloads).
if ! mmdebstrap --variant=apt --mode=root --include=gcc,libc6-dev,pkgconf \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
  --setup-hook='sync-in /var/cache/apt/archives/ /var/cache/apt/archives/' \
  --customize-hook="copy-in ${debs[*]} $W/quickstart.c $W/in-root.sh /tmp" \
  --customize-hook='chroot "$1" sh -c "apt-get install -y -q /tmp/*.deb"' \
  --customize-hook='chroot "$1" sh /tmp/in-root.sh' \
  bookworm /dev/null >"$W/mmdebstrap.log" 2>&1; then
  tail -n 40 "$W/mmdebstrap.log"
  if grep -qE 'Temporary failure resolving|Could not resolve|Failed to fetch' "$W/mmdebstrap.log"; then
    skip "mmdebstrap could not download the root filesystem (no network?)"
  fi
  fail "the fresh root did not install, build or run the quick start (log above)"
fi
grep -E '^(quick start:|Setting up (libqsf|qsf-tools))' "$W/mmdebstrap.log" || true
grep -q '^quick start: built from the packages, ran, 1 row at the sink' "$W/mmdebstrap.log" ||
  fail "the quick start did not report its run"
echo "PASS (${SECONDS}s)"
