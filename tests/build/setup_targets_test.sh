#!/usr/bin/env bash
# What the quick-start scripts build (issue 37): scripts/demo.sh only the partita binary it
# runs, never the tests (a fresh machine built all 343 targets, 19.5 minutes, for a 22 s
# demo); scripts/test.sh everything CTest runs. Both through scripts/setup.sh, whose
# PARTITA_SETUP_DRY_RUN=1 prints the build command and changes nothing.
#
#   setup_targets_test.sh SOURCE_DIR [BUILD_DIR]
#
# With BUILD_DIR (a configured Ninja build), also: no other executable (a test, benchmark or
# fuzzer) is among the inputs of the demo's targets, so building them cannot build one.
set -uo pipefail
src=$1
build_dir=${2:-}
fail() { echo "setup_targets_test: $*" >&2; exit 1; }

# The scripts run from a copy without a project beside them: should a script ignore the dry
# run (the failure this test is for), it fails there at once instead of building or running
# the demo in the source tree.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/scripts" "$tmp/scripts"

# build_line SCRIPT: the `cmake --build` line SCRIPT's set-up would run.
build_line() {
  local out
  out=$(PARTITA_SETUP_DRY_RUN=1 bash "$tmp/scripts/$1" 2>&1) || fail "$1 (dry run) exited $?: $out"
  grep '^setup: would run: cmake --build ' <<< "$out" | sed 's/^setup: would run: //'
}

demo=$(build_line demo.sh) || exit 1
[ "$demo" = "cmake --build build -j2 --target partita" ] ||
  fail "scripts/demo.sh builds '$demo', not only the partita binary"
echo "ok: demo.sh -> $demo"
tests=$(build_line test.sh) || exit 1
[ "$tests" = "cmake --build build -j2" ] ||
  fail "scripts/test.sh builds '$tests', not every target (the tests CTest runs)"
echo "ok: test.sh -> $tests"

if [ -n "$build_dir" ] && [ ! -f "$build_dir/build.ninja" ]; then
  echo "skip: $build_dir is not a Ninja build: the demo targets' inputs are not checked"
elif [ -n "$build_dir" ]; then
  targets=$(sed 's/.*--target //; s/ --target / /g' <<< "$demo")
  inputs=$(ninja -C "$build_dir" -t inputs $targets) || fail "ninja -t inputs $targets failed"
  # Every executable the build links (tests/*/..._test, bench/, fuzz/, src/cli/partita) but
  # partita-torch, which partita runs the torch commands in (src/cli/torch_handoff.h).
  executables=$(ninja -C "$build_dir" -t targets all |
    sed -n 's/^\([^:]*\): CXX_EXECUTABLE_LINKER.*/\1/p' | grep -v '_tests\.cmake$' |
    grep -vx 'src/cli/partita-torch')
  grep -q '^tests/' <<< "$executables" ||
    fail "found no test executables in $build_dir (did ninja's rule names change?)"
  count=0
  while read -r exe; do
    count=$((count + 1))
    ! grep -qx -- "$exe" <<< "$inputs" || fail "the demo's targets ($targets) need $exe"
  done <<< "$executables"
  echo "ok: none of the $count executables linked here is an input of: $targets"
fi
