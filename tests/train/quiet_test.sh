#!/bin/sh
# -q silences progress only (issue 37): a --resume that finds no checkpoint still says it
# starts from epoch 1, and a resume with another --lr still warns; progress and information
# ("resuming from ...", the epoch lines' stderr companions) stay silent.
#   quiet_test.sh PARTITA P1_DIR WORK_DIR
set -u
partita=$1 p1=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; [ -f "$work/err" ] && cat "$work/err"; exit 1; }
flags="--parts $p1 --fanouts 3,3 --batch-size 256 --checkpoint-dir $work/ck"

# An empty --checkpoint-dir with --resume: the run starts from epoch 1, and says so.
"$partita" -q train $flags --epochs 1 --resume >"$work/out" 2>"$work/err" || fail "first run"
grep -qx "no checkpoint in $work/ck: starting from epoch 1" "$work/err" \
  || fail "-q hid the notice that --resume found no checkpoint"
echo "ok: -q --resume without a checkpoint says it starts from epoch 1"

# Resumed with another --lr: the warning, and no progress or information line.
"$partita" -q train $flags --epochs 2 --resume --lr 0.05 >"$work/out" 2>"$work/err" \
  || fail "resumed run"
grep -q "^warning: --lr: [0-9.e-]* in the checkpoint, 0.05 given" "$work/err" \
  || fail "-q hid the warning that --lr changed"
! grep -q "resuming from" "$work/err" || fail "-q printed progress (resuming from ...)"
grep -q "^epoch=2 " "$work/out" || fail "no epoch 2 line on stdout"
echo "ok: -q --resume --lr 0.05 warns about --lr, and prints no progress"
