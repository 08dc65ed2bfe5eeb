#!/usr/bin/env bash
# Builds if needed (scripts/setup.sh) and runs the whole test suite with CTest.
# Exits non-zero on any failure. Extra arguments go to ctest (e.g. -R npy).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh  # every target: the tests, and the benchmarks and package CTest runs
[ "${PARTITA_SETUP_DRY_RUN:-0}" != 1 ] || exit 0  # setup.sh printed what it would do
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build --output-on-failure -j2 "$@"
