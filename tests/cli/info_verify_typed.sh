#!/bin/sh
# `partita info --verify` on a typed partition of HeCo's ACM (2 METIS parts, reverse
# relations added): exit 0, the per-part tables of node types and relations, the typed
# summary (types with their feature widths, relations with their edge counts) and the
# verified line; with --no-reverse, the 2 relations of the dataset only.
#
#     info_verify_typed.sh PARTITA HECO_ACM_DIR WORK_DIR
set -eu
partita=$1 dataset=$2 work=$3
rm -rf "$work"
mkdir -p "$work"

fail() { echo "FAIL: $1"; cat "$work/info.txt"; exit 1; }
expect() {  # each argument: one line that must appear in info.txt exactly
  for line in "$@"; do
    grep -qxF -- "$line" "$work/info.txt" || fail "no line '$line'"
  done
}
table_row() {  # NAME: a row of the per-part tables, two counts wide
  grep -qE "^$1 +[0-9]+ +[0-9]+$" "$work/info.txt" || fail "no table row for $1"
}

"$partita" -q partition --dataset "$dataset" --split heco60 --num-parts 2 --method metis \
  --seed 1 --out "$work/p" >/dev/null
"$partita" info --verify "$work/p" >"$work/info.txt" 2>&1 || fail "info --verify exited $?"
expect "typed: 3 node types, 4 relations (reverse relations added), target type paper, feature dtype float32" \
  "  type author: 7167 nodes, 1902 features" \
  "  type paper: 4019 nodes, 1902 features" \
  "  type subject: 60 nodes, 0 features" \
  "  relation author___writes___paper: 13407 edges" \
  "  relation paper___has_subject___subject: 4019 edges" \
  "  relation paper___rev_writes___author: 13407 edges" \
  "  relation subject___rev_has_subject___paper: 4019 edges"
grep -qE "^type +part 0 +part 1$" "$work/info.txt" || fail "no node type table"
grep -qE "^relation +part 0 +part 1$" "$work/info.txt" || fail "no relation table"
for name in author paper subject author___writes___paper paper___has_subject___subject \
            paper___rev_writes___author subject___rev_has_subject___paper; do
  table_row "$name"
done
grep -qE "^verified: [0-9]+ files, .* OK " "$work/info.txt" || fail "no verified line"

"$partita" -q partition --dataset "$dataset" --split heco60 --num-parts 2 --method metis \
  --seed 1 --no-reverse --out "$work/p-no-reverse" >/dev/null
"$partita" info --verify "$work/p-no-reverse" >"$work/info.txt" 2>&1 || fail "info --verify exited $?"
expect "typed: 3 node types, 2 relations, target type paper, feature dtype float32" \
  "  relation author___writes___paper: 13407 edges" \
  "  relation paper___has_subject___subject: 4019 edges"
if grep -q "rev_" "$work/info.txt"; then fail "a reverse relation with --no-reverse"; fi
grep -qE "^verified: " "$work/info.txt" || fail "no verified line"
echo "ok"
