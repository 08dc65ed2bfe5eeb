#!/usr/bin/env python3
"""Benchmark: distributed GraphSAGE training on a products-scale synthetic graph.

Runs `partita train` (GraphSAGE, 3 layers, hidden 256, fanouts 15,10,5, batch 1024) with one
rank on a 1-part partition and with two ranks on one host on a 2-part METIS partition
(--balance-train), --runs times each, and prints one JSON object with the median of every
figure of the last epoch (from --metrics-out) against the goals: the trainer waits for
batches at most 15% of the epoch, and gradient averaging takes at most 10% of it. Generates
(8% train, 1% valid, 1% test, like ogbn-products with short evaluations) and partitions the
graph under --work first if it is not there. Never fails because a machine is slow or a goal
is missed; it fails only if a command fails.

    python3 bench/train_products.py [--runs 3] [--epochs 1] [--threads 1] [--work DIR]
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ["--model", "sage", "--layers", "3", "--hidden", "256", "--fanouts", "15,10,5",
         "--batch-size", "1024"]
VALID_FRACTION = TEST_FRACTION = 0.01
GOALS = {"wait_fraction": 0.15, "allreduce_fraction": 0.10}  # upper bounds
# Figures of one run, each reported as the median over runs.
FIGURES = ["epoch_s", "steps", "step_s", "wait_fraction", "allreduce_fraction",
           "compute_fraction", "sample_s", "fetch_s", "seeds_per_s", "loss", "train_acc",
           "val_acc", "test_acc", "train_s", "peak_rss_bytes_max",
           "peak_rss_bytes_sum"]
SMOKE_MODEL = ["--hidden", "16", "--fanouts", "5,5,5", "--max-steps", "2"]  # --smoke
TIME = "/usr/bin/time"  # GNU time, for each rank's peak RSS; skipped when missing


def ensure(partita, work, nodes, train_fraction):
    """Generates and partitions once; returns {parts: partition directory}."""
    tag = f"{nodes}-train{train_fraction:g}"
    dataset = os.path.join(work, f"dataset-{tag}")
    if not os.path.exists(os.path.join(dataset, "test_idx.npy")):  # written last
        subprocess.run([partita, "-q", "generate", "--nodes", str(nodes), "--avg-degree", "26",
                        "--feat-dim", "100", "--classes", "47", "--seed", "1",
                        "--train-fraction", str(train_fraction),
                        "--valid-fraction", str(VALID_FRACTION),
                        "--test-fraction", str(TEST_FRACTION), "--out", dataset],
                       check=True, stdout=subprocess.DEVNULL)
    parts = {}
    for p in (1, 2):
        out = os.path.join(work, f"parts{p}-{tag}")
        if not os.path.exists(os.path.join(out, "partita.json")):
            subprocess.run([partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                            str(p), "--method", "metis", "--balance-train", "--seed", "1",
                            "--out", out], check=True, stdout=subprocess.DEVNULL)
        parts[p] = out
    return parts


def ratio(num, den):
    return num / den if den else None


def read_metrics(path):
    """The last epoch record and the final record of a --metrics-out file (JSON lines)."""
    epoch, final = None, None
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("type") == "epoch":
                epoch = rec
            elif rec.get("type") == "final":
                final = rec
    if epoch is None:
        raise RuntimeError(f"{path}: no epoch record")
    return epoch, final or {}


def run_figures(epoch, final):
    """The figures of one run from its last epoch record and its final record."""
    e = epoch["epoch_s"]
    return {
        "epoch_s": e,
        "steps": epoch["steps"],
        "step_s": ratio(e, epoch["steps"]),
        "wait_fraction": ratio(epoch["wait_s"], e),
        "allreduce_fraction": ratio(epoch["allreduce_s"], e),
        "compute_fraction": ratio(epoch["compute_s"], e),
        "sample_s": epoch["sample_s"],
        "fetch_s": epoch["fetch_s"],
        "seeds_per_s": epoch["seeds_per_s"],
        "loss": epoch.get("loss"),
        "train_acc": epoch.get("train_acc"),
        "val_acc": epoch.get("val_acc"),
        "test_acc": final.get("test_acc"),
        "train_s": final.get("train_s"),
    }


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs):
    """Median of each figure over runs, and whether the medians meet the goals."""
    med = {k: median(r.get(k) for r in runs) for k in FIGURES}
    med["goals_met"] = {k: med[k] is not None and med[k] <= bound for k, bound in GOALS.items()}
    return med


def rss_bytes(prefix, ranks):
    """Peak RSS per rank from the files GNU time wrote (kilobytes), or None if missing."""
    rss = []
    for r in range(ranks):
        try:
            with open(f"{prefix}.{r}") as f:
                rss.append(int(f.read().split()[-1]) * 1024)
        except (OSError, ValueError, IndexError):
            return None
    return rss


def train_once(a, parts_dir, ranks, metrics, env):
    """One `partita train` run under mpirun; returns its figures."""
    if os.path.exists(metrics):
        os.remove(metrics)
    train = [a.partita, "-q", "train", "--parts", parts_dir] + MODEL + (
        SMOKE_MODEL if a.smoke else []) + [
        "--epochs", str(a.epochs), "--threads", str(a.threads), "--prefetch", str(a.prefetch),
        "--metrics-out", metrics]
    rss_prefix = metrics + ".rss"
    for r in range(ranks):
        if os.path.exists(f"{rss_prefix}.{r}"):
            os.remove(f"{rss_prefix}.{r}")
    if os.access(TIME, os.X_OK):
        # Each rank under GNU time, writing its peak RSS (KiB) to <prefix>.<rank>.
        rank = "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"
        train = ["sh", "-c", f'exec {TIME} -f %M -o {shlex.quote(rss_prefix)}."{rank}" "$@"',
                 "sh"] + train
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe"] + train
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    figures = run_figures(*read_metrics(metrics))
    rss = rss_bytes(rss_prefix, ranks) if os.access(TIME, os.X_OK) else None
    figures["peak_rss_bytes_max"] = max(rss) if rss else None
    figures["peak_rss_bytes_sum"] = sum(rss) if rss else None
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2_400_000)
    ap.add_argument("--train-fraction", type=float, default=0.08,
                    help="share of the nodes that are training seeds (valid and test: 0.01 each)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1, help="figures are the last epoch's")
    ap.add_argument("--threads", type=int, default=1, help="sampler threads per rank")
    ap.add_argument("--prefetch", type=int, default=4, help="batches prepared ahead")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-products"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("error: mpirun not found")
    if a.smoke:
        a.nodes, a.runs = smoke.NODES, 1
    parts = ensure(a.partita, a.work, a.nodes, a.train_fraction)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = {"benchmark": "train_products", "nodes": a.nodes,
              "train_fraction": a.train_fraction, "model": "sage", "layers": 3, "hidden": 256,
              "fanouts": [15, 10, 5], "batch_size": 1024, "epochs": a.epochs,
              "threads": a.threads, "prefetch": a.prefetch, "runs": a.runs,
              "goals": {f"{k}_max": v for k, v in GOALS.items()}}
    for ranks in (1, 2):
        runs = []
        for i in range(a.runs):
            metrics = os.path.join(a.work, f"train-metrics-r{ranks}.jsonl")
            runs.append(train_once(a, parts[ranks], ranks, metrics, env))
            r = runs[-1]
            print(f"{ranks} rank(s), run {i + 1}/{a.runs}: epoch {r['epoch_s']:.1f} s, "
                  f"{r['steps']} steps, wait {r['wait_fraction'] or 0:.1%}, "
                  f"allreduce {r['allreduce_fraction'] or 0:.1%}", file=sys.stderr)
        result[f"ranks_{ranks}"] = summarize(runs)
    one = result["ranks_1"]["seeds_per_s"]
    two = result["ranks_2"]["seeds_per_s"]
    result["two_rank_seeds_per_s_over_one_rank"] = round(two / one, 3) if one and two else None
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
