#!/usr/bin/env bash
# Runs the tests under sanitizers. Not part of CI (.ci/run and scripts/test.sh run the
# Release build only): run it by hand before merging threaded, MPI or memory-heavy changes.
#
#   scripts/sanitize.sh asan  ASan + UBSan build in build-asan/ (preset asan): the whole CTest
#                             suite, unit tests and MPI tests (mpirun, partita under mpirun).
#   scripts/sanitize.sh tsan  TSan build in build-tsan/ (preset tsan): the request layer
#                             (comm_test: in-process transport and rpc; comm_mpi_test alone
#                             and under mpirun at 1, 2 and 4 ranks) and the loader
#                             (loader_test: batch pipeline, seeds). Torch-linked layers are
#                             not run under TSan (libtorch and its OpenMP are uninstrumented).
#   scripts/sanitize.sh [all] both.
#
# Configures and builds (-j2) as needed, then runs. Exits non-zero on any failing test and on
# any sanitizer report. ASan, LSan and TSan reports go to files in <build>/sanitizer-logs/
# (log_path), printed at the end, so that a finding in a child process whose exit status a test
# does not check (a PASS_REGULAR_EXPRESSION test, a pipeline, a test expecting the binary to
# fail) still fails the run; UBSan's go to stderr and are looked for in every test's output.
# Suppressions (third-party code only): scripts/sanitizers/. Extra arguments go to ctest,
# e.g. `scripts/sanitize.sh asan -R Rpc`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
supp=$root/scripts/sanitizers
mode=${1:-all}
[ $# -gt 0 ] && shift
case "$mode" in
  asan | tsan | all) ;;
  *)
    echo "usage: scripts/sanitize.sh [asan|tsan|all] [ctest arguments...]" >&2
    exit 2
    ;;
esac

# MPI refuses to run as root unless told it may. The sanitizer options below reach the ranks
# through the environment: mpirun starts local ranks with its own environment (and the tests
# only launch on this host).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Prints the report files in $1 (a log_path directory); returns 1 if there is any.
check_report_files() {
  local found=0 f
  for f in "$1"/*; do
    [ -e "$f" ] || continue
    found=1
    echo "==== sanitizer report: ${f#"$root"/}"
    cat "$f"
  done
  return "$found"
}

# Prints the sanitizer lines of the last CTest run in build dir $1 (LastTest.log has the
# output of passing tests too); returns 1 if there is any. Needed for UBSan: inside the ASan
# runtime (GCC 12) it ignores log_path and writes to stderr.
check_ctest_output() {
  local log=$1/Testing/Temporary/LastTest.log
  [ -f "$log" ] || return 0
  if grep -nE "runtime error:|ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer" "$log"; then
    echo "==== sanitizer output in ${log#"$root"/} (lines above)"
    return 1
  fi
}

elapsed() { echo "$(($(date +%s) - $1)) s"; }

run_asan() {
  local start logs status=0
  start=$(date +%s)
  logs=$root/build-asan/sanitizer-logs
  cmake --preset asan >/dev/null
  cmake --build --preset asan
  echo "sanitize asan: build done in $(elapsed "$start")"
  rm -rf "$logs" && mkdir -p "$logs"

  # Leaks: detected, with Open MPI's own suppressed (scripts/sanitizers/lsan.supp).
  # fast_unwind_on_malloc=0: the frame-pointer unwinder stops at the first frame in a library
  # built without frame pointers (Open MPI, libc), and Open MPI dlcloses its components at
  # MPI_Finalize, so its allocations would keep only "<unknown module>" frames and no
  # suppression could match them. The DWARF unwinder reaches libmpi/libopen-rte; it makes every
  # allocation slower (a torch-linked process starts in ~8 s instead of ~1 s).
  export ASAN_OPTIONS="log_path=$logs/report:log_exe_name=1:detect_leaks=1:fast_unwind_on_malloc=0:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:strict_string_checks=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

  local tests_start
  tests_start=$(date +%s)
  # train_failure_hygiene bounds the growth of resident memory over 45 epochs (16 MiB); ASan's
  # quarantine keeps up to 256 MiB of freed memory and fills during the run, so it runs apart
  # with no quarantine (use-after-free goes unchecked there; overflows and leaks do not).
  local hygiene='^train_failure_hygiene$'
  ctest --test-dir build-asan --output-on-failure -j2 -E "$hygiene" "$@" || status=1
  check_ctest_output build-asan || status=1
  if [ $# -eq 0 ]; then
    ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0" \
      ctest --test-dir build-asan --output-on-failure -R "$hygiene" || status=1
    check_ctest_output build-asan || status=1
  fi
  check_report_files "$logs" || status=1
  echo "sanitize asan: tests ran in $(elapsed "$tests_start")"
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  echo "sanitize asan: $([ $status -eq 0 ] && echo ok || echo FAILED) in $(elapsed "$start")"
  return $status
}

run_tsan() {
  local start logs status=0
  start=$(date +%s)
  logs=$root/build-tsan/sanitizer-logs
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan --target comm_test comm_mpi_test loader_test
  echo "sanitize tsan: build done in $(elapsed "$start")"

  # TSan maps its shadow memory at fixed addresses; on kernels with more mmap randomization
  # than this runtime (GCC 12) knows, it dies with "unexpected memory mapping": run without
  # address randomization there (inherited by mpirun and its ranks).
  local wrap=()
  if build-tsan/tests/comm/comm_test --gtest_list_tests 2>&1 | grep -q "unexpected memory mapping"; then
    wrap=(setarch "$(uname -m)" -R)
    echo "sanitize tsan: running under ${wrap[*]} (TSan needs fixed memory mappings)"
  fi

  rm -rf "$logs" && mkdir -p "$logs"
  export TSAN_OPTIONS="log_path=$logs/report:log_exe_name=1:suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_summary=1"

  local tests_start
  tests_start=$(date +%s)
  # The gtest suites, each in one process, all tests 5 times over (races depend on timing),
  # then the runs of comm_mpi_test alone and under mpirun at 1, 2 and 4 ranks.
  local gtest=(--gtest_brief=1 --gtest_repeat=5)
  "${wrap[@]}" build-tsan/tests/comm/comm_test "${gtest[@]}" || status=1
  "${wrap[@]}" build-tsan/tests/loader/loader_test "${gtest[@]}" || status=1
  "${wrap[@]}" ctest --test-dir build-tsan --output-on-failure -R '^comm_mpi_' "$@" || status=1
  check_ctest_output build-tsan || status=1
  check_report_files "$logs" || status=1
  echo "sanitize tsan: tests ran in $(elapsed "$tests_start")"
  unset TSAN_OPTIONS
  echo "sanitize tsan: $([ $status -eq 0 ] && echo ok || echo FAILED) in $(elapsed "$start")"
  return $status
}

status=0
if [ "$mode" = asan ] || [ "$mode" = all ]; then run_asan "$@" || status=1; fi
if [ "$mode" = tsan ] || [ "$mode" = all ]; then run_tsan "$@" || status=1; fi
exit $status
