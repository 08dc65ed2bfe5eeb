#!/bin/sh
# `partita partition` under mpirun (partition/pipeline.h), end to end: -np 2 and -np 3
# (with --num-parts 4 != ranks) on a generated numpy dataset and its chunked twin, and on a
# generated mag-shaped (typed) one; each result passes `info --verify`, two runs are
# byte-identical apart from timing and peak-memory fields, node imbalance <= 1.05 (and
# training-node imbalance with --balance-train), every rank's peak is printed and stored, a
# 1-epoch `train` runs on the -np 2 partitions (rgcn on the typed one), and the typed results
# equal the in-process pipeline's (threads as ranks) byte for byte. Link-prediction splits
# (--edge-split, a dataset's own split files) under mpirun: verified, trainable with --task
# link, and byte-identical to the single process where the assignment is the same (1 part).
# Edge and node arrays (homogeneous, per relation of a typed dataset, in chunks) equal one
# process's bytes under mpirun.
# Bad input under mpirun is one `error:` line. A rank killed mid-partition (partition_kill:
# the pipeline with a communicator that kills a rank at a named phase), under plain mpirun
# and under `partita launch`, ends the job within a bound, non-zero, naming the rank, and
# leaves no half-written directory that looks complete (one killed before writing leaves the
# earlier partition in --out unchanged).
#
#     partition_mpi.sh PARTITA MPIRUN WORK_DIR INPROC_PARTITION PARTITION_KILL
set -eu
partita=$1 mpirun=$2 work=$3 inproc=$4 kill=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"

. "$here/same_dirs.sh"  # fail, stable, same

# balanced DIR [KEY]: imbalance KEY (nodes, edges, train; default nodes) <= 1.05.
balanced() {
  key=${2:-nodes}
  imb=$(sed -n "s/.*\"imbalance\": {[^}]*\"$key\": *\([0-9.e+-]*\).*/\1/p" "$1/partita.json")
  [ -n "$imb" ] || fail "no $key imbalance in $1/partita.json" "$1/partita.json"
  awk -v x="$imb" 'BEGIN { exit !(x <= 1.05) }' || fail "$key imbalance $imb > 1.05 in $1" "$1/partita.json"
}

"$partita" -q generate --nodes 3000 --avg-degree 8 --feat-dim 8 --classes 4 --seed 3 \
  --threads 1 --out ds >gen.log 2>&1 || fail "generate" gen.log
"$mpirun" -np 2 "$partita" -q generate --layout chunked --nodes 3000 --avg-degree 8 \
  --feat-dim 8 --classes 4 --seed 3 --chunk-rows 1000 --threads 1 --out chunked \
  >genc.log 2>&1 || fail "generate --layout chunked" genc.log

flags="--method metis --seed 1 --undirected --threads 1"
for run in a b; do
  "$mpirun" -np 2 "$partita" partition --dataset ds --num-parts 2 $flags --out p2$run \
    >p2$run.log 2>&1 || fail "mpirun -np 2 partition ($run)" p2$run.log
  "$mpirun" -np 3 --oversubscribe "$partita" partition --dataset chunked --num-parts 4 \
    $flags --out p4$run >p4$run.log 2>&1 || fail "mpirun -np 3 partition ($run)" p4$run.log
done
grep -q "partitioned ds into p2a: 2 parts" p2a.log || fail "result line of -np 2" p2a.log
grep -q "rank 0 .*rank 1 .*total" p2a.log || fail "per-rank peaks printed" p2a.log
grep -q "rank 2 " p4a.log || fail "per-rank peaks of -np 3 printed" p4a.log
grep -q '"rank_peak_rss_bytes": \[[0-9]*,[0-9]*,[0-9]*\]' p4a/partita.json ||
  fail "three peaks stored" p4a/partita.json
for p in p2a p4a; do
  "$partita" info --verify $p >verify.log 2>&1 || fail "info --verify $p" verify.log
  balanced $p
done
same p2a p2b
same p4a p4b

"$mpirun" -np 2 "$partita" partition --dataset ds --num-parts 3 --balance-train --seed 1 \
  --threads 1 --out bt3 >bt3.log 2>&1 || fail "mpirun -np 2 --balance-train" bt3.log
"$partita" info --verify bt3 >verify.log 2>&1 || fail "info --verify bt3" verify.log
balanced bt3 nodes
balanced bt3 train

# PT-Scotch stays selectable (the default is the coarse partitioner); an unknown name is a
# usage error.
"$mpirun" -np 2 "$partita" partition --dataset ds --num-parts 3 --dist-partitioner ptscotch \
  --seed 1 --threads 1 --out ps3 >ps3.log 2>&1 || fail "mpirun -np 2 --dist-partitioner ptscotch" ps3.log
"$partita" info --verify ps3 >verify.log 2>&1 || fail "info --verify ps3" verify.log
balanced ps3
if "$partita" partition --dataset ds --num-parts 2 --dist-partitioner nope --out bad \
  >dp.log 2>&1; then fail "--dist-partitioner nope accepted" dp.log; fi
grep -q "^error: --dist-partitioner: unknown partitioner 'nope' (coarse or ptscotch)" dp.log ||
  fail "--dist-partitioner nope: one error line" dp.log

"$mpirun" -np 2 "$partita" partition --dataset ds --num-parts 3 --method random --seed 1 \
  --threads 1 --out r3 >r3.log 2>&1 || fail "mpirun -np 2 --method random" r3.log
"$partita" info --verify r3 >verify.log 2>&1 || fail "info --verify r3" verify.log
balanced r3

"$mpirun" -np 2 "$partita" -q train --parts p2a --hidden 16 --batch-size 256 --epochs 1 \
  --seed 1 >train.log 2>&1 || fail "train on the distributed partition" train.log
grep -q '^test_acc=' train.log || fail "train printed no test_acc" train.log

# Typed (mag-shaped) input, coarse partitioner (20000 nodes: one coarsening level and refinement
# moves), --balance-train: -np 2 into 2 parts and
# -np 3 into 4; each equals the in-process pipeline on as many thread ranks.
"$partita" -q generate --hetero mag --nodes 20000 --feat-dim 8 --classes 4 --seed 3 \
  --threads 1 --out mag >genm.log 2>&1 || fail "generate --hetero mag" genm.log
tflags="--method metis --seed 1 --balance-train --threads 1"
for run in a b; do
  "$mpirun" -np 2 "$partita" partition --dataset mag --num-parts 2 $tflags --out m2$run \
    >m2$run.log 2>&1 || fail "mpirun -np 2 partition mag ($run)" m2$run.log
  "$mpirun" -np 3 --oversubscribe "$partita" partition --dataset mag --num-parts 4 $tflags \
    --out m4$run >m4$run.log 2>&1 || fail "mpirun -np 3 partition mag ($run)" m4$run.log
done
grep -q '"node_types"' m2a/partita.json || fail "typed partition metadata" m2a/partita.json
for p in m2a m4a; do
  "$partita" info --verify $p >verify.log 2>&1 || fail "info --verify $p" verify.log
  balanced $p nodes
  balanced $p train
done
same m2a m2b
same m4a m4b
"$inproc" mag m2i 2 2 balance-train >m2i.log 2>&1 || fail "in-process pipeline, 2 ranks" m2i.log
"$inproc" mag m4i 3 4 balance-train >m4i.log 2>&1 || fail "in-process pipeline, 3 ranks" m4i.log
same m2a m2i
same m4a m4i
"$mpirun" -np 2 "$partita" -q train --parts m2a --model rgcn --hidden 16 --batch-size 256 \
  --epochs 1 --seed 1 >trainm.log 2>&1 || fail "rgcn on the typed distributed partition" trainm.log
grep -q '^test_acc=' trainm.log || fail "rgcn train printed no test_acc" trainm.log

# Link-prediction splits under mpirun. --edge-split with 3 ranks and 2 parts: verified, and a
# 1-epoch link training runs on it. With 1 part the assignment is the single process's, so
# the directories must be byte-identical.
"$mpirun" -np 3 --oversubscribe "$partita" partition --dataset ds --num-parts 2 \
  --edge-split 0.05,0.1 $flags --out es2 >es2.log 2>&1 || fail "mpirun -np 3 --edge-split" es2.log
"$partita" info --verify es2 >verify.log 2>&1 || fail "info --verify es2" verify.log
grep -q '"edge_split"' es2/partita.json || fail "no edge_split in es2/partita.json" es2/partita.json
"$mpirun" -np 2 "$partita" -q train --parts es2 --task link --hidden 16 --batch-size 256 \
  --epochs 1 --seed 1 >link.log 2>&1 || fail "link training on the distributed split" link.log
grep -q '^test_auc=' link.log || fail "link training printed no test_auc" link.log
"$mpirun" -np 3 --oversubscribe "$partita" -q partition --dataset ds --num-parts 1 \
  --edge-split 0.05,0.1 $flags --out es1 >es1.log 2>&1 || fail "mpirun -np 3 --edge-split, 1 part" es1.log
"$partita" -q partition --dataset ds --num-parts 1 --edge-split 0.05,0.1 $flags --out es1s \
  >es1s.log 2>&1 || fail "single-process --edge-split, 1 part" es1s.log
same es1s es1

# The dataset's own split files (1 part: new ids are the original ids), read in shares.
cp -r ds given
for f in valid_pos valid_neg test_pos test_neg; do cp es1s/edges/$f.npy given/$f.npy; done
mv given/valid_pos.npy given/valid_edges.npy
mv given/test_pos.npy given/test_edges.npy
cp es1s/part0/train_edges.npy given/train_edges.npy
"$mpirun" -np 3 --oversubscribe "$partita" -q partition --dataset given --num-parts 1 \
  $flags --out g1 >g1.log 2>&1 || fail "mpirun -np 3 with split files" g1.log
"$partita" -q partition --dataset given --num-parts 1 $flags --out g1s >g1s.log 2>&1 ||
  fail "single-process with split files" g1s.log
same g1s g1

# Edge and node arrays (edge_time with repeated pairs kept, edge_weight, edge_feat,
# node_time): with 1 part one process, -np 2 and -np 3 write the same bytes; 4 parts from
# -np 3 verify, and info lists the arrays.
"$partita" -q generate --nodes 3000 --avg-degree 8 --feat-dim 8 --classes 4 --seed 3 \
  --threads 1 --edge-time --edge-weight --edge-feat-dim 4 --node-time --out ea \
  >gena.log 2>&1 || fail "generate with edge arrays" gena.log
"$partita" -q partition --dataset ea --num-parts 1 $flags --out ea1 >ea1.log 2>&1 ||
  fail "single-process partition with edge arrays" ea1.log
for np in 2 3; do
  "$mpirun" -np $np --oversubscribe "$partita" -q partition --dataset ea --num-parts 1 $flags \
    --out ea1_$np >ea1_$np.log 2>&1 || fail "mpirun -np $np with edge arrays, 1 part" ea1_$np.log
  same ea1 ea1_$np
done
"$mpirun" -np 3 --oversubscribe "$partita" -q partition --dataset ea --num-parts 4 $flags \
  --out ea4 >ea4.log 2>&1 || fail "mpirun -np 3 with edge arrays, 4 parts" ea4.log
"$partita" info --verify ea4 >verify.log 2>&1 || fail "info --verify ea4" verify.log
grep -qx 'arrays: edge_time int64 per edge, edge_weight float32 per edge, edge_feat float32 \[4\] per edge, node_time int64 per node' \
  verify.log || fail "info lists the edge arrays" verify.log
# The same arrays per relation and per node type of a typed dataset, and in the chunked
# layout (generated chunk for chunk from the numpy files' values): 1 part, one process and
# -np 3 write the same bytes; the chunked twin gives the numpy dataset's bytes.
hflags="--method metis --seed 1 --threads 1"
"$partita" -q generate --hetero mag --nodes 3000 --feat-dim 4 --classes 4 --seed 3 \
  --threads 1 --edge-time --edge-weight --edge-feat-dim 2 --node-time --out hea \
  >genha.log 2>&1 || fail "generate --hetero with edge arrays" genha.log
"$partita" -q partition --dataset hea --num-parts 1 $hflags --out hea1 >hea1.log 2>&1 ||
  fail "single-process typed partition with edge arrays" hea1.log
"$mpirun" -np 3 --oversubscribe "$partita" -q partition --dataset hea --num-parts 1 $hflags \
  --out hea1_3 >hea1_3.log 2>&1 || fail "mpirun -np 3 typed with edge arrays" hea1_3.log
same hea1 hea1_3
"$mpirun" -np 2 "$partita" -q partition --dataset hea --num-parts 3 $hflags --out hea3 \
  >hea3.log 2>&1 || fail "mpirun -np 2 typed with edge arrays, 3 parts" hea3.log
"$partita" info --verify hea3 >verify.log 2>&1 || fail "info --verify hea3" verify.log
grep -q 'edge_time int64 per edge' verify.log || fail "info lists the typed arrays" verify.log
"$partita" -q generate --nodes 3000 --avg-degree 8 --feat-dim 8 --classes 4 --seed 3 \
  --threads 1 --edge-time --edge-weight --edge-feat-dim 4 --node-time --layout chunked \
  --chunk-rows 5000 --node-chunk-rows 700 --out eac >genc.log 2>&1 ||
  fail "generate --layout chunked with edge arrays" genc.log
"$mpirun" -np 3 --oversubscribe "$partita" -q partition --dataset eac --num-parts 1 $flags \
  --out eac1_3 >eac1_3.log 2>&1 || fail "mpirun -np 3 chunked with edge arrays" eac1_3.log
sed -i 's|"dataset": "eac"|"dataset": "ea"|' eac1_3/partita.json
same ea1 eac1_3
"$mpirun" -np 2 "$partita" -q partition --dataset given --num-parts 3 $flags --out g3 \
  >g3.log 2>&1 || fail "mpirun -np 2 with split files, 3 parts" g3.log
"$partita" info --verify g3 >verify.log 2>&1 || fail "info --verify g3" verify.log

# Bad input: one error line for the whole job.
if "$mpirun" -np 2 "$partita" partition --dataset missing --num-parts 2 --out bad \
    >bad.log 2>&1; then fail "a missing dataset was accepted" bad.log; fi
[ "$(grep -c '^error:' bad.log)" -eq 1 ] || fail "expected one error line (missing)" bad.log
if "$mpirun" -np 2 "$partita" partition --dataset ds --num-parts 2 --edge-split 1.5,0.1 \
    --out bad >bad.log 2>&1; then fail "--edge-split 1.5,0.1 was accepted" bad.log; fi
[ "$(grep -c '^error:' bad.log)" -eq 1 ] || fail "expected one error line (edge split)" bad.log
grep -q -- "--edge-split" bad.log || fail "the error names --edge-split" bad.log
# data_at FILE: the byte offset of an .npy file's data (after its header).
data_at() { echo $((10 + $(od -An -tu2 -j8 -N2 "$1" | tr -d ' '))); }
# A split id out of range (the last test negative's destination becomes 3000 of 3000 nodes).
cp -r given bad_id
f=bad_id/test_neg.npy
printf '\270\013\000\000\000\000\000\000' |
  dd of=$f bs=1 seek=$(($(wc -c <$f) - 8)) conv=notrunc 2>/dev/null
if "$mpirun" -np 3 --oversubscribe "$partita" partition --dataset bad_id --num-parts 2 \
    $flags --out bad >bad.log 2>&1; then fail "a split id out of range was accepted" bad.log; fi
[ "$(grep -c '^error:' bad.log)" -eq 1 ] || fail "expected one error line (split id)" bad.log
grep -q "test_neg.npy.*outside \[0, 3000)" bad.log || fail "the error names test_neg.npy" bad.log
# A negative that is a training edge, in rows read by one rank only.
cp -r given bad_neg
dd if=given/train_edges.npy bs=1 skip=$(data_at given/train_edges.npy) count=16 2>/dev/null |
  dd of=bad_neg/valid_neg.npy bs=1 seek=$(data_at bad_neg/valid_neg.npy) conv=notrunc 2>/dev/null
if "$mpirun" -np 3 --oversubscribe "$partita" partition --dataset bad_neg --num-parts 2 \
    $flags --out bad >bad.log 2>&1; then fail "a negative that is an edge was accepted" bad.log; fi
[ "$(grep -c '^error:' bad.log)" -eq 1 ] || fail "expected one error line (negative)" bad.log
grep -q "valid_neg.npy: row 0: .* is an edge, not a negative" bad.log ||
  fail "the error names valid_neg.npy row 0" bad.log

# A rank killed (SIGKILL) mid-partition. Within 120 s the job ends non-zero, and what it
# prints names rank 1; --out, which held a complete partition before, no longer looks like
# one: info --verify and train refuse it with one error line each.
# killed_run LOG OUT COMMAND...: runs the command, which kills rank 1 as its files are
# created.
killed_run() {
  log=$1 out=$2
  shift 2
  rm -rf "$out"
  cp -r p2a "$out"
  start=$(date +%s)
  rc=0
  timeout -k 5 120 "$@" >"$log" 2>&1 || rc=$?
  seconds=$(($(date +%s) - start))
  [ "$rc" -ne 0 ] || fail "$log: exit code 0 with a rank killed" "$log"
  [ "$seconds" -lt 120 ] || fail "$log: still running 120 s after rank 1 was killed" "$log"
  echo "$log: exit code $rc after $seconds s"
  grep -q "rank 1\b.*signal 9" "$log" || fail "$log: the killed rank is not named" "$log"
  [ ! -e "$out/partita.json" ] || fail "$out looks complete after a rank died" "$log"
  for check in "info --verify $out" "train --parts $out --epochs 1"; do
    if "$partita" $check >check.log 2>&1; then fail "$check accepted $out" check.log; fi
    [ "$(grep -c '^error:' check.log)" -eq 1 ] || fail "$check: expected one error line" check.log
  done
}
killed_run killed_mpirun.log killed_mpirun "$mpirun" -np 2 "$kill" write:1 ds killed_mpirun 2 \
  metis undirected
# Plain mpirun's own note names the rank; no rank says anything (at most one error line).
[ "$(grep -c '^error:' killed_mpirun.log)" -le 1 ] || fail "several error lines" killed_mpirun.log
killed_run killed_launch.log killed_launch "$partita" launch --procs-per-host 2 -- \
  "$kill" write:1 ds killed_launch 2 metis undirected
# partita launch: one error line, naming the killed rank.
[ "$(grep -c '^error:' killed_launch.log)" -eq 1 ] || fail "expected one error line" killed_launch.log
grep -q '^error: launch: rank 1 .*killed by signal 9' killed_launch.log ||
  fail "the error line names rank 1" killed_launch.log
# Rank 0 killed before the writer starts: the earlier partition in --out is left as it was
# (rank 0 removes partita.json only when writing begins), complete and unchanged.
rm -rf killed_early
cp -r p2a killed_early
rc=0
timeout -k 5 120 "$mpirun" -np 2 "$kill" assign:0 ds killed_early 2 random \
  >killed_early.log 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "exit code 0 with rank 0 killed" killed_early.log
grep -q "rank 0\b.*signal 9" killed_early.log || fail "the killed rank 0 is not named" killed_early.log
same p2a killed_early
echo "partition under mpirun: ok"
