#!/usr/bin/env bash
# Installs every Debian package Partita's build, tests and benchmarks need, then configures
# the Release build in build/ and builds it: the targets named as arguments (scripts/demo.sh:
# only the partita binary), or everything without arguments (scripts/test.sh: the tests,
# benchmarks and Python package CTest runs). Idempotent: when everything is installed and
# built it only runs an incremental build (seconds).
#
#   bash scripts/setup.sh [TARGET...]
#
# PARTITA_SETUP_DRY_RUN=1 prints what would be installed, configured and built, one line
# each, and changes nothing (tests/build/setup_targets_test.sh checks the scripts' targets).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=("$@")
dry_run=${PARTITA_SETUP_DRY_RUN:-0}

PACKAGES=(
  cmake ninja-build g++ ccache pkg-config git
  libtorch-dev libopenblas0-openmp        # tensors, autograd; OpenBLAS under libtorch
  libopenmpi-dev openmpi-bin              # processes, launch, messaging
  libmetis-dev                            # graph partitioning
  libptscotch-dev libscotchparmetis-dev   # partitioning across ranks (64-bit PT-Scotch)
  libbz2-dev liblzma-dev                  # PT-Scotch's static archives need them
  libabsl-dev                             # flat_hash_map
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  zlib1g-dev libfast-float-dev            # reading OGB's *.csv.gz
  libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 nftables                       # tests/multihost: namespace hosts, partitions
  python3-numpy                           # docs examples and format cross-checks
  python3-matplotlib                      # scripts/plot_metrics.py
  python3-torch pybind11-dev python3-pytest  # the Python package (python/) and its tests
  python3-venv python3-pip python3-setuptools python3-wheel  # its pip install (setup.py)
  clang libclang-rt-14-dev llvm-14        # fuzz/: clang, its libFuzzer runtime, llvm-symbolizer
  clang-format                            # scripts/check_format.sh (CTest format_check)
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
configure=(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release)
build=(cmake --build build -j2)
for t in "${targets[@]}"; do build+=(--target "$t"); done
if [ "$dry_run" = 1 ]; then
  [ ${#missing[@]} -eq 0 ] || echo "setup: would install: ${missing[*]}"
  [ -f build/CMakeCache.txt ] || echo "setup: would run: ${configure[*]}"
  echo "setup: would run: ${build[*]}"
  exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# Debian's libtorch multiplies through the system libblas.so.3: make sure it is OpenBLAS,
# not the reference BLAS (tens of times slower).
blas_alt=libblas.so.3-x86_64-linux-gnu
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3
if [ -e "$openblas" ] && ! update-alternatives --query "$blas_alt" | grep -q "^Value: $openblas"; then
  as_root update-alternatives --set "$blas_alt" "$openblas"
fi

[ -f build/CMakeCache.txt ] || "${configure[@]}"
"${build[@]}"
