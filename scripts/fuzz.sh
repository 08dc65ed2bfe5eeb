#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Builds the libFuzzer targets (fuzz/build.sh: clang, in build-fuzz/) and runs each for
# SECONDS_PER_TARGET (default 300), one at a time: npy, meta, ogb_csv, gz_lines unless
# targets are named. Grown corpora and findings stay out of git, in out/fuzz/<target>/
# (each run continues from the corpus the last one grew). Prints executions, executions
# per second and findings per target; exits non-zero if any target found something.
# CI runs the same targets for a few seconds each (the fuzz.* CTest entries).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-300}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(npy meta ogb_csv gz_lines)

bash fuzz/build.sh build-fuzz
status=0
summary=()
for t in "${targets[@]}"; do
  line=$(bash fuzz/run.sh build-fuzz "$t" "$seconds" out/fuzz) || status=1
  echo "$line"
  summary+=("$(echo "$line" | head -n 1)")
done
echo "---- fuzz summary (${seconds} s per target; corpora and findings in out/fuzz/)"
printf '%s\n' "${summary[@]}"
exit $status
