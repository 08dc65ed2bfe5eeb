#!/usr/bin/env bash
# Checks that every C++ file of the project is formatted as .clang-format says, with
# Debian 12's clang-format (14): prints each file that is not and exits 1, else says how
# many files it checked and exits 0. Fix a file with `clang-format-14 -i FILE`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ]; then
  echo "error: clang-format-14: not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(find src include python/src tests bench fuzz -name '*.cc' -o -name '*.h' | sort)
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted (clang-format-14 -i FILE): %s\n' "${bad[@]}" >&2
  echo "error: ${#bad[@]} of ${#files[@]} C++ files differ from .clang-format" >&2
  exit 1
fi
echo "format: ${#files[@]} C++ files as .clang-format says"
