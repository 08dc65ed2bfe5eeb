#!/usr/bin/env python3
"""Benchmark: generate a products-scale synthetic graph and partition it with METIS.

Prints one JSON object: median time per phase over --runs partition runs, the share that
everything around the METIS call adds to METIS's own time, peak RSS against the bytes of
graph + features, and the generator's time and peak RSS. Never fails because a machine is
slow; it fails only if a command fails.

    python3 bench/partition_products.py [--nodes 2400000] [--runs 3] [--work DIR]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    """Runs cmd, returns (seconds, peak RSS bytes of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all waited-for children: only exact when it grew.
    return seconds, max(after, before) * 1024


def dir_bytes(path, names):
    return sum(os.path.getsize(os.path.join(path, n)) for n in names)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=2_400_000)
    p.add_argument("--avg-degree", type=float, default=26)
    p.add_argument("--feat-dim", type=int, default=100)
    p.add_argument("--classes", type=int, default=47)
    p.add_argument("--parts", type=int, default=2)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--work", default=os.path.join(ROOT, "out", "bench-products"))
    p.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(p)
    a = p.parse_args()
    if a.smoke:
        a.nodes, a.runs = smoke.NODES, 1

    dataset = os.path.join(a.work, f"dataset-{a.nodes}")
    gen = [a.partita, "--quiet", "generate", "--nodes", str(a.nodes), "--avg-degree",
           str(a.avg_degree), "--feat-dim", str(a.feat_dim), "--classes", str(a.classes),
           "--seed", "1", "--out", dataset]
    gen_s, gen_rss = run(gen)
    output_bytes = dir_bytes(dataset, ["edges.npy", "feat.npy", "label.npy", "train_idx.npy",
                                       "valid_idx.npy", "test_idx.npy"])
    input_bytes = dir_bytes(dataset, ["edges.npy", "feat.npy"])

    phases, totals, rss = {}, [], []
    for i in range(a.runs):
        out = os.path.join(a.work, "parts")
        cmd = [a.partita, "--quiet", "partition", "--dataset", dataset, "--num-parts",
               str(a.parts), "--method", "metis", "--seed", "1", "--out", out]
        seconds, _ = run(cmd)
        with open(os.path.join(out, "partita.json")) as f:
            meta = json.load(f)
        summary = meta["summary"]
        for name, value in summary["phase_seconds"].items():
            phases.setdefault(name, []).append(value)
        totals.append(seconds)
        rss.append(summary["peak_rss_bytes"])
        print(f"run {i + 1}/{a.runs}: {seconds:.1f} s", file=sys.stderr)

    med = {k: statistics.median(v) for k, v in phases.items()}
    metis_s = med.get("metis", float("nan"))
    total_s = statistics.median(totals)
    print(json.dumps({
        "benchmark": "partition_products",
        "nodes": a.nodes, "avg_degree": a.avg_degree, "feat_dim": a.feat_dim,
        "parts": a.parts, "runs": a.runs,
        "generate_s": round(gen_s, 2),
        "generate_peak_rss_bytes": gen_rss,
        "generate_output_bytes": output_bytes,
        "generate_rss_over_output": round(gen_rss / output_bytes, 3),
        "partition_total_s_median": round(total_s, 2),
        "phase_s_median": {k: round(v, 3) for k, v in med.items()},
        "metis_s_median": round(metis_s, 2),
        "overhead_around_metis": round((total_s - metis_s) / metis_s, 3) if metis_s else None,
        "partition_peak_rss_bytes_median": statistics.median(rss),
        "graph_plus_features_bytes": input_bytes,
        "peak_rss_over_input": round(statistics.median(rss) / input_bytes, 3),
        "edge_cut": summary["edge_cut"],
        "edge_cut_fraction": summary["edge_cut_fraction"],
    }, indent=2))


if __name__ == "__main__":
    main()
