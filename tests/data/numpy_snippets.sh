#!/bin/sh
# The "From PyG" and "From DGL" snippets of docs/dataset-format.md, run as written with
# numpy alone: the PyG one writes edges.npy as edge_index.T (Fortran order), float32
# features, int64 labels with -1 outside the splits and boolean masks; `partita partition`
# (2 METIS parts) and `mpirun -np 2 partita train --epochs 2` must succeed on it and print
# test_acc=, and `info --verify` must accept its parts. The DGL one (C-order [E, 2] edges, masks) must partition.
#
#     numpy_snippets.sh PARTITA PYTHON MPIRUN DOC WORK_DIR
set -eu
partita=$1 python=$2 mpirun=$3 doc=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() { echo "FAIL: $1"; [ -f "$2" ] && cat "$2"; exit 1; }

# The first ```python block after the heading $1.
snippet() {
  awk -v heading="$1" '
    $0 == heading { in_section = 1; next }
    in_section && /^```python$/ { in_code = 1; next }
    in_code && /^```$/ { exit }
    in_code { print }' "$doc"
}

snippet "### From PyG" >pyg.py
snippet "### From DGL" >dgl.py
[ -s pyg.py ] || fail "no python block under '### From PyG' in $doc" /dev/null
[ -s dgl.py ] || fail "no python block under '### From DGL' in $doc" /dev/null
"$python" pyg.py || fail "the PyG snippet failed" pyg.py
"$python" dgl.py || fail "the DGL snippet failed" dgl.py

# The snippet must really exercise the PyG forms: Fortran-order edges, masks, label -1.
"$python" -c '
import numpy as np
e = np.load("pyg-data/edges.npy")
assert e.shape[1] == 2 and e.flags.f_contiguous and not e.flags.c_contiguous, e.flags
assert np.load("pyg-data/train_mask.npy").dtype == np.bool_
assert (np.load("pyg-data/label.npy") == -1).any()
' || fail "pyg-data is not in the PyG shapes" /dev/null

"$partita" partition --dataset pyg-data --num-parts 2 --method metis --out pyg-parts \
  >partition.txt 2>&1 || fail "partition of pyg-data exited $?" partition.txt
grep -q "edges.npy: Fortran-order array of shape (16000, 2) copied into C order" partition.txt ||
  fail "no note about the Fortran-order edges.npy" partition.txt
"$partita" info --verify pyg-parts >verify.txt 2>&1 ||
  fail "info --verify pyg-parts (unlabelled nodes stored as -1) exited $?" verify.txt
"$mpirun" -np 2 --oversubscribe "$partita" train --parts pyg-parts --epochs 2 \
  >train.txt 2>&1 || fail "mpirun -np 2 partita train exited $?" train.txt
grep -q "test_acc=" train.txt || fail "train printed no test_acc=" train.txt

"$partita" -q partition --dataset dgl-data --num-parts 2 --method metis --out dgl-parts \
  >dgl.txt 2>&1 || fail "partition of dgl-data exited $?" dgl.txt
"$partita" info --verify dgl-parts >>dgl.txt 2>&1 || fail "info --verify dgl-parts exited $?" dgl.txt
echo "ok: PyG and DGL snippets partition; train printed $(grep -o 'test_acc=[0-9.]*' train.txt)"
