#!/usr/bin/env bash
# The main job on its embedded default: set up and build, generate a synthetic graph,
# partition it in 2 with METIS, verify the result, then sample mini-batches with 2 MPI ranks
# (one per part) and print the sampling figures. Output goes to out/demo/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
partita=build/src/cli/partita
out=out/demo
mkdir -p "$out"
"$partita" generate --nodes 200000 --avg-degree 15 --feat-dim 64 --classes 16 --seed 1 \
  --out "$out/dataset"
"$partita" partition --dataset "$out/dataset" --num-parts 2 --method metis --balance-train \
  --seed 1 --out "$out/parts"
"$partita" info "$out/parts" --verify
# Sample mini-batches across the two parts with two local ranks (MPI) and fetch features.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 2 --oversubscribe "$partita" sample-bench --parts "$out/parts" --fanouts 15,10,5 \
  --batch-size 1024 --batches 20
