#!/usr/bin/env bash
# Usage: fuzz/build.sh [BUILD_DIR]   (default: build-fuzz)
# Configures (once) and builds the libFuzzer targets with clang in BUILD_DIR: the
# PARTITA_FUZZ build, which compiles only the torch-free layers the targets need. Fails,
# naming what to install, when clang or its libFuzzer runtime is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-fuzz}"

cc=$(command -v clang || true)
cxx=$(command -v clang++ || true)
if [ -z "$cc" ] || [ -z "$cxx" ]; then
  echo "fuzz/build.sh: clang/clang++ not found: install the Debian packages clang and" \
    "libclang-rt-14-dev (scripts/setup.sh does)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=$cc CXX=$cxx cmake -S "$root" -B "$build" -G Ninja -DPARTITA_FUZZ=ON \
    -DPARTITA_BUILD_TESTS=OFF -DPARTITA_BUILD_BENCH=OFF
fi
cmake --build "$build" -j "${PARTITA_FUZZ_JOBS:-2}"
