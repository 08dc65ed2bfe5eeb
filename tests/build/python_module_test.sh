#!/usr/bin/env bash
# The Python extension's CMake after Python was found with the interpreter alone, as torch
# 2.x's CMake config does (issue 37: pybind11's FindPython mode then stopped at `Unknown CMake
# command "python_add_library"`). pybind11 is the system's (pybind11-dev) in its FindPython
# mode (PYBIND11_FINDPYTHON ON), whose logic for a Python found before it is that of pip's
# 2.13 and 3.x (cmake/partita_pybind11.cmake says which lines).
#
# Usage: python_module_test.sh --source-dir DIR --work DIR [--python PY]
#          [--prior Python|Python3|none] [--without-fix | --package]
#   (default)      builds tests/build/python_probe: `find_package(<prior> COMPONENTS
#                  Interpreter)` at the top, then in a subdirectory a pybind11 module made
#                  through cmake/partita_pybind11.cmake, as python/CMakeLists.txt makes
#                  partita._C; then PY imports it and calls it
#   --without-fix  the same probe with pybind11 found as python/CMakeLists.txt did before:
#                  succeeds only if the configure fails on python_add_library (or, after
#                  Python3, python3_add_library): the probe reproduces the GPU machine's failure
#   --package      configures the project itself (no tests, benchmarks or ccache) with that
#                  prior find injected after its project() (CMAKE_PROJECT_INCLUDE): the
#                  configure must succeed and generate partita._C's target
set -euo pipefail

source_dir="" work="" python=/usr/bin/python3 prior=Python mode=probe
while [ $# -gt 0 ]; do
  case "$1" in
    --source-dir) source_dir="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --prior) prior="$2"; shift 2 ;;
    --without-fix) mode=without-fix; shift ;;
    --package) mode=package; shift ;;
    *) echo "python_module_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$source_dir" ] && [ -n "$work" ] || { echo "--source-dir and --work are required" >&2; exit 2; }
[ "$prior" = none ] && prior=""
rm -rf "$work"
mkdir -p "$work"
log="$work/log.txt"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

if [ "$mode" = package ]; then
  : > "$work/prior_find.cmake"
  [ -z "$prior" ] ||
    echo "find_package($prior REQUIRED COMPONENTS Interpreter)" > "$work/prior_find.cmake"
  set +e
  cmake -S "$source_dir" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PROJECT_INCLUDE="$work/prior_find.cmake" -DPARTITA_BUILD_TESTS=OFF \
        -DPARTITA_BUILD_BENCH=OFF -DPARTITA_USE_CCACHE=OFF > "$log" 2>&1
  rc=$?
  set -e
  if [ $rc -ne 0 ]; then
    cat "$log"
    echo "python_module_test: the project's configure failed (rc=$rc)" >&2
    exit 1
  fi
  if grep -q "Python package skipped" "$log" ||
     ! grep -rqs "partita_python_module" "$work/build/build.ninja" "$work/build/Makefile"; then
    cat "$log"
    echo "python_module_test: the configure made no target for partita._C" >&2
    exit 1
  fi
  echo "python_module_test: the project configures partita._C after a prior" \
       "find_package(${prior:-<none>} COMPONENTS Interpreter)"
  exit 0
fi

args=(-S "$source_dir/tests/build/python_probe" -B "$work/build" "${generator[@]}"
      -DCMAKE_BUILD_TYPE=Release -DPARTITA_SOURCE_DIR="$source_dir"
      -DPARTITA_PYTHON_EXECUTABLE="$python" -DPROBE_PRIOR_FIND="$prior")
[ "$mode" = without-fix ] && args+=(-DPROBE_WITHOUT_FIX=ON)
set +e
(
  set -e
  cmake "${args[@]}"
  cmake --build "$work/build"
) > "$log" 2>&1
rc=$?
set -e
if [ "$mode" = without-fix ]; then
  if [ $rc -ne 0 ] && grep -q 'Unknown CMake command "python3\?_add_library"' "$log"; then
    grep -m 1 'Unknown CMake command' "$log"
    echo "python_module_test: without the fix the configure fails on python_add_library, as expected"
    exit 0
  fi
  cat "$log"
  echo "python_module_test: expected the configure to fail on python_add_library (rc=$rc)" >&2
  exit 1
fi
if [ $rc -ne 0 ]; then
  cat "$log"
  echo "python_module_test: the probe failed to build (rc=$rc)" >&2
  exit 1
fi
grep "probe:" "$log" || true
PYTHONPATH="$work/build/site" "$python" -c \
  'import partita_probe; assert partita_probe.answer() == 42; print("imported", partita_probe.__file__)'
echo "python_module_test: ok"
