#!/usr/bin/env python3
"""Benchmark: the README's GCN, GraphSAGE and GAT test accuracies on Cora and CiteSeer.

For each dataset (cora, citeseer in ../shared/datasets/ogb-layout): the README's 2-part METIS
partition balanced on training nodes,

    partita -q partition --dataset D --num-parts 2 --method metis --balance-train --out P

then, for each configuration and seed, the README's command (2 ranks, one per part):

    partita launch -- train --parts P MODEL --normalize-features --epochs 200
                              --fanouts=-1,-1 --eval-every 0 --seed S

with MODEL, per configuration:
  gcn       --model gcn --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4
            (Kipf & Welling's recipe)
  gcn-bf16  the same with --precision bf16
  sage      --model sage and the GCN flags ("GraphSAGE (same flags)")
  gat       --model gat --layers 2 --hidden 8 --heads 8 --dropout 0.6 --lr 0.005
            --weight-decay 5e-4 (Velickovic et al.'s recipe)
  gat-bf16  the same with --precision bf16

The bf16 configurations need a CPU with native bf16 (AVX512-BF16 or AMX); on another CPU
they are reported as skipped. Prints one JSON object: per configuration and dataset each
seed's test accuracy in percent (one decimal, as the README's tables), their median, and
the paper's figure; and each table row on stderr as the README writes it. Accuracies do not
depend on the machine's load; they may differ in the last digit between CPU models (BLAS
kernels) and thread counts. Never fails because an accuracy is low; it fails only if a
command fails.

    python3 bench/citation_accuracy.py [--datasets cora,citeseer] [--seeds 0,1,2,3,4]
        [--configs gcn,gcn-bf16,sage,gat,gat-bf16] [--epochs 200] [--work DIR] [--smoke]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

import smoke
from cpu_features import NO_BF16, native_bf16

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
GCN = ["--model", "gcn", "--layers", "2", "--hidden", "16", "--dropout", "0.5", "--lr", "0.01",
       "--weight-decay", "5e-4"]
GAT = ["--model", "gat", "--layers", "2", "--hidden", "8", "--heads", "8", "--dropout", "0.6",
       "--lr", "0.005", "--weight-decay", "5e-4"]
CONFIGS = {
    "gcn": GCN,
    "gcn-bf16": GCN + ["--precision", "bf16"],
    "sage": GCN + ["--model", "sage"],  # a flag given twice keeps its last value
    "gat": GAT,
    "gat-bf16": GAT + ["--precision", "bf16"],
}
PAPER = {"gcn": {"cora": 81.5, "citeseer": 70.3}, "gat": {"cora": 83.0, "citeseer": 72.5}}


def partition(a, dataset, env):
    out = os.path.join(a.work, f"{dataset}-2")
    if a.smoke:  # a small generated graph instead of Cora
        source = smoke.graph(a.partita, a.work)
        shutil.rmtree(out, ignore_errors=True)
    else:
        source = os.path.join(SHARED, "datasets", "ogb-layout", dataset)
    if not os.path.exists(os.path.join(out, "partita.json")):
        subprocess.run([a.partita, "-q", "partition", "--dataset", source, "--num-parts", "2",
                        "--method", "metis", "--balance-train", "--out", out],
                       check=True, stdout=subprocess.DEVNULL, env=env)
    return out


def train(a, parts, config, seed, env):
    cmd = [a.partita, "launch", "--", "train", "--parts", parts, *CONFIGS[config],
           "--normalize-features", "--epochs", str(a.epochs), "--fanouts=-1,-1",
           "--eval-every", "0", "--seed", str(seed)]
    if a.smoke:  # the smoke graph's features are Gaussian (negative too): no normalizing
        cmd.remove("--normalize-features")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    for line in out.splitlines():
        if line.startswith("test_acc="):
            return round(100 * float(line.split("=", 1)[1]), 1)
    raise RuntimeError(f"no test_acc= line in the output of {' '.join(cmd)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="cora,citeseer")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-citation"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:  # one generated graph and seed, 2 epochs; no Cora needed
        a.datasets, a.seeds, a.epochs, a.configs = "cora", "0", 2, "gcn,gat"
    configs = a.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            sys.exit(f"error: --configs: '{c}' is not one of {', '.join(CONFIGS)}")
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    bf16 = native_bf16()
    result = {"benchmark": "citation_accuracy", "ranks": 2, "epochs": a.epochs,
              "native_bf16": bf16, "results": {}}
    datasets = a.datasets.split(",")
    parts = {d: partition(a, d, env) for d in datasets}
    for config in configs:
        result["results"][config] = {}
        for dataset in datasets:
            if config.endswith("-bf16") and not bf16:
                result["results"][config][dataset] = {
                    "skipped": NO_BF16}
                continue
            accs = [train(a, parts[dataset], config, int(s), env) for s in a.seeds.split(",")]
            median = statistics.median(accs)
            entry = {"seeds": [int(s) for s in a.seeds.split(",")], "test_acc": accs,
                     "median": median}
            paper = PAPER.get(config.split("-")[0], {}).get(dataset)
            if paper is not None:
                entry["paper"] = paper
            result["results"][config][dataset] = entry
            print(f"{config} {dataset}: {' '.join(f'{x:.1f}' for x in accs)} | "
                  f"**{median:.1f}**", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
