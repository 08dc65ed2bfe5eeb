#!/usr/bin/env bash
# Usage: fuzz/run.sh BUILD_DIR NAME SECONDS WORK_DIR
# Runs BUILD_DIR/fuzz/NAME_fuzz (built by fuzz/build.sh) for SECONDS: seeds from
# fuzz/corpus/NAME (read only), new inputs kept in WORK_DIR/NAME/corpus (reused by the next
# run), with fuzz/NAME.dict when there is one. Prints one summary line:
#   fuzz NAME: <executions> executions in <s> s (<per second>/s), corpus <n> inputs, <k> findings
# A finding (crash, sanitizer report, leak, uncaught exception, input slower than 10 s,
# allocation over 1 GiB) is saved as WORK_DIR/NAME/{crash,leak,timeout,oom}-<sha1>, its
# report printed, and the script exits non-zero. Reproduce with BUILD_DIR/fuzz/NAME_fuzz FILE.
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: fuzz/run.sh BUILD_DIR NAME SECONDS WORK_DIR" >&2
  exit 2
fi
build=$1 name=$2 seconds=$3 work=$4
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin=$build/fuzz/${name}_fuzz
seeds=$root/fuzz/corpus/$name
[ -x "$bin" ] || { echo "fuzz/run.sh: $bin not built (fuzz/build.sh $build)" >&2; exit 1; }
[ -d "$seeds" ] || { echo "fuzz/run.sh: no seed corpus $seeds" >&2; exit 1; }
mkdir -p "$work/$name/corpus"
log=$work/$name/log

args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
  -print_final_stats=1 -artifact_prefix="$work/$name/")
[ -f "$root/fuzz/$name.dict" ] && args+=(-dict="$root/fuzz/$name.dict")

# Every sanitizer finding is fatal and reported with a symbolized stack (these replace any
# options inherited from scripts/sanitize.sh, whose log_path would hide the report).
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
[ -z "$symbolizer" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ] &&
  symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer

start=$(date +%s)
touch "$work/$name/.start"
status=0
"$bin" "${args[@]}" "$work/$name/corpus" "$seeds" >"$log" 2>&1 || status=$?
elapsed=$(($(date +%s) - start))

stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
execs=$(stat number_of_executed_units)
rate=$(stat average_exec_per_sec)
inputs=$(find "$work/$name/corpus" -type f | wc -l)
findings=$(find "$work/$name" -maxdepth 1 -type f \
  \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -newer "$work/$name/.start" | wc -l)
echo "fuzz $name: ${execs:-?} executions in $elapsed s (${rate:-?}/s), corpus $inputs inputs, $([ $status -eq 0 ] && echo 0 || echo "${findings:-1}") findings"
if [ $status -ne 0 ]; then
  echo "fuzz $name: FINDING (exit status $status); report:"
  grep -v '^#[0-9]' "$log" | tail -n 60
  exit 1
fi
