#!/usr/bin/env bash
# Prepares, on a machine with Debian's package mirrors, the folder that the GPU machine's
# check (scripts/device-check.sh) needs and that machine cannot fetch: it has no package
# access, no METIS, abseil or fast_float, and it receives only the checkout (not
# ../shared). Run it in the checkout whose working tree the device call sends, then name
# the folder in the call's `carry` (DEVELOPERS.md, "The GPU machine").
#
# Usage: scripts/device-deps.sh [DIR]      (default: <repo>/.device-deps, git-ignored)
# Makes:
#   DIR/prefix/usr/   the packages below unpacked with dpkg -x (headers, libraries, CMake
#                     files); device-check.sh passes it as CMAKE_PREFIX_PATH
#   DIR/cora/         Cora in OGB's raw layout, from ../shared/datasets/ogb-layout/cora
#   DIR/synth200k.py  the synth200k generator, from ../shared/bench/synth200k.py
#   DIR/packages.txt  the packages and versions unpacked
# The .deb files themselves are deleted after unpacking: what travels must stay small.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-$root/.device-deps}
shared=${PARTITA_SHARED:-$root/../shared}
# Debian 12 names: METIS (and its library), abseil (headers + CMake files, and the
# libraries of its ABI version), fast_float (headers only).
packages=(libmetis-dev libmetis5 libabsl-dev libabsl20220623 libfast-float-dev)

case "${1:-}" in
  -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
for f in "$shared/datasets/ogb-layout/cora/raw/edge.csv.gz" "$shared/bench/synth200k.py"; do
  [ -e "$f" ] || { echo "device-deps.sh: error: $f is missing (set PARTITA_SHARED)" >&2; exit 1; }
done

rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/prefix"
(cd "$dir/debs" && apt-get download "${packages[@]}")
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$dir/prefix"
  dpkg-deb -f "$deb" Package Version | paste -sd' ' >> "$dir/packages.txt"
done
rm -rf "$dir/debs" "$dir/prefix/usr/share/doc"
cp -r "$shared/datasets/ogb-layout/cora" "$dir/cora"
cp "$shared/bench/synth200k.py" "$dir/synth200k.py"
chmod -R u+w "$dir"

for f in usr/include/metis.h usr/include/fast_float/fast_float.h \
         usr/include/absl/base/config.h; do
  [ -e "$dir/prefix/$f" ] || { echo "device-deps.sh: error: $dir/prefix/$f is missing" >&2; exit 1; }
done
ls "$dir"/prefix/usr/lib/*/cmake/absl/abslConfig.cmake > /dev/null
ls "$dir"/prefix/usr/lib/*/libmetis.so > /dev/null
echo "device-deps.sh: $dir ready ($(du -sh "$dir" | cut -f1)):"
cat "$dir/packages.txt"
