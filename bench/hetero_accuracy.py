#!/usr/bin/env python3
"""Benchmark: R-GCN test accuracy on the HeCo graphs (issue 11's acceptance).

For each dataset (heco-acm, heco-dblp, heco-freebase in ../shared/datasets/ogb-layout) and
each split (heco20, heco40, heco60): a 2-part METIS partition balanced on training nodes
(seed 1), then under `mpirun -np 2`, for each seed:

    partita train --parts P --model rgcn --layers 2 --hidden 64 --fanouts 25,20
                  --dropout 0.5 --lr 0.01 --epochs 100 --eval-every 0 --seed S

With --model han, the same protocol trains HAN (metapath attention, the default metapaths
of each schema) instead:

    partita train --parts P --model han --layers 1 --hidden 8 --heads 8 --fanouts 20
                  --dropout 0.6 --attention-dropout 0.5 --embed-init 0.1 --lr 0.01
                  --epochs 100 --eval-every 0 --seed S --metapaths M

with M the HeCo paper's metapaths (METAPATHS below), which are also the schemas' default.
Those flags are HAN's own defaults (train::model_defaults): with --defaults the runs give
`--model han` and nothing else of the model (no --lr, no --metapaths), as a new user would:

    partita train --parts P --model han --epochs 100 --eval-every 0 --seed S

(--extra adds or overrides flags: later flags win.)

Prints one JSON object: per dataset and split, each seed's test accuracy and their median,
next to HAN's published figures on the same splits (HeCo paper), and each seed's first-epoch
loss. Never fails because an
accuracy is low; it fails only if a command fails.

    python3 bench/hetero_accuracy.py [--datasets acm,dblp,freebase] [--splits heco20,heco40,heco60]
                                     [--seeds 0,1,2] [--epochs 100] [--model rgcn|han]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
HAN = {"acm": [85.11, 87.21, 87.99], "dblp": [90.16, 89.47, 90.34],
       "freebase": [57.24, 63.74, 61.06]}
SPLITS = ["heco20", "heco40", "heco60"]
MODEL_FLAGS = {
    "rgcn": ["--layers", "2", "--hidden", "64", "--fanouts", "25,20", "--dropout", "0.5"],
    "han": ["--layers", "1", "--hidden", "8", "--heads", "8", "--fanouts", "20",
            "--dropout", "0.6", "--attention-dropout", "0.5", "--embed-init", "0.1"],
}
# HAN's metapaths: those of the HeCo paper, which the schema's default gives
# (docs/metapaths.md); kept here to state what the figures were measured with.
METAPATHS = {
    "acm": "paper-author-paper,paper-subject-paper",
    "dblp": "author-paper-author,author-paper-conference-paper-author,"
            "author-paper-term-paper-author",
    "freebase": "movie-actor-movie,movie-director-movie,movie-writer-movie",
}


def partition(a, dataset, split, env):
    out = os.path.join(a.work, f"{dataset}-{split}-parts2")
    if a.smoke:  # a small generated ogbn-mag-shaped graph, its own split
        source = smoke.graph(a.partita, a.work, "smoke-mag", ["--hetero", "mag", "--nodes", "5000"])
        split_flags = []
        shutil.rmtree(out, ignore_errors=True)
    else:
        source = os.path.join(SHARED, "datasets", "ogb-layout", "heco-" + dataset)
        split_flags = ["--split", split]
    if not os.path.exists(os.path.join(out, "partita.json")):
        subprocess.run([a.partita, "-q", "partition", "--dataset", source] + split_flags + [
                        "--num-parts", "2", "--method", "metis",
                        "--balance-train", "--seed", "1", "--out", out],
                       check=True, stdout=subprocess.DEVNULL, env=env)
    return out


def train(a, dataset, parts, seed, env):
    metapaths = (["--metapaths", METAPATHS[dataset]]
                 if a.model == "han" and not a.smoke and not a.defaults else [])
    model = [] if a.defaults else MODEL_FLAGS[a.model] + metapaths + ["--lr", "0.01"]
    cmd = ["mpirun", "-np", "2", "--oversubscribe", a.partita, "-q", "train", "--parts", parts,
           "--model", a.model] + model + ["--epochs", str(a.epochs), "--eval-every", "0",
           "--seed", str(seed)] + a.extra.split() + (["--hidden", "8", "--max-steps", "2"]
                                                      if a.smoke else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    first_loss = None  # the first epoch's loss (docs/training.md: "The first losses")
    for line in out.splitlines():
        if line.startswith("epoch=1 ") and first_loss is None:
            first_loss = float(line.split(" loss=", 1)[1].split()[0])
    for line in reversed(out.splitlines()):
        if line.startswith("test_acc="):
            return float(line.split("=", 1)[1]), first_loss
    raise RuntimeError(f"no test_acc= line in the output of {' '.join(cmd)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="acm,dblp,freebase")
    ap.add_argument("--splits", default=",".join(SPLITS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--model", choices=sorted(MODEL_FLAGS), default="rgcn")
    ap.add_argument("--extra", default="", help="more train flags, space-separated")
    ap.add_argument("--defaults", action="store_true",
                    help="give no model flag but --model (the model's own defaults)")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-hetero"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:  # one generated graph and seed, 1 epoch; no HeCo data needed
        a.datasets, a.splits, a.seeds, a.epochs = "acm", "heco20", "0", 1
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = {"benchmark": "hetero_accuracy", "ranks": 2, "model": a.model,
              "model_flags": "" if a.defaults else " ".join(MODEL_FLAGS[a.model]),
              "defaults": a.defaults, "epochs": a.epochs, "extra": a.extra, "results": {}}
    for dataset in a.datasets.split(","):
        for split in a.splits.split(","):
            parts = partition(a, dataset, split, env)
            runs = [train(a, dataset, parts, int(s), env) for s in a.seeds.split(",")]
            accs = [acc for acc, _ in runs]
            key = f"{dataset}/{split}"
            result["results"][key] = {
                "test_acc": accs, "median": statistics.median(accs),
                "first_epoch_loss": [loss for _, loss in runs],
                "han": HAN[dataset][SPLITS.index(split)] / 100}
            print(f"{key}: {accs} median {statistics.median(accs):.4f}", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
