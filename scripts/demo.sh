#!/usr/bin/env bash
# The main job on its embedded default: set up and build, generate a synthetic graph,
# partition it in 2 with METIS and verify the result. Output goes to out/demo/.
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
