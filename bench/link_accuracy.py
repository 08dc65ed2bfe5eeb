#!/usr/bin/env python3
"""Benchmark: link-prediction test AUC on Cora and CiteSeer (issue 12's acceptance).

For each dataset (cora, citeseer in ../shared/datasets/ogb-layout): a 2-part METIS partition
holding out 5% of the edges for validation and 10% for testing (seed 1), then under
`mpirun -np 2`, for each seed:

    partita train --parts P --task link --model gcn --layers 2 --hidden 32 --fanouts -1,-1
                  --normalize-features --lr 0.01 --epochs 200 --eval-every 0 --seed S

Prints one JSON object: per dataset each seed's test AUC, AP, MRR and Hits@50, the median
AUC, and GAE's published AUC (Kipf & Welling 2016: Cora 91.0, CiteSeer 89.5). Never fails
because a metric is low; it fails only if a command fails.

    python3 bench/link_accuracy.py [--datasets cora,citeseer] [--seeds 0,1,2] [--epochs 200]
                                   [--extra "--decoder mlp"]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAE_AUC = {"cora": 0.910, "citeseer": 0.895}


def partition(a, dataset, env):
    return smoke.partitioned(a, dataset, f"{dataset}-split-parts2",
                             ["--edge-split", "0.05,0.10", "--num-parts", "2", "--method",
                              "metis", "--seed", "1"], env)


def train(a, parts, seed, env):
    cmd = ["mpirun", "-np", "2", "--oversubscribe", a.partita, "-q", "train", "--parts", parts,
           "--task", "link", "--model", "gcn", "--layers", "2", "--hidden", "32",
           "--fanouts", "-1,-1", "--lr", "0.01",
           "--epochs", str(a.epochs), "--eval-every", "0", "--seed", str(seed)] + a.extra.split()
    if not a.smoke:  # bag-of-words features; the smoke graph's are Gaussian (negative too)
        cmd.insert(cmd.index("--lr"), "--normalize-features")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    metrics = {}
    for line in out.splitlines():
        for item in line.split():
            if item.startswith("test_") and "=" in item:
                key, value = item.split("=", 1)
                metrics[key] = float(value)
    if "test_auc" not in metrics:
        raise RuntimeError(f"no test_auc= line in the output of {' '.join(cmd)}")
    return metrics


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="cora,citeseer")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--extra", default="", help="more train flags, space-separated")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-link"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:  # one generated graph and seed, 2 epochs; no Cora needed
        a.datasets, a.seeds, a.epochs = "cora", "0", 2
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = {"benchmark": "link_accuracy", "ranks": 2, "model": "gcn 2x32",
              "fanouts": [-1, -1], "edge_split": [0.05, 0.10], "epochs": a.epochs,
              "extra": a.extra, "results": {}}
    for dataset in a.datasets.split(","):
        parts = partition(a, dataset, env)
        runs = [train(a, parts, int(s), env) for s in a.seeds.split(",")]
        aucs = [r["test_auc"] for r in runs]
        result["results"][dataset] = {"runs": runs, "median_auc": statistics.median(aucs),
                                      "gae_auc": GAE_AUC[dataset]}
        print(f"{dataset}: auc {aucs} median {statistics.median(aucs):.4f}", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
