#!/bin/sh
# The two executables of the command line (src/cli/torch_handoff.h): `partita` links no torch
# and runs the torch-free commands itself; it hands train/infer/sample-bench/launch to
# partita-torch beside it, in its own process; without partita-torch there, such a command
# is one `error:` line and exit 1, while the torch-free commands still run.
#   torch_handoff_test.sh PARTITA WORK
set -u
partita=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# `partita` itself: no torch among its needed libraries; partita-torch: torch.
if readelf -d "$partita" | grep -q 'libtorch'; then
  fail "partita links torch: $(readelf -d "$partita" | grep libtorch)"
fi
torch=$(dirname "$partita")/partita-torch
readelf -d "$torch" | grep -q 'libtorch' || fail "partita-torch links no torch"

# Handed over: the train command line answers (its own --help), and its exit codes hold.
"$partita" train --help >"$work/help.out" 2>&1 || fail "train --help: exit $?"
grep -q -- '--fanouts' "$work/help.out" || fail "train --help lists no --fanouts"
"$partita" train --parts "$work/none" >"$work/missing.out" 2>"$work/missing.err"
code=$?
[ "$code" -eq 1 ] || fail "train on a missing directory: exit $code, expected 1"
grep -q "^error: " "$work/missing.err" || fail "train on a missing directory: no error line"

# partita alone: torch-free commands run, handed-over ones give one error line, exit 1.
mkdir -p "$work/alone"
cp "$partita" "$work/alone/partita"
"$work/alone/partita" generate --nodes 50 --avg-degree 3 --feat-dim 2 --classes 2 \
  --out "$work/alone/ds" >/dev/null 2>&1 || fail "generate without partita-torch: exit $?"
"$work/alone/partita" --help >"$work/alone/help.out" 2>&1 || fail "--help: exit $?"
grep -q 'train' "$work/alone/help.out" || fail "--help does not list train"
"$work/alone/partita" train --parts x >"$work/alone/train.out" 2>"$work/alone/train.err"
code=$?
[ "$code" -eq 1 ] || fail "train without partita-torch: exit $code, expected 1"
[ "$(grep -c '^error: ' "$work/alone/train.err")" -eq 1 ] &&
  grep -q "^error: .*/alone/partita-torch: No such file or directory" "$work/alone/train.err" ||
  fail "train without partita-torch: $(cat "$work/alone/train.err")"
"$work/alone/partita" trian >/dev/null 2>"$work/alone/typo.err"
code=$?
[ "$code" -eq 2 ] && grep -q '^error: trian: unknown command; did you mean train?' \
  "$work/alone/typo.err" || fail "trian: exit $code: $(cat "$work/alone/typo.err")"

[ "$failed" -eq 0 ] && echo "torch_handoff_test: ok"
exit "$failed"
