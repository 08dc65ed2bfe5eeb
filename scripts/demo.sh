#!/usr/bin/env bash
# The main job on its embedded default: set up and build, generate a synthetic graph,
# partition it in 2 with METIS, verify the result, then train GraphSAGE on it with 2 local
# MPI ranks (one per part), print the test accuracy and draw the metrics (out/demo/metrics.png).
# Output goes to out/demo/. It builds only what it runs: the partita binary (the plot is
# scripts/plot_metrics.py, matplotlib); scripts/test.sh builds the tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh partita
[ "${PARTITA_SETUP_DRY_RUN:-0}" != 1 ] || exit 0  # setup.sh printed what it would do
partita=build/src/cli/partita
out=out/demo
mkdir -p "$out"
"$partita" generate --nodes 200000 --avg-degree 15 --feat-dim 64 --classes 16 --seed 1 \
  --out "$out/dataset"
"$partita" partition --dataset "$out/dataset" --num-parts 2 --method metis --balance-train \
  --seed 1 --out "$out/parts"
"$partita" info "$out/parts" --verify
# Train with 2 local ranks: `partita launch` builds and runs the mpirun command (it prints
# it first). Two ranks on one host show the distributed path; for speed the layout rule
# would run one (docs/launch.md), as launch's layout line says. MPI refuses to run as root
# unless told it may.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
rm -rf "$out/checkpoints" "$out/metrics.jsonl"  # a fresh run refuses to overwrite them
"$partita" launch -- train --parts "$out/parts" --epochs 3 --checkpoint-dir "$out/checkpoints" \
  --metrics-out "$out/metrics.jsonl"
# Loss and accuracy per epoch, drawn from the metrics file.
scripts/plot_metrics.py "$out/metrics.jsonl" "$out/metrics.png" \
  --title "synthetic graph, 2 parts, GraphSAGE"
