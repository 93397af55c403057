#!/usr/bin/env bash
# Builds one fuzz target with clang + libFuzzer (+ASan/UBSan) and runs it for a
# bounded time on its corpus: scripts/fuzz.sh <name> [seconds]. Needs clang and
# libclang-rt-14-dev (apt-get install -y clang libclang-rt-14-dev). A UBSan
# report stops the run like an ASan one, so it leaves a crash file to minimise.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1; secs=${2:-60}
out=build-fuzz; mkdir -p "$out" "fuzz/corpus/$name"
srcs=$(git ls-files 'lib/*.c' 'lib/**/*.c')
# helpers shared by targets: every fuzz/targets/*.c that is not a target
helpers=$(ls fuzz/targets/*.c | grep -v '/fuzz_')
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -D_GNU_SOURCE -DQSF_BUILDING -Iinclude -Ilib \
  $(pkg-config --cflags libwebsockets openssl libisal) \
  "fuzz/targets/fuzz_$name.c" $helpers $srcs -o "$out/fuzz_$name" \
  $(pkg-config --libs libwebsockets openssl libisal) -lpthread
mkdir -p "$out/corpus-$name"
"$out/fuzz_$name" -max_total_time="$secs" "$out/corpus-$name" "fuzz/corpus/$name"
