#!/bin/sh
# Ctrl-C during training: `train` alone and under `partita launch` stops with exactly one
# line saying how to resume from its --checkpoint-dir (under a bare mpirun: at most one),
# and the resume works.
#   interrupt_test.sh PARTITA P1_DIR P2_DIR WORK_DIR
set -u
partita=$1 p1=$2 p2=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

# run NAME PATTERN COMMAND...: starts COMMAND (its --checkpoint-dir is $work/NAME), waits
# for its first checkpoint, sends SIGINT to the process whose command line matches PATTERN,
# then checks the one "interrupted" line.
run() {
  name=$1 pattern=$2; shift 2
  "$@" --epochs 100000 --fanouts 3,3 --batch-size 64 --checkpoint-dir "$work/$name" \
    >"$work/$name.out" 2>"$work/$name.err" &
  pid=$!
  i=0
  while ! ls "$work/$name"/checkpoint-*.pt >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 600 ] || { kill -9 $pid; fail "$name: no checkpoint in 60 s"; }
    sleep 0.1
  done
  pkill -INT -f "$pattern"
  wait $pid; code=$?
  [ $code -ne 0 ] || fail "$name: exit code 0 after SIGINT"
  lines=$(grep -c '^interrupted' "$work/$name.err")
  # Under a bare mpirun the line is rank 0's, relayed by mpirun while it tears the job down;
  # it was seen lost once in a fully loaded test run. launch prints it itself when no rank's
  # line came through, so there it is always exactly one.
  if [ "$name" = mpirun ] && [ "$lines" = 0 ]; then
    echo "note: mpirun relayed no 'interrupted' line this time"
    return
  fi
  [ "$lines" = 1 ] || { cat "$work/$name.err"; fail "$name: $lines 'interrupted' lines, expected 1"; }
  # The rank's line names the epoch; launch's own (when no rank's came through) does not.
  grep -Eqx "interrupted( in epoch [0-9]+)?; resume with --resume --checkpoint-dir $work/$name \(and the same other flags\) to go on after epoch [0-9]+" \
    "$work/$name.err" || { cat "$work/$name.err"; fail "$name: not the resume line"; }
  ! grep -q 'MPI_ABORT\|terminate called\|Segmentation' "$work/$name.err" \
    || { cat "$work/$name.err"; fail "$name: abort output"; }
  echo "ok: $name (exit $code)"
}

# Each pattern matches only the process to interrupt, by its unique --checkpoint-dir.
run alone "^$partita train .*$work/alone" "$partita" train --parts "$p1"
run mpirun "^mpirun .*$work/mpirun" mpirun -np 2 --oversubscribe "$partita" train --parts "$p2"
run launch "^$partita launch .*$work/launch" "$partita" launch --oversubscribe -- train --parts "$p2"

# The advice works: resuming the interrupted run trains on from its checkpoint.
last=$(ls "$work/alone" | sort | tail -1)
done_epochs=$(echo "$last" | sed 's/checkpoint-0*\([0-9]*\)\.pt/\1/')
"$partita" -q train --parts "$p1" --fanouts 3,3 --batch-size 64 --checkpoint-dir "$work/alone" \
  --resume --epochs $((done_epochs + 1)) >"$work/resume.out" 2>&1 || { cat "$work/resume.out"; fail "resume"; }
grep -q "^epoch=$((done_epochs + 1)) " "$work/resume.out" || { cat "$work/resume.out"; fail "resume: no epoch $((done_epochs + 1))"; }
echo "ok: resumed after epoch $done_epochs"
