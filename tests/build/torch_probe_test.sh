#!/usr/bin/env bash
# Builds tests/build/torch_probe against a fake pip-style torch made in WORK, selected the
# way users select theirs (-DPARTITA_PYTHON=<interpreter>, here /usr/bin/python3 with the
# fake `torch` package first on PYTHONPATH), and runs it. The fake torch:
#   site/torch/__init__.py, utils/   what cmake/partita_torch.cmake asks the interpreter
#   site/torch/include/              links to Debian's real torch headers (ATen, c10,
#                                    caffe2, torch), a top-level header file, and fmt/ and
#                                    spdlog/ whose headers #error, as pip's fmt 12 clashes
#   site/torch/lib/                  links to Debian's libtorch, libtorch_cpu, libc10;
#                                    --variant cuda adds stand-in libtorch_cuda/libc10_cuda
#   site/torch/share/cmake/Torch/    a TorchConfig.cmake with the shape of torch's targets
#                                    (Caffe2Targets.cmake: torch, torch_library,
#                                    torch_cpu_library, torch_cpu, c10, reaching each other
#                                    through generator expressions), which, like torch's
#                                    Caffe2Config.cmake, stops for a CUDA torch without nvcc
#
# Usage: torch_probe_test.sh --source-dir DIR --work DIR [--variant cpu|cuda]
#          [--no-hiding] [--no-cuda-compiler] [--expect-clash] [--expect-import CONFIG|DIRECT]
#   --no-hiding         -DPARTITA_TORCH_HIDDEN_HEADERS= (the build without the fix)
#   --no-cuda-compiler  -DCMAKE_CUDA_COMPILER=<a missing file>: act as a machine without nvcc
#   --expect-clash      succeed only if the build fails on the fake fmt's #error
#   --expect-import M   fail unless torch was imported in mode M (cmake/FindTorch.cmake)
set -euo pipefail

source_dir="" work="" variant=cpu hiding=1 no_nvcc=0 expect_clash=0 expect_import=""
while [ $# -gt 0 ]; do
  case "$1" in
    --source-dir) source_dir="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --variant) variant="$2"; shift 2 ;;
    --no-hiding) hiding=0; shift ;;
    --no-cuda-compiler) no_nvcc=1; shift ;;
    --expect-clash) expect_clash=1; shift ;;
    --expect-import) expect_import="$2"; shift 2 ;;
    *) echo "torch_probe_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$source_dir" ] && [ -n "$work" ] || { echo "--source-dir and --work are required" >&2; exit 2; }
libdir=$(dirname "$(readlink -f /usr/lib/*/libtorch_cpu.so | head -n 1)")

rm -rf "$work"
torch="$work/site/torch"
mkdir -p "$torch/utils" "$torch/include/fmt" "$torch/include/spdlog" "$torch/lib" \
         "$torch/share/cmake/Torch"
cuda_version=None
[ "$variant" = cuda ] && cuda_version="'13.0'"
cat > "$torch/__init__.py" <<EOF
__version__ = "2.99.0+fake"
class version:
    cuda = $cuda_version
class _C:
    _GLIBCXX_USE_CXX11_ABI = True
EOF
cat > "$torch/utils/__init__.py" <<'EOF'
import os
cmake_prefix_path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "share", "cmake")
EOF
for d in ATen c10 caffe2 torch; do ln -s "/usr/include/$d" "$torch/include/$d"; done
echo '#define PROBE_TOP_LEVEL 1' > "$torch/include/probe_top_level.h"
for h in fmt/core.h fmt/format.h spdlog/spdlog.h; do
  echo "#error \"torch's bundled $h shadows the system's copy (the clash of issue 24)\"" \
    > "$torch/include/$h"
done
for lib in torch torch_cpu c10; do ln -s "$libdir/lib$lib.so" "$torch/lib/lib$lib.so"; done
if [ "$variant" = cuda ]; then
  for lib in torch_cuda c10_cuda; do
    echo "int partita_fake_$lib;" | cc -shared -fPIC -x c - -o "$torch/lib/lib$lib.so"
  done
fi
cat > "$torch/share/cmake/Torch/TorchConfig.cmake" <<'EOF'
# A stand-in for torch 2.x's TorchConfig.cmake (tests/build/torch_probe_test.sh).
get_filename_component(TORCH_INSTALL_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(EXISTS "${TORCH_INSTALL_PREFIX}/lib/libtorch_cuda.so")
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER OR NOT EXISTS "${CMAKE_CUDA_COMPILER}")
    message(FATAL_ERROR "Your installed Caffe2 version uses CUDA but I cannot find the CUDA "
                        "libraries. (the fake torch, as torch's Caffe2Config.cmake)")
  endif()
endif()
set(TORCH_INCLUDE_DIRS "${TORCH_INSTALL_PREFIX}/include"
                       "${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include")
set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")
if(NOT TARGET torch)
  # As torch's Caffe2Targets.cmake: torch_cpu's include dir and links reach the consumers
  # only through generator expressions of torch_cpu_library.
  add_library(c10 SHARED IMPORTED)
  set_target_properties(c10 PROPERTIES IMPORTED_LOCATION "${TORCH_INSTALL_PREFIX}/lib/libc10.so"
    INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INSTALL_PREFIX}/include")
  add_library(torch_cpu SHARED IMPORTED)
  set_target_properties(torch_cpu PROPERTIES
    IMPORTED_LOCATION "${TORCH_INSTALL_PREFIX}/lib/libtorch_cpu.so"
    INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INSTALL_PREFIX}/include"
    INTERFACE_LINK_LIBRARIES "c10")
  add_library(torch_cpu_library INTERFACE IMPORTED)
  set_target_properties(torch_cpu_library PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "\$<TARGET_PROPERTY:torch_cpu,INTERFACE_INCLUDE_DIRECTORIES>"
    INTERFACE_LINK_LIBRARIES "-Wl,--no-as-needed,\"\$<TARGET_FILE:torch_cpu>\" -Wl,--as-needed;\$<TARGET_PROPERTY:torch_cpu,INTERFACE_LINK_LIBRARIES>")
  add_library(torch SHARED IMPORTED)
  set_target_properties(torch PROPERTIES IMPORTED_LOCATION "${TORCH_INSTALL_PREFIX}/lib/libtorch.so"
    INTERFACE_LINK_LIBRARIES "torch_cpu_library"
    INTERFACE_COMPILE_OPTIONS "${TORCH_CXX_FLAGS}")
  add_library(torch_library INTERFACE IMPORTED)
  set_target_properties(torch_library PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "\$<TARGET_PROPERTY:torch,INTERFACE_INCLUDE_DIRECTORIES>"
    INTERFACE_LINK_LIBRARIES "-Wl,--no-as-needed,\"\$<TARGET_FILE:torch>\" -Wl,--as-needed;\$<TARGET_PROPERTY:torch,INTERFACE_LINK_LIBRARIES>")
endif()
# As TorchConfig.cmake: torch gets TORCH_INCLUDE_DIRS; TORCH_LIBRARIES names torch_library.
set_target_properties(torch PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}")
set(TORCH_LIBRARIES torch torch_library "${TORCH_INSTALL_PREFIX}/lib/libc10.so")
find_library(TORCH_LIBRARY torch PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Torch DEFAULT_MSG TORCH_LIBRARY TORCH_INCLUDE_DIRS)
EOF

args=(-S "$source_dir/tests/build/torch_probe" -B "$work/build" -DPARTITA_SOURCE_DIR="$source_dir"
      -DPARTITA_PYTHON=/usr/bin/python3 -DCMAKE_BUILD_TYPE=Release
      # Ubuntu's gcc links --as-needed: libtorch_cuda must stay linked all the same.
      -DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed)
command -v ninja >/dev/null && args+=(-G Ninja)
[ "$hiding" = 0 ] && args+=(-DPARTITA_TORCH_HIDDEN_HEADERS=)
[ "$no_nvcc" = 1 ] && args+=(-DCMAKE_CUDA_COMPILER="$work/no-such-nvcc")
log="$work/log.txt"
set +e
(
  set -e
  PYTHONPATH="$work/site" cmake "${args[@]}"
  cmake --build "$work/build"
) > "$log" 2>&1
rc=$?
set -e
if [ "$expect_clash" = 1 ]; then
  if [ $rc -ne 0 ] && grep -q "torch's bundled fmt/.* shadows the system's copy" "$log"; then
    grep -m 1 "torch's bundled fmt" "$log"
    echo "torch_probe_test: the build without the fix fails on torch's fmt, as expected"
    exit 0
  fi
  cat "$log"
  echo "torch_probe_test: expected the build to fail on the fake torch's fmt (rc=$rc)" >&2
  exit 1
fi
if [ $rc -ne 0 ]; then
  cat "$log"
  echo "torch_probe_test: the build failed (rc=$rc)" >&2
  exit 1
fi
grep -E "partita: (hidden|torch has CUDA)" "$log" || true
if [ -n "$expect_import" ]; then
  mode=CONFIG
  grep -q "PARTITA_TORCH_IMPORT=DIRECT" "$log" && mode=DIRECT
  [ "$mode" = "$expect_import" ] || { echo "torch_probe_test: imported $mode, not $expect_import" >&2; exit 1; }
  echo "torch_probe_test: imported with $mode"
fi
"$work/build/sub/torch_probe"
if [ "$variant" = cuda ] && grep -q "PARTITA_TORCH_IMPORT=DIRECT" "$log"; then
  # Linked although nothing calls into it: that is what registers torch's CUDA kernels.
  # (Through torch's own CMake files, torch's targets see to it; the fake's do not.)
  readelf -d "$work/build/sub/torch_probe" | grep -q 'libtorch_cuda.so' || {
    readelf -d "$work/build/sub/torch_probe"
    echo "torch_probe_test: libtorch_cuda.so is not among the probe's needed libraries" >&2
    exit 1
  }
  echo "torch_probe_test: libtorch_cuda.so is linked"
fi
echo "torch_probe_test: ok"
