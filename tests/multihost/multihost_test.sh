#!/usr/bin/env bash
# multihost_test.sh CASE: one CTest case of tests/multihost (see CMakeLists.txt there).
# Needs, from the environment: PARTITA, AFFINITY_CHECK, DIST_MPI_CHECK, DIST_MPI_DATA,
# NETNS_HOSTS, CORA, OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM). Exit 0 pass, 1 fail, 77 skip.
#
# Namespace cases run two hosts, 127.1.0.1 and 127.1.0.2 (scripts/netns-hosts.sh), with
# mpirun itself inside host 0 and MPI forced onto TCP between the hosts:
#   tcp_train     Cora trained by `partita launch --hostfile` over TCP gives the test_acc
#                 of the same run on shared memory (mpirun -np 2 on this host)
#   dist_sampler  tests/store's dist_mpi_check across the two hosts
#   partition     nftables drops everything between the hosts mid-epoch: launch exits
#                 non-zero within 45 s, with the rank's `error:` line and its own
#   unplug        host 1's link goes down mid-run: the same, naming host 127.1.0.2
# Affinity cases (no namespaces), MpiScope::cores_per_rank through affinity_check:
#   affinity_bound    mpirun -np 2 (default binding: a core each): 1 core each, disjoint
#   affinity_taskset  taskset -c 0 mpirun -np 1 --bind-to none: 1 core
#   affinity_unbound  mpirun --bind-to none: -np 1 gets every usable CPU, -np 2 half each
set -uo pipefail

case_name=${1:?usage: multihost_test.sh CASE}
fail() { echo "FAIL: $case_name: $*" >&2; exit 1; }
skip() { echo "SKIP: $case_name: $*"; exit 77; }
for var in PARTITA AFFINITY_CHECK NETNS_HOSTS CORA; do
  [ -n "${!var:-}" ] || fail "$var is not set (run through ctest)"
done

tmp=$(mktemp -d /tmp/partita-multihost.XXXXXX)
set_name=""
cleanup() {
  [ -z "$set_name" ] || "$NETNS_HOSTS" down "$set_name"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP  # so that cleanup runs then too

# Two namespace hosts named uniquely for this run; exports the MCA settings that make
# mpirun (run inside host 0) reach host 1 through the set's agent, over TCP only.
two_hosts() {
  local why
  why=$("$NETNS_HOSTS" check) || skip "$why"
  command -v nft >/dev/null || fail "nft not found (apt-get install nftables; scripts/setup.sh)"
  set_name="mh_${case_name:0:6}_$$"
  "$NETNS_HOSTS" up "$set_name" 2 || fail "netns-hosts.sh up $set_name 2 failed"
  agent=$("$NETNS_HOSTS" agent "$set_name")
  export OMPI_MCA_plm_rsh_agent="$agent"
  export OMPI_MCA_btl=tcp,self
  export OMPI_MCA_btl_tcp_if_include=127.1.0.0/16
  export OMPI_MCA_oob_tcp_if_include=127.1.0.0/16
  printf '127.1.0.1 slots=1\n127.1.0.2 slots=1\n' >"$tmp/hosts"
}
on_host0() { "$NETNS_HOSTS" exec "$set_name" 0 "$@"; }

partition_cora() {
  [ -d "$CORA" ] || fail "$CORA: Cora is missing"
  "$PARTITA" -q partition --dataset "$CORA" --num-parts 2 --method metis --seed 1 \
    --out "$tmp/p2" >"$tmp/partition.log" 2>&1 || { cat "$tmp/partition.log"; fail "partition"; }
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Cora on both hosts through launch, long enough to be cut mid-epoch; then `disrupt`,
# and the whole job must end within 45 s, non-zero, saying what happened.
expect_job_ends() {
  local disrupt=$1
  partition_cora
  on_host0 "$PARTITA" launch --hostfile "$tmp/hosts" -- train --parts "$tmp/p2" \
    --epochs 500 --batch-size 16 --seed 3 --timeout 10 >"$tmp/out" 2>"$tmp/err" &
  local pid=$! waited=0
  until grep -q '^epoch=3 ' "$tmp/out"; do
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/err"; fail "the job ended before epoch 3"; }
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 600 ] || { kill -9 "$pid"; fail "no epoch=3 line within 120 s"; }
  done
  $disrupt
  local start
  start=$(now)
  echo "$case_name: $disrupt at $(tail -1 "$tmp/out" | cut -d' ' -f1)"
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(elapsed "$start" "$(now)" | cut -d. -f1)" -ge 90 ]; then
      kill -9 "$pid"
      fail "launch still running 90 s after the $disrupt"
    fi
    sleep 0.2
  done
  wait "$pid"
  local rc=$? took
  took=$(elapsed "$start" "$(now)")
  echo "$case_name: launch exited $rc, ${took} s after the $disrupt; its stderr:"
  grep -v '^\[' "$tmp/err" | sed 's/^/  | /'
  [ "$rc" -ne 0 ] || fail "launch exited 0"
  awk -v t="$took" 'BEGIN { exit !(t <= 45) }' || fail "took ${took} s, more than 45 s"
  grep -q "127.1.0.2" "$tmp/err" || fail "stderr does not name the lost host 127.1.0.2"
  grep -Eq '^error: (rank [0-9]+|launch)' "$tmp/err" || fail "no error: line in stderr"
}

cut_both() { "$NETNS_HOSTS" cut "$set_name" 0 1 || fail "nft cut failed"; }
unplug_1() { "$NETNS_HOSTS" unplug "$set_name" 1 || fail "unplug failed"; }

# Runs affinity_check with the given launcher words; its lines into $tmp/aff.
affinity() {
  "$@" "$AFFINITY_CHECK" >"$tmp/aff" 2>&1 || { cat "$tmp/aff"; fail "$* affinity_check"; }
  sed 's/^/  | /' "$tmp/aff"
}
cores_of() { grep "^rank=$1 " "$tmp/aff" | sed 's/.* cores=\([0-9]*\).*/\1/'; }

case "$case_name" in
  tcp_train)
    two_hosts
    partition_cora
    flags=(train --parts "$tmp/p2" --epochs 4 --seed 3)
    env -u OMPI_MCA_plm_rsh_agent -u OMPI_MCA_btl -u OMPI_MCA_btl_tcp_if_include \
      -u OMPI_MCA_oob_tcp_if_include mpirun -np 2 --oversubscribe "$PARTITA" "${flags[@]}" \
      >"$tmp/shm" 2>&1 || { cat "$tmp/shm"; fail "shared-memory run"; }
    on_host0 "$PARTITA" launch --hostfile "$tmp/hosts" -- "${flags[@]}" >"$tmp/tcp" 2>&1 ||
      { cat "$tmp/tcp"; fail "launch over TCP"; }
    shm=$(grep '^test_acc=' "$tmp/shm")
    tcp=$(grep '^test_acc=' "$tmp/tcp")
    echo "shared memory: $shm; TCP across namespaces: $tcp"
    grep -q '^127.1.0.2$' "$(dirname "$agent")/agent.log" ||
      fail "mpirun never went through the agent to host 127.1.0.2"
    [ -n "$shm" ] && [ "$shm" = "$tcp" ] || fail "test_acc differs: '$shm' vs '$tcp'"
    ;;
  dist_sampler)
    two_hosts
    [ -n "${DIST_MPI_CHECK:-}" ] && [ -d "${DIST_MPI_DATA:-}/p2" ] ||
      fail "DIST_MPI_DATA/p2 missing (the dist_mpi_fixture test makes it)"
    on_host0 mpirun -np 2 --hostfile "$tmp/hosts" --map-by ppr:1:node \
      "$DIST_MPI_CHECK" "$DIST_MPI_DATA/ds" "$DIST_MPI_DATA/p2" >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    [ "$rc" -eq 0 ] || fail "dist_mpi_check exited $rc"
    grep -q '^2 ranks: .* all equal$' "$tmp/out" || fail "no '2 ranks: ... all equal' line"
    grep -q '^127.1.0.2$' "$(dirname "$agent")/agent.log" || fail "host 127.1.0.2 never used"
    ;;
  partition)
    two_hosts
    expect_job_ends cut_both
    # The ranks' own report names the lost rank (train --timeout 10: about 15 s after the cut,
    # before launch's shortened keepalive can fire, 30 s at the earliest: docs/launch.md).
    grep -Eq '^error: rank 0: .*rank 1 did not answer' "$tmp/err" ||
      fail "no 'error: rank 0: ... rank 1 did not answer' line"
    ;;
  unplug)
    two_hosts
    expect_job_ends unplug_1
    ;;
  affinity_bound)
    # Open MPI binds to core by default for 2 ranks; no --oversubscribe: one core each.
    affinity mpirun -np 2
    [ "$(cores_of 0)" = 1 ] && [ "$(cores_of 1)" = 1 ] || fail "want cores=1 on both ranks"
    m0=$(grep '^rank=0 ' "$tmp/aff" | sed 's/.*mask=//')
    m1=$(grep '^rank=1 ' "$tmp/aff" | sed 's/.*mask=//')
    common=$(comm -12 <(tr , '\n' <<<"$m0" | sort) <(tr , '\n' <<<"$m1" | sort))
    [ -n "$m0" ] && [ -n "$m1" ] && [ -z "$common" ] || fail "masks not disjoint: '$m0' '$m1'"
    ;;
  affinity_taskset)
    affinity taskset -c 0 mpirun -np 1 --bind-to none
    [ "$(cores_of 0)" = 1 ] || fail "want cores=1 under taskset -c 0"
    ;;
  affinity_unbound)
    usable=$(nproc)
    affinity mpirun -np 1 --bind-to none
    [ "$(cores_of 0)" = "$usable" ] || fail "want cores=$usable (nproc) for one unbound rank"
    affinity mpirun -np 2 --oversubscribe --bind-to none
    half=$((usable / 2 > 0 ? usable / 2 : 1))
    [ "$(cores_of 0)" = "$half" ] && [ "$(cores_of 1)" = "$half" ] ||
      fail "want cores=$half for each of two unbound ranks"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS: $case_name"
