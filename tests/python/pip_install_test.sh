#!/usr/bin/env bash
# CTest python_pip_install (label python): the package as a user installs it. Clones the
# source's HEAD (committed work only) into a fresh directory, which has no build/ folder, so
# the install must build the extension and the binary itself; creates a venv with the
# system's site packages (python3-torch); `pip install --no-build-isolation --no-index .`
# there; then, from another directory, runs the console script `partita --help`, imports
# the package (its __version__ must be the project's, its files the venv's) and runs the
# one-process tests of tests/python/test_tools.py against the installed package.
#
#   pip_install_test.sh SOURCE_DIR PYTHON
#
# The clone builds in <clone>/build-pip, at the depth of the CI's build/, so ccache finds
# what that build compiled (CCACHE_BASEDIR: paths relative to the build directory).
set -euo pipefail
src=$1
python=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/partita-pip.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "pip_install_test: $*" >&2
  exit 1
}

# Not a git checkout (a source archive): nothing to clone; CTest counts it as skipped.
git -C "$src" rev-parse HEAD >/dev/null 2>&1 || {
  echo "pip_install_test: $src is not a git checkout: skipped"
  exit 77
}
git clone --quiet --no-checkout "$src" "$work/src"
git -C "$work/src" checkout --quiet --detach "$(git -C "$src" rev-parse HEAD)"
[ ! -e "$work/src/build" ] || fail "the fresh clone has a build/ folder"

"$python" -m venv --system-site-packages "$work/venv"
start=$(date +%s)
(cd "$work/src" && "$work/venv/bin/pip" install --no-build-isolation --no-index --no-cache-dir \
  --quiet .) || fail "pip install failed"
echo "pip_install_test: pip install took $(($(date +%s) - start)) s"

mkdir "$work/elsewhere"
cd "$work/elsewhere"
help=$("$work/venv/bin/partita" --help) || fail "partita --help failed"
grep -q "^Usage: partita " <<<"$help" || fail "partita --help: no usage line: $help"
expected=$(sed -n 's/.*kVersion\[\] = "\([^"]*\)".*/\1/p' "$src/include/partita/core/version.h")
got=$(env -u PYTHONPATH "$work/venv/bin/python" -c \
  "import partita, sys; sys.stdout.write(partita.__version__ + ' ' + partita.__file__)")
[ "${got%% *}" = "$expected" ] || fail "partita.__version__ is '${got%% *}', not '$expected'"
case "${got#* }" in
  "$work/venv/"*) ;;
  *) fail "import partita found ${got#* }, not the venv's package" ;;
esac
# The installed package, not a build tree's: no PYTHONPATH, no PARTITA_BUILD.
env -u PYTHONPATH -u PARTITA_BUILD "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$work/src/tests/python/test_tools.py" -k "version or generate or partition" ||
  fail "tests/python/test_tools.py failed against the installed package"
echo "pip_install_test: ok"
