#!/bin/sh
# `partita generate --layout chunked` under `mpirun -np 2` (each rank writes its own chunks,
# rank 0 the manifest) writes byte-identical files to one process; --shape papers100m at a
# tiny scale has the promised counts; a bad flag, or the numpy layout, under mpirun is one
# `error:` line.
#
#     generate_mpi.sh PARTITA MPIRUN WORK_DIR
set -eu
partita=$1 mpirun=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() { echo "FAIL: $1"; [ -f "$2" ] && cat "$2"; exit 1; }

flags="--layout chunked --nodes 3000 --avg-degree 40 --feat-dim 6 --chunk-rows 7000 --threads 1"
"$partita" generate $flags --out one >one.log 2>&1 || fail "generate (one process)" one.log
"$mpirun" -np 2 "$partita" generate $flags --out two >two.log 2>&1 || fail "mpirun -np 2 generate" two.log
grep -q "2 rank(s)): 3000 nodes, 120000 edges" two.log || fail "summary of -np 2" two.log
[ "$(ls one/edges | wc -l)" -eq 18 ] || fail "expected 18 edge chunks" /dev/null
diff -r one two >diff.log 2>&1 || fail "-np 1 and -np 2 differ" diff.log

shape="--shape papers100m --scale 0.00002 --chunk-rows 5000 --threads 1"
"$mpirun" -np 2 "$partita" generate $shape --out pap2 >pap2.log 2>&1 || fail "papers100m -np 2" pap2.log
grep -q "2221 nodes, 32314 edges, bfloat16 features" pap2.log || fail "papers100m counts" pap2.log
"$partita" generate $shape --out pap1 >pap1.log 2>&1 || fail "papers100m alone" pap1.log
diff -r pap1 pap2 >diff.log 2>&1 || fail "papers100m -np 1 and -np 2 differ" diff.log
grep -q '"dtype": "bfloat16"' pap2/manifest.json || fail "bfloat16 in the manifest" pap2/manifest.json

if "$mpirun" -np 2 "$partita" generate --shape papers100m --scale 2 --out bad >bad.log 2>&1; then
  fail "--scale 2 was accepted" bad.log
fi
[ "$(grep -c '^error:' bad.log)" -eq 1 ] || fail "expected one error line" bad.log
grep -q -- "--scale" bad.log || fail "the error names --scale" bad.log
# The numpy layout is one process's: refused under mpirun, with one error line.
if "$mpirun" -np 2 "$partita" generate --nodes 100 --out numpy >numpy.log 2>&1; then
  fail "the numpy layout was accepted under mpirun" numpy.log
fi
[ "$(grep -c '^error:' numpy.log)" -eq 1 ] || fail "expected one error line" numpy.log
[ ! -e numpy ] || fail "numpy/ was written" /dev/null
echo "generate under mpirun: ok"
