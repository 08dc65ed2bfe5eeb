#!/usr/bin/env python3
"""Benchmark: does `partita train --temporal` keep a node's future out of its batches? (issue
41's leakage benchmark).

A generated temporal graph (numpy layout, written here with the standard library) whose node
labels are a function of edges that arrive AFTER the node's time:
  - every node v has a colour c(v) (its features: the one-hot colour plus Gaussian noise), a
    label y(v) and a time t(v) in [100, 900]; colours and labels are independent, labels are
    balanced in every split (so always predicting one class scores exactly 1 / classes);
  - v has --before in-edges at times < t(v) from sources drawn uniformly (their colours say
    nothing about y(v)), and --after in-edges at times > t(v) from sources of colour y(v).
So the label is the colour of the in-neighbours that connect after the node's time. A model
that sees a seed's future edges reads its label off them; one that samples only edges no
later than the seed's time (`--temporal`, over every hop: a later hop uses the seed's time
too) sees nothing but noise, and must score at chance.

The graph is partitioned (`partita partition`, --parts parts, METIS) and trained twice per
seed with the same flags, with and without --temporal (under `mpirun -np P` for P > 1 parts).
Prints one JSON object: chance level, each run's test accuracy, the medians of --runs seeds,
and whether the temporal median lies within 2 points of chance. Never fails because an
accuracy is off; fails only if a command fails.

    python3 bench/temporal_leak.py [--partita build/src/cli/partita] [--work DIR]
                                   [--parts 1] [--runs 3] [--nodes 8000] [--smoke]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import time

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
TRAIN_FLAGS = ["--model", "sage", "--hidden", "32", "--fanouts", "10,10", "--batch-size", "256",
               "--lr", "0.01", "--dropout", "0.2", "--eval-every", "0"]


def save_npy(path, fmt, values, shape):
    """Writes a little-endian C-order .npy (format 1.0) with struct format `fmt` ('q': int64,
    'f': float32) and `shape`; values flat."""
    descr = {"q": "<i8", "f": "<f4"}[fmt]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def write_graph(out, nodes, classes, feat_dim, before, after, seed):
    """The temporal graph described above, in the numpy layout under `out`."""
    rng = random.Random(seed)
    colour = [rng.randrange(classes) for _ in range(nodes)]
    by_colour = [[u for u in range(nodes) if colour[u] == c] for c in range(classes)]
    t = [rng.randint(100, 900) for _ in range(nodes)]
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
    src, dst, etime = [], [], []
    for v in range(nodes):
        for _ in range(before):  # the past: uninformative sources
            u = rng.randrange(nodes)
            if u != v:
                src.append(u), dst.append(v), etime.append(rng.randint(0, t[v] - 1))
        for _ in range(after):  # the future: sources of the label's colour
            u = rng.choice(by_colour[label[v]])
            if u != v:
                src.append(u), dst.append(v), etime.append(rng.randint(t[v] + 1, 1000))
    feat = []
    for v in range(nodes):
        row = [rng.gauss(0, 0.5) for _ in range(feat_dim)]
        row[colour[v]] += 1.0
        feat.extend(row)
    os.makedirs(out, exist_ok=True)
    edges = [x for pair in zip(src, dst) for x in pair]
    save_npy(os.path.join(out, "edges.npy"), "q", edges, (len(src), 2))
    save_npy(os.path.join(out, "edge_time.npy"), "q", etime, (len(src),))
    save_npy(os.path.join(out, "node_time.npy"), "q", t, (nodes,))
    save_npy(os.path.join(out, "feat.npy"), "f", feat, (nodes, feat_dim))
    save_npy(os.path.join(out, "label.npy"), "q", label, (nodes,))
    for name, ids in splits.items():
        save_npy(os.path.join(out, name + "_idx.npy"), "q", sorted(ids), (len(ids),))
    return len(src), len(splits["test"])


def train(a, parts_dir, seed, temporal):
    argv = [a.partita, "-q", "train", "--parts", parts_dir, "--epochs", str(a.epochs),
            "--seed", str(seed), *TRAIN_FLAGS] + (["--temporal"] if temporal else [])
    return test_acc_of(a, argv)


def test_acc_of(a, argv):
    """Runs the `partita train` command `argv` (under `a.mpirun -np a.parts` for more than one
    part); returns its last test_acc and the seconds it took. Exits when the command fails."""
    if a.parts > 1:
        argv = [a.mpirun, "-np", str(a.parts), "--oversubscribe"] + argv
    start = time.time()
    r = subprocess.run(argv, env=ENV, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr}")
    line = [x for x in r.stdout.splitlines() if x.startswith("test_acc=")][-1]
    return float(line.split("=")[1]), time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--work", default="/tmp/partita-temporal-leak")
    ap.add_argument("--parts", type=int, default=1, help="parts and ranks (mpirun for > 1)")
    ap.add_argument("--runs", type=int, default=3, help="training seeds (medians over them)")
    ap.add_argument("--nodes", type=int, default=8000)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--before", type=int, default=6, help="in-edges before a node's time")
    ap.add_argument("--after", type=int, default=6, help="in-edges after a node's time")
    ap.add_argument("--epochs", type=int, default=5)
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:
        a.nodes, a.runs, a.epochs = 1200, 1, 1
    shutil.rmtree(a.work, ignore_errors=True)
    dataset = os.path.join(a.work, "ds")
    edges, test_nodes = write_graph(dataset, a.nodes, a.classes, 8, a.before, a.after, seed=41)
    parts_dir = os.path.join(a.work, "parts")
    subprocess.run([a.partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                    str(a.parts), "--seed", "1", "--out", parts_dir],
                   check=True, stdout=subprocess.DEVNULL, env=ENV)
    runs = []
    for seed in range(a.runs):
        with_t, with_s = train(a, parts_dir, seed, True)
        without_t, without_s = train(a, parts_dir, seed, False)
        runs.append({"seed": seed, "temporal_test_acc": with_t, "plain_test_acc": without_t,
                     "temporal_s": round(with_s, 2), "plain_s": round(without_s, 2)})
    chance = 1.0 / a.classes
    temporal = statistics.median(r["temporal_test_acc"] for r in runs)
    plain = statistics.median(r["plain_test_acc"] for r in runs)
    print(json.dumps({
        "benchmark": "temporal_leak",
        "nodes": a.nodes, "edges": edges, "classes": a.classes, "test_nodes": test_nodes,
        "parts": a.parts, "epochs": a.epochs, "train_flags": TRAIN_FLAGS,
        "chance": chance,
        "temporal_test_acc_median": temporal,
        "plain_test_acc_median": plain,
        "temporal_within_2_points_of_chance": abs(temporal - chance) <= 0.02,
        "plain_points_above_chance": round(100 * (plain - chance), 1),
        "runs": runs,
    }, indent=1))


if __name__ == "__main__":
    main()
