#!/usr/bin/env python3
"""Benchmark: `partita infer`'s full-neighbourhood test accuracy against the training run's
own (sampled) evaluation on Cora: the figures of the README's `partita infer` section and of
docs/training.md's "Full-neighbourhood inference".

Each case trains under `mpirun -np 2` on 2 METIS parts of ../shared/datasets/ogb-layout/cora
with `--checkpoint-dir`, then runs `partita infer` on the same parts and checkpoint, and
reports both `test_acc=` lines:
  readme        the README's partition (--balance-train) and commands: train --epochs 20
                (GraphSAGE 2x64, fanouts 10,10, --lr 0.003, --seed 0: the defaults)
  readme_lr     the same with --lr 0.01 --seed 1
  ctest         the partition of CTest train_cora_infer_np2 (--seed 1, no --balance-train)
                and its flags (--lr 0.01 --seed 1)
  gcn_full      the README's GCN recipe (seed 0) with --fanouts=-1,-1: its evaluation is
                full-neighbourhood too, so both figures agree
  gat_full      the README's GAT recipe (seed 0), the same

Prints one JSON object: per case the flags, the training run's test_acc and infer's. The
accuracies do not depend on the machine's load; they may differ between CPU models (BLAS
kernels). Never fails because an accuracy is low; it fails only if a command fails.

    python3 bench/infer_accuracy.py [--cases readme,readme_lr,ctest,gcn_full,gat_full]
                                    [--work DIR] [--smoke]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import smoke
from citation_accuracy import GAT, GCN

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
CORA = os.path.join(SHARED, "datasets", "ogb-layout", "cora")
PARTITIONS = {  # name: partition flags
    "readme": ["--num-parts", "2", "--method", "metis", "--balance-train"],
    "ctest": ["--num-parts", "2", "--method", "metis", "--seed", "1"],
}
FULL = ["--normalize-features", "--epochs", "200", "--fanouts=-1,-1", "--eval-every", "0",
        "--seed", "0"]
CASES = {  # name: (partition, train flags)
    "readme": ("readme", ["--epochs", "20"]),
    "readme_lr": ("readme", ["--epochs", "20", "--lr", "0.01", "--seed", "1"]),
    "ctest": ("ctest", ["--model", "sage", "--layers", "2", "--hidden", "64", "--fanouts",
                        "10,10", "--epochs", "20", "--lr", "0.01", "--eval-every", "0",
                        "--seed", "1"]),
    "gcn_full": ("readme", GCN + FULL),
    "gat_full": ("readme", GAT + FULL),
}


def last_test_acc(out, what):
    lines = [line for line in out.splitlines() if line.startswith("test_acc=")]
    if not lines:
        raise RuntimeError(f"no test_acc= line in the output of {what}")
    return float(lines[-1].split("=", 1)[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-infer"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    cases = a.cases.split(",")
    for c in cases:
        if c not in CASES:
            sys.exit(f"error: --cases: '{c}' is not one of {', '.join(CASES)}")
    if a.smoke:  # a generated graph, the defaults' case at 2 epochs
        cases = ["readme"]
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpirun = ["mpirun", "-np", "2", "--oversubscribe"]
    source = smoke.graph(a.partita, a.work) if a.smoke else CORA
    parts = {}
    result = {"benchmark": "infer_accuracy", "ranks": 2, "results": {}}
    for case in cases:
        partition, flags = CASES[case]
        if a.smoke:
            flags = flags + ["--epochs", "2"]
        if partition not in parts:
            parts[partition] = os.path.join(a.work, f"cora-{partition}")
            if a.smoke or not os.path.exists(os.path.join(parts[partition], "partita.json")):
                shutil.rmtree(parts[partition], ignore_errors=True)
                subprocess.run([a.partita, "-q", "partition", "--dataset", source,
                                *PARTITIONS[partition], "--out", parts[partition]],
                               check=True, stdout=subprocess.DEVNULL, env=env)
        ck = os.path.join(a.work, f"{case}-ck")
        inf = os.path.join(a.work, f"{case}-inf")
        shutil.rmtree(ck, ignore_errors=True)
        train = [*mpirun, a.partita, "-q", "train", "--parts", parts[partition], *flags,
                 "--checkpoint-dir", ck]
        out = subprocess.run(train, check=True, capture_output=True, text=True, env=env).stdout
        trained = last_test_acc(out, " ".join(train))
        infer = [*mpirun, a.partita, "-q", "infer", "--parts", parts[partition],
                 "--checkpoint-dir", ck, "--out", inf, "--force"]
        out = subprocess.run(infer, check=True, capture_output=True, text=True, env=env).stdout
        inferred = last_test_acc(out, " ".join(infer))
        result["results"][case] = {"partition": PARTITIONS[partition], "train_flags": flags,
                                   "train_test_acc": trained, "infer_test_acc": inferred}
        print(f"{case}: infer {inferred:.4f}, training run {trained:.4f}", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
