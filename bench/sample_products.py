#!/usr/bin/env python3
"""Benchmark: distributed sampling + feature fetching on a products-scale synthetic graph.

Runs `partita sample-bench` (fanouts 15,10,5, batch 1024, --threads 1) with one rank on a
1-part partition and with two ranks on one host on a 2-part METIS partition, --runs times
each, and prints one JSON object with the median of every figure. Generates and partitions
the graph under --work first if it is not there. Never fails because a machine is slow.

    python3 bench/sample_products.py [--runs 3] [--batches 50] [--work DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = ["batches_per_s", "sampled_edges_per_s", "sampled_edges_per_s_per_core",
           "feature_gb_per_s", "feature_gb_per_s_per_core", "sample_s_per_rank",
           "fetch_s_per_rank", "remote_requests", "remote_bytes", "peak_rss_bytes_sum"]


def ensure(partita, work, nodes):
    dataset = os.path.join(work, f"dataset-{nodes}")
    if not os.path.exists(os.path.join(dataset, "test_idx.npy")):
        subprocess.run([partita, "-q", "generate", "--nodes", str(nodes), "--avg-degree", "26",
                        "--feat-dim", "100", "--classes", "47", "--seed", "1", "--out", dataset],
                       check=True, stdout=subprocess.DEVNULL)
    parts = {}
    for p in (1, 2):
        out = os.path.join(work, f"sample-parts{p}-{nodes}")
        if not os.path.exists(os.path.join(out, "partita.json")):
            subprocess.run([partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                            str(p), "--method", "metis", "--seed", "1", "--out", out],
                           check=True, stdout=subprocess.DEVNULL)
        parts[p] = out
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2_400_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-products"))
    ap.add_argument("--in-memory", action="store_true",
                    help="pass --in-memory to sample-bench (huge-page copies of the part)")
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:
        a.nodes, a.runs, a.batches = smoke.NODES, 1, 2
    parts = ensure(a.partita, a.work, a.nodes)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = {"benchmark": "sample_products", "nodes": a.nodes, "fanouts": [15, 10, 5],
              "batch_size": 1024, "batches_per_rank": a.batches, "runs": a.runs,
              "in_memory": a.in_memory}
    for ranks in (1, 2):
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", a.partita, "sample-bench",
               "--parts", parts[ranks], "--fanouts", "15,10,5", "--batch-size", str(1024 * ranks),
               "--batches", str(a.batches), "--threads", "1"] + (["--in-memory"] if a.in_memory else [])
        runs = []
        for i in range(a.runs):
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
            runs.append(json.loads(out))
            print(f"{ranks} rank(s), run {i + 1}/{a.runs}: "
                  f"{runs[-1]['sampled_edges_per_s_per_core'] / 1e6:.1f} M edges/s/core",
                  file=sys.stderr)
        med = {k: statistics.median(r[k] for r in runs) for k in FIGURES}
        med["hop_s_per_rank"] = [statistics.median(r["hop_s_per_rank"][h] for r in runs)
                                 for h in range(3)]
        result[f"ranks_{ranks}"] = med
    one = result["ranks_1"]["sampled_edges_per_s_per_core"]
    two = result["ranks_2"]["sampled_edges_per_s_per_core"]
    result["two_rank_per_core_over_one_rank"] = round(two / one, 3)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
