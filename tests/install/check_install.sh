#!/usr/bin/env bash
# qsf as a user gets it: this build installed into a temporary DESTDIR, and a
# user's C11 and C++17 programs built out of the tree against that install
# through `pkg-config --cflags --libs qsf` alone, with -Wall -Wextra -pedantic
# -Werror, then run. Checks what is installed, that qsf.pc names exactly what
# libqsf links (shared, and static through Requires.private), that every
# example builds from the install (or says why not), what a plain build
# builds, the ldconfig step of an install into the system, and that a
# configuration without cmocka installs the same files. TAP output.
# Everything comes from the environment tests/install/meson.build sets.
set -uo pipefail

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"; shift
  printf '%s\n' "$@" | sed 's/^/# /'
}
bail() { echo "Bail out! $1"; shift; printf '%s\n' "$@" | sed 's/^/# /'; exit 1; }
# ok or not_ok by the status of the command, with its output as diagnostics.
check() {
  local what=$1 out; shift
  if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what" "$out"; fi
}

SRC=$QSF_SOURCE_ROOT
W=$(mktemp -d "${TMPDIR:-/tmp}/qsf-install.XXXXXX")
trap 'rm -rf "$W"' EXIT
D=$W/destdir
under_prefix() { case $1 in /*) echo "$1" ;; *) echo "$QSF_PREFIX/$1" ;; esac; }
LIB=$D$(under_prefix "$QSF_LIBDIR")
INC=$D$(under_prefix "$QSF_INCLUDEDIR")
BIN=$D$(under_prefix "$QSF_BINDIR")
DOC=$D$(under_prefix "$QSF_DATADIR")/doc/qsf
read -r -a CC <<<"$QSF_CC"
read -r -a CXX <<<"$QSF_CXX"
SAN=()
[ "$QSF_SANITIZE" = none ] || SAN=("-fsanitize=$QSF_SANITIZE")
# The C++ header is installed when the source has it (lib/meson.build).
hpp=no
[ -f "$SRC/include/qsf.hpp" ] && hpp=yes

# --- the install -----------------------------------------------------------
if out=$("$QSF_MESON" install -C "$QSF_BUILD_ROOT" --no-rebuild --destdir "$D" 2>&1); then
  ok "meson install --destdir"
else
  bail "meson install --destdir failed" "$out"
fi

installed_files() {
  local missing=() f soname
  soname=$(readelf -d "$LIB/libqsf.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  for f in "$LIB/libqsf.so" "$LIB/${soname:-<no SONAME>}" "$LIB/libqsf.a" \
           "$LIB/pkgconfig/qsf.pc" "$LIB/cmake/qsf/qsfConfig.cmake" \
           "$LIB/cmake/qsf/qsfConfigVersion.cmake" "$INC/qsf.h" "$BIN/qsf" "$BIN/qsf-test-sink" \
           "$DOC/README.md" "$DOC/NEWS.md" "$DOC/LICENSE"; do
    [ -e "$f" ] || missing+=("${f#"$D"}")
  done
  for f in "$SRC"/docs/*.md; do
    [ -e "$DOC/docs/${f##*/}" ] || missing+=("${DOC#"$D"}/docs/${f##*/} (docs/meson.build)")
  done
  if [ $hpp = yes ] && [ ! -e "$INC/qsf.hpp" ]; then
    missing+=("${INC#"$D"}/qsf.hpp (include/qsf.hpp exists: meson setup --reconfigure)")
  fi
  # A test server must not take a generic name in a bin directory.
  [ ! -e "$BIN/qwp-sink" ] || missing+=("(present, must not be) ${BIN#"$D"}/qwp-sink")
  [ ${#missing[@]} -eq 0 ] || { printf 'missing: %s\n' "${missing[@]}"; return 1; }
}
check "the libraries, qsf.h$([ $hpp = yes ] && echo ", qsf.hpp"), qsf.pc, the CMake package, qsf, qsf-test-sink and the documents are installed" installed_files

# --- qsf.pc ----------------------------------------------------------------
export PKG_CONFIG_PATH=$LIB/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
pcver=$(pkg-config --modversion qsf 2>&1)
if [ "$pcver" = "$QSF_VERSION" ]; then ok "qsf.pc is version $pcver"; else
  bail "pkg-config --modversion qsf: '$pcver', the project is $QSF_VERSION"; fi

# The shared object names of the libraries a pkg-config module links.
module_sonames() {
  local l f
  for l in $(pkg-config --libs-only-l "$1"); do
    f=$("${CC[@]}" -print-file-name="lib${l#-l}.so")
    [ "$f" = "lib${l#-l}.so" ] || readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'
  done
}

# Requires.private lists a module only when libqsf.so needs one of its
# libraries, and every library libqsf.so needs (beyond the C runtime) comes from
# one of them: what the shared link does is what the static link is told.
pc_matches_needed() {
  local needed covered="" m s bad=()
  needed=$(readelf -d "$LIB/libqsf.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$(pkg-config --print-requires qsf)" ] && bad+=("Requires: $(pkg-config --print-requires qsf | tr '\n' ' ')(qsf.h includes no header of a dependency)")
  for m in $(pkg-config --print-requires-private qsf | awk '{print $1}'); do
    s=$(module_sonames "$m")
    covered+=" $s"
    grep -qxF -f <(printf '%s\n' $s) <<<"$needed" || bad+=("Requires.private: $m, whose libraries ($(echo $s)) libqsf.so does not need")
  done
  for s in $needed; do
    case $s in libc.so.* | ld-linux*.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libgcc_s.so.*) continue ;; esac
    # A sanitized build links the sanitizers' runtimes, which the build adds.
    case $QSF_SANITIZE:$s in none:*) ;; *:libasan.so.* | *:libubsan.so.* | *:libtsan.so.* | *:liblsan.so.*) continue ;; esac
    grep -qwF "$s" <<<"$covered" || bad+=("libqsf.so needs $s, which no Requires.private module provides")
  done
  [ ${#bad[@]} -eq 0 ] || { printf '%s\n' "${bad[@]}" "NEEDED: $(echo $needed)"; return 1; }
  echo "Requires.private: $(pkg-config --print-requires-private qsf | tr '\n' ' ')"
}
check "qsf.pc requires exactly the modules whose libraries libqsf.so needs" pc_matches_needed

# --- the installed libraries' names (the unit suite's checks, on the copies) -
check "installed libqsf.so exports only qsf_ names (check_exports.sh)" \
  bash "$SRC/tests/unit/check_exports.sh" "$LIB/libqsf.so"
check "installed libqsf.a defines only qsf_ globals (check_static_globals.sh)" \
  bash "$SRC/tests/unit/check_static_globals.sh" "$LIB/libqsf.a"

# --- a user's programs -----------------------------------------------------
WARN=(-Wall -Wextra -pedantic -Werror)
read -r -a PC_CFLAGS <<<"$(pkg-config --cflags qsf)"
read -r -a PC_LIBS <<<"$(pkg-config --libs qsf)"
read -r -a PC_STATIC <<<"$(pkg-config --static --libs qsf)"

# qsf.h is the installed one, not one of the source tree or of another install.
header_from_install() {
  local deps
  deps=$("${CC[@]}" -std=c11 "${PC_CFLAGS[@]}" -M "$SRC/tests/install/consumer.c") || return 1
  grep -qF "$INC/qsf.h" <<<"$deps" || { echo "qsf.h was not taken from $INC:"; echo "$deps"; return 1; }
}
check "the C program takes qsf.h from the install" header_from_install

# Builds (args: output source compiler std [flags]) and runs the program.
build_and_run() {
  local exe=$W/$1 src=$SRC/tests/install/$2 compiler std=$4
  read -r -a compiler <<<"$3"
  shift 4
  "${compiler[@]}" "-std=$std" "${WARN[@]}" "${SAN[@]}" -o "$exe" "$src" "$@" || return 1
  LD_LIBRARY_PATH=$LIB "$exe" "$QSF_VERSION" || return 1
}

# The executable uses the installed libqsf.so.
uses_installed_so() {
  build_and_run consumer_c consumer.c "$QSF_CC" c11 "${PC_CFLAGS[@]}" "${PC_LIBS[@]}" || return 1
  LD_LIBRARY_PATH=$LIB ldd "$W/consumer_c" | grep -F libqsf.so | grep -qF "$LIB/" ||
    { echo "not linked to $LIB/libqsf.so:"; LD_LIBRARY_PATH=$LIB ldd "$W/consumer_c"; return 1; }
}
check "C11: pkg-config --cflags --libs qsf builds a program that runs against libqsf.so" uses_installed_so

# ld looks in each -L directory for libqsf.so before libqsf.a, so a directory
# holding only the archive, searched first, makes -lqsf the static library;
# then only Requires.private and Libs.private can supply what it needs.
links_static() {
  mkdir -p "$W/static-only" && ln -sf "$LIB/libqsf.a" "$W/static-only/libqsf.a"
  build_and_run consumer_static consumer.c "$QSF_CC" c11 "${PC_CFLAGS[@]}" \
    -L"$W/static-only" "${PC_STATIC[@]}" || return 1
  ! readelf -d "$W/consumer_static" | grep -F '(NEEDED)' | grep -qF libqsf ||
    { echo "linked to libqsf.so, not libqsf.a"; return 1; }
}
check "C11: pkg-config --static --libs qsf links libqsf.a into a program that runs" links_static

if [ ${#CXX[@]} -eq 0 ]; then
  ok "C++17 # SKIP no C++ compiler found by meson"
else
  hppflag=()
  [ $hpp = yes ] && hppflag=(-DQSF_EXPECT_HPP)
  check "C++17: a program including qsf.h$([ $hpp = yes ] && echo " and qsf.hpp") builds and runs" \
    build_and_run consumer_cpp consumer.cpp "$QSF_CXX" c++17 "${hppflag[@]}" \
    "${PC_CFLAGS[@]}" "${PC_LIBS[@]}"
fi

# --- a CMake project ----------------------------------------------------------
# tests/install/cmake, configured and built out of tree with the install's
# prefix in CMAKE_PREFIX_PATH (so through the staged, moved, install).
# args: build directory, version asked for
cmake_build() {
  local b=$W/$1 out
  out=$(cmake -S "$SRC/tests/install/cmake" -B "$b" -DCMAKE_PREFIX_PATH="$D$QSF_PREFIX" \
    -DQSF_FIND_VERSION="$2" -DCMAKE_C_COMPILER="${CC[-1]}" \
    -DCMAKE_C_FLAGS="${SAN[*]}" -DCMAKE_EXE_LINKER_FLAGS="${SAN[*]}" 2>&1) &&
    out+=$(cmake --build "$b" 2>&1) || { echo "$out"; return 1; }
}
cmake_package() {
  cmake_build cmake-consumer "${QSF_VERSION%.*}" || return 1
  LD_LIBRARY_PATH=$LIB "$W/cmake-consumer/consumer" "$QSF_VERSION" || return 1
  LD_LIBRARY_PATH=$LIB ldd "$W/cmake-consumer/consumer" | grep -F libqsf.so.0 | grep -qF "$LIB/" ||
    { echo "not linked to $LIB/libqsf.so.0:"; LD_LIBRARY_PATH=$LIB ldd "$W/cmake-consumer/consumer"; return 1; }
  # a version this install does not satisfy is refused, naming it
  if out=$(cmake_build cmake-too-new 1.0); then echo "find_package(qsf 1.0) accepted $QSF_VERSION"; return 1; fi
  grep -q "$QSF_VERSION" <<<"$out" || { echo "$out"; return 1; }
}
if command -v cmake >/dev/null; then
  check "CMake: find_package(qsf ${QSF_VERSION%.*}) and qsf::qsf build a program that runs; qsf 1.0 is refused" cmake_package
else
  ok "CMake: find_package(qsf) # SKIP no cmake (apt-get install -y cmake)"
fi

# Every example of examples/ builds from the install with the README's
# command (cc -std=c11 ... $(pkg-config --cflags --libs qsf); C++17 for .cpp),
# warnings as errors, or its opening comment says "Not built from an install:"
# and what else it needs.
says_not_from_install() { sed -n '1,/\*\//p' "$1" | grep -q 'Not built from an install:'; }
example_builds() {
  local src=$1 exe=$W/example_${1##*/} out
  case $src in
  *.cpp) [ ${#CXX[@]} -gt 0 ] || { echo "no C++ compiler found by meson"; return 0; }
         out=$("${CXX[@]}" -std=c++17 "${WARN[@]}" -o "$exe" "$src" "${PC_CFLAGS[@]}" "${PC_LIBS[@]}" 2>&1) ;;
  *) out=$("${CC[@]}" -std=c11 "${WARN[@]}" -o "$exe" "$src" "${PC_CFLAGS[@]}" "${PC_LIBS[@]}" 2>&1) ;;
  esac || { echo "$out"; echo "(build it from the install, or say at its top: Not built from an install: ...)"; return 1; }
}
for ex in "$SRC"/examples/*.c "$SRC"/examples/*.cpp "$SRC"/examples/*/*.c; do
  [ -e "$ex" ] || continue
  if says_not_from_install "$ex"; then
    ok "example ${ex#"$SRC"/} says at its top what it needs beyond the install"
  else
    check "example ${ex#"$SRC"/} builds from the install (-std=c11/c++17 ${WARN[*]})" example_builds "$ex"
  fi
done

# Below C++17 qsf.hpp stops at one #error that names C++17, not at the
# errors of what C++14 lacks.
hpp_needs_cxx17() {
  local out n
  printf '#include <qsf.hpp>\nint main() { return 0; }\n' >"$W/cxx14.cpp"
  if out=$("${CXX[@]}" -std=c++14 "${PC_CFLAGS[@]}" -c -o "$W/cxx14.o" "$W/cxx14.cpp" 2>&1); then
    echo "qsf.hpp compiled under -std=c++14"; return 1; fi
  n=$(grep -c 'error:' <<<"$out")
  grep -q '#error.*C++17' <<<"$out" && [ "$n" -eq 1 ] || { echo "$n errors:"; echo "$out"; return 1; }
}
if [ $hpp = no ] || [ ${#CXX[@]} -eq 0 ]; then
  ok "C++14: qsf.hpp # SKIP no qsf.hpp or no C++ compiler found by meson"
else
  check "C++14: including qsf.hpp stops at one #error naming C++17" hpp_needs_cxx17
fi

# --- the installed tools ---------------------------------------------------
tools_run() {
  local out
  out=$("$BIN/qsf" conf check 'ws::addr=127.0.0.1:9000;') || { echo "qsf conf check: exit $?"; return 1; }
  grep -qx 'configuration is valid' <<<"$out" || { echo "qsf conf check said:"; echo "$out"; return 1; }
  out=$("$BIN/qsf-test-sink" --help 2>&1) || { echo "qsf-test-sink --help: exit $?"; return 1; }
  grep -q -- '--port' <<<"$out" || { echo "qsf-test-sink --help said:"; echo "$out"; return 1; }
}
check "the installed qsf checks a connect string; qsf-test-sink runs" tools_run

# --- ldconfig after an install into the system ------------------------------
# lib/install-ldconfig.sh, which meson install runs unless under --destdir,
# with a stand-in ldconfig first in PATH: one line when the cache then has the
# installed libqsf.so.0; when not, a note that says what to do.
mkdir -p "$W/stub"
printf '%s\n' '#!/bin/sh' \
  'if [ "$1" = -p ]; then printf "%s\n" "$STUB_CACHE"; exit 0; fi' \
  '[ -z "$STUB_FAIL" ] || { echo "$STUB_FAIL" >&2; exit 1; }' >"$W/stub/ldconfig"
chmod +x "$W/stub/ldconfig"
# args: libdir, what ldconfig -p lists, ldconfig's failure ("" = it succeeds)
ldconfig_note() {
  # setsid: no controlling terminal, so the note goes to stderr
  env PATH="$W/stub:$PATH" STUB_CACHE="$2" STUB_FAIL="$3" setsid -w sh "$SRC/lib/install-ldconfig.sh" "$1" 2>&1
}
ldconfig_script() {
  local out l=/usr/local/lib/x86_64-linux-gnu
  out=$(ldconfig_note $l "	libqsf.so.0 (libc6,x86-64) => $l/libqsf.so.0" "")
  [ "$out" = "ldconfig: programs find $l/libqsf.so.0" ] || { echo "cached: $out"; return 1; }
  out=$(ldconfig_note $l "" "Can't create temporary cache file /etc/ld.so.cache~: Permission denied")
  grep -q 'will not find libqsf.so.0' <<<"$out" && grep -q 'sudo ldconfig' <<<"$out" &&
    grep -q 'Permission denied' <<<"$out" || { echo "not root: $out"; return 1; }
  out=$(ldconfig_note /opt/qsf/lib "" "")
  grep -q 'will not find libqsf.so.0' <<<"$out" && grep -qF '/etc/ld.so.conf.d/qsf.conf' <<<"$out" &&
    grep -qF -- '-Wl,-rpath,/opt/qsf/lib' <<<"$out" || { echo "outside ld.so.conf: $out"; return 1; }
}
check "install-ldconfig.sh: one line when ldconfig caches libqsf.so.0, the fix when not" ldconfig_script

# --- what a plain build builds ----------------------------------------------
# The README's `meson setup build -Dbuildtype=release`, with cmocka found:
# the libraries, the qsf tool and the test sink (qwp-sink, installed as
# qsf-test-sink), with the static libraries they are made of; no test, fuzz
# replay, benchmark or example.
plain_build() {
  local out
  out=$(env -u PKG_CONFIG_PATH -u PKG_CONFIG_SYSROOT_DIR \
    "$QSF_MESON" setup "$W/plain" "$SRC" -Dbuildtype=release 2>&1) || { echo "$out"; return 1; }
  python3 "$SRC/tests/install/plain_build.py" "$SRC" "$W/plain" "$QSF_MESON"
}
check "meson setup -Dbuildtype=release builds libqsf, qsf and the test sink only" plain_build

# --- without cmocka --------------------------------------------------------
# pkg-config's search path without cmocka.pc (first of each name wins, as it
# does for pkg-config).
pc_dir=$W/pc-without-cmocka
mkdir -p "$pc_dir"
for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
  for f in "$d"/*.pc; do
    [ -e "$f" ] && [ "${f##*/}" != cmocka.pc ] && [ ! -e "$pc_dir/${f##*/}" ] && ln -s "$f" "$pc_dir/"
  done
done
# args: build directory, then options
setup_without_cmocka() {
  local build=$1; shift
  env -u PKG_CONFIG_PATH -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR="$pc_dir" \
    "$QSF_MESON" setup "$build" "$SRC" "$@" --prefix="$QSF_PREFIX" --libdir="$QSF_LIBDIR" \
    --bindir="$QSF_BINDIR" --includedir="$QSF_INCLUDEDIR" --datadir="$QSF_DATADIR"
}
installs_without_cmocka() {
  local out
  out=$(setup_without_cmocka "$W/no-cmocka" -Dtests=auto 2>&1) || { echo "$out"; return 1; }
  grep -q 'cmocka not found' <<<"$out" || { echo "configured without saying cmocka was missing:"; echo "$out"; return 1; }
  [ "$("$QSF_MESON" introspect --tests "$W/no-cmocka")" = "[]" ] ||
    { echo "tests are configured without cmocka"; return 1; }
  # The same install destinations as this build's.
  python3 - "$("$QSF_MESON" introspect --installed "$W/no-cmocka")" \
    "$("$QSF_MESON" introspect --installed "$QSF_BUILD_ROOT")" <<'EOF'
import json, sys
without, this = (set(json.loads(a).values()) for a in sys.argv[1:3])
for p in sorted(this - without): print("not installed without cmocka:", p)
for p in sorted(without - this): print("installed only without cmocka:", p)
sys.exit(without != this)
EOF
}
check "without cmocka -Dtests=auto configures no tests, says so, and installs the same files" \
  installs_without_cmocka
refuses_tests_without_cmocka() {
  local out
  if out=$(setup_without_cmocka "$W/tests-without-cmocka" -Dtests=true 2>&1); then
    echo "-Dtests=true configured without cmocka"; return 1; fi
  grep -q 'libcmocka-dev' <<<"$out" || { echo "$out"; return 1; }
}
check "-Dtests=true without cmocka stops, naming libcmocka-dev" refuses_tests_without_cmocka

echo "1..$n"
