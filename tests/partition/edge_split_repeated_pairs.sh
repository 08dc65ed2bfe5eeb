#!/bin/sh
# `partition --edge-split` (random) on a dataset with edge_time, where a pair repeated at
# different times is several edges (the bug's reproduction): the pair is one unit, so no
# training edge is a held-out pair and `info --verify` accepts the partition; with one part
# (the same assignment) mpirun -np 2 writes one process's bytes.
#
#     edge_split_repeated_pairs.sh PARTITA MPIRUN WORK_DIR
set -eu
partita=$1 mpirun=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"

. "$here/same_dirs.sh"  # fail, stable, same

"$partita" -q generate --nodes 1500 --avg-degree 6 --feat-dim 8 --classes 2 --seed 5 \
  --edge-time --out ds >gen.log 2>&1 || fail "generate --edge-time" gen.log
for dir in undirected directed; do
  flags="--edge-split 0.05,0.10 --seed 1"
  [ $dir = undirected ] && flags="$flags --undirected"
  "$partita" -q partition --dataset ds --num-parts 2 $flags --out p2-$dir >p2.log 2>&1 ||
    fail "partition --edge-split, $dir" p2.log
  "$partita" info --verify p2-$dir >verify.log 2>&1 || fail "info --verify p2-$dir" verify.log
  "$partita" -q partition --dataset ds --num-parts 1 $flags --out p1-$dir >p1.log 2>&1 ||
    fail "partition --edge-split, 1 part, $dir" p1.log
  "$mpirun" -np 2 "$partita" -q partition --dataset ds --num-parts 1 $flags --out np2-$dir \
    >np2.log 2>&1 || fail "mpirun -np 2 partition --edge-split, 1 part, $dir" np2.log
  "$partita" info --verify np2-$dir >verify.log 2>&1 || fail "info --verify np2-$dir" verify.log
  same p1-$dir np2-$dir
done
echo "ok: random edge splits of repeated pairs verify; mpirun -np 2 equals one process"
