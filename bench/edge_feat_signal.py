#!/usr/bin/env python3
"""Benchmark: do models that read edge features (`partita train --edge-features`) use them
where they carry the signal? (issue 41: "a model with edge_dim beats the same model without
by >= 10 points").

A generated graph (numpy layout with `edge_feat.npy`, written here with the standard library)
whose labels can be read only through the edge features:
  - every node v has a colour c(v) (its features: the one-hot colour plus Gaussian noise), a
    label y(v) and a distractor colour d(v) != y(v), drawn uniformly; colours and labels are
    independent, labels are balanced in every split (so always predicting one class scores
    exactly 1 / classes);
  - v has --marked in-edges from sources of colour y(v) and as many from sources of colour
    d(v); an edge's features are [+1 for a marked edge, -1 for the others, 0, ...] plus
    Gaussian noise (--edge-noise).
So the label is the colour of the in-neighbours whose edges are marked. Without the edge
features a node sees two colours equally often and cannot tell which one is its label (at
best half right: chance is 1 / classes); with them a model can listen to the marked edges
only. GAT's and GATv2's edge features enter their attention logits only (PyG's
GATConv(edge_dim), GATv2Conv(edge_dim)), so the signal is which neighbours to attend to;
GINE adds them to every message, ReLU(x_j + W_e e), and can gate the unmarked ones off.

The graph is partitioned (`partita partition`, --parts parts, METIS) and trained per seed:
gat and gatv2 with and without --edge-features, and gine with them against gat and sage without
(gine cannot train without edge features), under `mpirun -np P` for P > 1 parts. Prints one
JSON object: chance level, each run's test accuracy, the medians over --runs seeds and the
points each model with edge features gains over its comparison without. Never fails
because an accuracy is off; fails only if a command fails. --data-only writes and
partitions the graph and stops (the training needs `train --edge-features`).

    python3 bench/edge_feat_signal.py [--partita build/src/cli/partita] [--work DIR]
                                      [--parts 1] [--runs 1] [--nodes 4000] [--smoke]
                                      [--data-only]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import time

import smoke
from temporal_leak import save_npy, test_acc_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
COMMON_FLAGS = ["--hidden", "32", "--fanouts", "10,10", "--batch-size", "256", "--lr", "0.01",
                "--dropout", "0.1", "--eval-every", "0"]
# (name, model, edge features): the runs of one seed.
RUNS = [("gat_edge", "gat", True), ("gat_plain", "gat", False), ("gatv2_edge", "gatv2", True),
        ("gatv2_plain", "gatv2", False), ("gine_edge", "gine", True),
        ("sage_plain", "sage", False)]
# (model with edge features, its comparison without).
GAINS = [("gat_edge", "gat_plain"), ("gatv2_edge", "gatv2_plain"), ("gine_edge", "gat_plain"),
         ("gine_edge", "sage_plain")]


def write_graph(out, nodes, classes, feat_dim, edge_dim, marked, edge_noise, seed):
    """The graph described above, in the numpy layout under `out`."""
    rng = random.Random(seed)
    colour = [rng.randrange(classes) for _ in range(nodes)]
    by_colour = [[u for u in range(nodes) if colour[u] == c] for c in range(classes)]
    # Splits of 35% / 15% / 50%, each with balanced labels (round robin over a shuffle).
    order = list(range(nodes))
    rng.shuffle(order)
    n_train, n_valid = int(0.35 * nodes), int(0.15 * nodes)
    splits = {"train": order[:n_train], "valid": order[n_train:n_train + n_valid],
              "test": order[n_train + n_valid:]}
    label = [0] * nodes
    for ids in splits.values():
        for i, v in enumerate(ids):
            label[v] = i % classes
    src, dst, efeat = [], [], []
    for v in range(nodes):
        distractor = rng.choice([c for c in range(classes) if c != label[v]])
        for c, mark in ((label[v], 1.0), (distractor, -1.0)):
            # Distinct sources, none of them v: a repeated pair or a self loop is dropped.
            pool = [u for u in rng.sample(by_colour[c], min(len(by_colour[c]), marked + 1))
                    if u != v][:marked]
            for u in pool:
                src.append(u), dst.append(v)
                row = [rng.gauss(0, edge_noise) for _ in range(edge_dim)]
                row[0] += mark
                efeat.extend(row)
    feat = []
    for v in range(nodes):
        row = [rng.gauss(0, 0.5) for _ in range(feat_dim)]
        row[colour[v]] += 1.0
        feat.extend(row)
    os.makedirs(out, exist_ok=True)
    edges = [x for pair in zip(src, dst) for x in pair]
    save_npy(os.path.join(out, "edges.npy"), "q", edges, (len(src), 2))
    save_npy(os.path.join(out, "edge_feat.npy"), "f", efeat, (len(src), edge_dim))
    save_npy(os.path.join(out, "feat.npy"), "f", feat, (nodes, feat_dim))
    save_npy(os.path.join(out, "label.npy"), "q", label, (nodes,))
    for name, ids in splits.items():
        save_npy(os.path.join(out, name + "_idx.npy"), "q", sorted(ids), (len(ids),))
    return len(src), len(splits["test"])


def train(a, parts_dir, seed, model, edge_features):
    argv = [a.partita, "-q", "train", "--parts", parts_dir, "--epochs", str(a.epochs),
            "--seed", str(seed), "--model", model, *COMMON_FLAGS]
    if model in ("gat", "gatv2"):
        argv += ["--heads", "2"]
    if edge_features:
        argv.append("--edge-features")
    return test_acc_of(a, argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--work", default="/tmp/partita-edge-feat-signal")
    ap.add_argument("--parts", type=int, default=1, help="parts and ranks (mpirun for > 1)")
    ap.add_argument("--runs", type=int, default=1, help="training seeds (medians over them)")
    ap.add_argument("--nodes", type=int, default=4000)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--edge-dim", type=int, default=4)
    ap.add_argument("--marked", type=int, default=4,
                    help="marked in-edges per node (and as many unmarked)")
    ap.add_argument("--edge-noise", type=float, default=0.3)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--data-only", action="store_true",
                    help="write and partition the graph, train nothing")
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:
        a.nodes, a.runs, a.epochs = 1200, 1, 1
    shutil.rmtree(a.work, ignore_errors=True)
    dataset = os.path.join(a.work, "ds")
    start = time.time()
    edges, test_nodes = write_graph(dataset, a.nodes, a.classes, 8, a.edge_dim, a.marked,
                                    a.edge_noise, seed=41)
    parts_dir = os.path.join(a.work, "parts")
    subprocess.run([a.partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                    str(a.parts), "--seed", "1", "--out", parts_dir],
                   check=True, stdout=subprocess.DEVNULL, env=ENV)
    report = {
        "benchmark": "edge_feat_signal",
        "nodes": a.nodes, "edges": edges, "classes": a.classes, "edge_dim": a.edge_dim,
        "test_nodes": test_nodes, "parts": a.parts, "epochs": a.epochs,
        "train_flags": COMMON_FLAGS, "chance": 1.0 / a.classes,
        "data_s": round(time.time() - start, 2),
    }
    if a.data_only:
        report["parts_dir"] = parts_dir
        print(json.dumps(report, indent=1))
        return
    runs = []
    for seed in range(a.runs):
        run = {"seed": seed}
        for name, model, edge_features in RUNS:
            acc, seconds = train(a, parts_dir, seed, model, edge_features)
            run[name + "_test_acc"], run[name + "_s"] = acc, round(seconds, 2)
        runs.append(run)
    for name, _, _ in RUNS:
        report[name + "_test_acc_median"] = statistics.median(r[name + "_test_acc"] for r in runs)
    for with_edges, without in GAINS:
        gain = report[with_edges + "_test_acc_median"] - report[without + "_test_acc_median"]
        report[f"{with_edges}_over_{without}_points"] = round(100 * gain, 1)
        report[f"{with_edges}_over_{without}_at_least_10_points"] = gain >= 0.10
    report["runs"] = runs
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
