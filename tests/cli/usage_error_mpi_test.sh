#!/bin/sh
# A usage error under mpirun reaches the user once, whichever rank finds it first (issue 37).
# Rank 0 prints it; before the fix the other ranks exited at once with the usage code, and
# mpirun, seeing a rank fail, ended the job and killed rank 0 if it had not printed yet (on a
# loaded machine: corpus.mpi_train_eval_unknown, mpi_train_lr_not_a_number). Here one rank is
# held back HOLD seconds before it starts partita (3 s were enough for mpirun to kill it
# before the fix, every time), so the race goes the bad way deterministically.
#   usage_error_mpi_test.sh PARTITA MPIRUN WORK
set -u
partita=$1 mpirun=$2 work=$3
hold=4
rm -rf "$work" && mkdir -p "$work"
cat > "$work/hold.sh" <<'EOF'
#!/bin/sh
# hold.sh RANK SECONDS COMMAND...: rank RANK of the job sleeps SECONDS, then runs COMMAND.
rank=$1 seconds=$2; shift 2
[ "${OMPI_COMM_WORLD_RANK:-0}" = "$rank" ] && sleep "$seconds"
exec "$@"
EOF
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0

# check NAME HELD_RANK PATTERN ARGS...: exit 2 and exactly one `error:` line matching PATTERN.
check() {
  name=$1 held=$2 pattern=$3; shift 3
  "$mpirun" -np 2 --oversubscribe sh "$work/hold.sh" "$held" "$hold" "$partita" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
  code=$?
  lines=$(grep -c '^error: ' "$work/$name.err")
  if [ "$code" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "^error: $pattern" "$work/$name.err"; then
    echo "FAIL: $name (rank $held held ${hold} s): exit $code, $lines error line(s):"
    cat "$work/$name.err"
    failed=1
    return
  fi
  echo "ok: $name (rank $held held ${hold} s): $(grep '^error: ' "$work/$name.err")"
}

check generate_rank0_late 0 "generate: under mpirun only --layout chunked" \
  -q generate --nodes 5000 --out "$work/D"
check train_lr_rank0_late 0 "--lr: 'fast' is not a number" \
  -q train --parts "$work/none" --lr fast
check train_eval_rank1_late 1 "--eval: 'exact' is not one of sampled, full" \
  -q train --parts "$work/none" --eval exact
[ ! -e "$work/D" ] || { echo "FAIL: generate wrote $work/D"; failed=1; }
exit $failed
