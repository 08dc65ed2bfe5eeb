#!/usr/bin/env python3
"""Benchmark: a 2 M-node ogbn-mag-shaped graph: partition, sampling rate, R-GCN epoch.

The issue's benchmark (issue 11): `partita generate --hetero mag --nodes 2000000 --seed 0`
(author, field_of_study, institution, paper; features on papers only), then
  1. partition into 2 METIS parts balanced on training nodes: time and peak RSS (once);
  2. `sample-bench` under 2 ranks, fanouts 25,20 (per relation), batch size 1024:
     batches/s and sampled edges/s;
  3. `train --model rgcn --layers 2 --hidden 64 --fanouts 25,20 --batch-size 2048` for one
     epoch under 2 ranks (or with --model han, HAN as bench/hetero_accuracy.py trains it): epoch time, the shares of sample / fetch / compute / allreduce /
     wait in it (sample and fetch run on the loader's thread, overlapping compute: the
     shares add up to more than 1), and each rank's peak RSS.
Steps 2 and 3 run --runs times; prints one JSON object with the medians. Generates the graph
under --work first if it is not there. Never fails because a machine is slow; it fails only
if a command fails.

    python3 bench/hetero_mag.py [--runs 3] [--nodes 2000000] [--work DIR] [--reuse-parts]
                                [--model rgcn|han] [--no-sample]
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

import smoke
from train_products import TIME, rss_bytes  # GNU time's peak RSS per rank

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FANOUTS = "25,20"
EPOCH = ["--batch-size", "2048", "--epochs", "1", "--eval-every", "0"]
# --model: R-GCN as issue 11 measured it, or HAN as bench/hetero_accuracy.py trains it (its
# default metapaths on this schema: cites, rev_cites, paper-author-paper,
# paper-field_of_study-paper and paper-author-institution-author-paper).
MODELS = {
    "rgcn": ["--model", "rgcn", "--layers", "2", "--hidden", "64", "--fanouts", FANOUTS] + EPOCH,
    "han": ["--model", "han", "--layers", "1", "--hidden", "8", "--heads", "8", "--fanouts", "20",
            "--dropout", "0.6", "--attention-dropout", "0.5"] + EPOCH,
}
RANKS = 2
SMOKE_MODEL = ["--hidden", "8", "--max-steps", "2"]  # --smoke: appended (last value wins)
SMOKE_SAMPLE = ["--batch-size", "256", "--batches", "2"]
SAMPLE = ["--fanouts", FANOUTS, "--batch-size", str(1024 * RANKS), "--batches", "50"]  # 1024 per rank


def timed(cmd, rss_path):
    """Runs cmd (under GNU time when there); returns (seconds, peak RSS bytes or None)."""
    if os.access(TIME, os.X_OK):
        cmd = [TIME, "-f", "%M", "-o", rss_path] + cmd
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    if not os.access(TIME, os.X_OK):
        return seconds, None
    with open(rss_path) as f:
        return seconds, int(f.read().split()[-1]) * 1024


def per_rank(cmd, rss_prefix):
    """cmd with each rank under GNU time, writing its peak RSS (KiB) to <prefix>.<rank>."""
    if not os.access(TIME, os.X_OK):
        return cmd
    rank = "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"
    return ["sh", "-c", f'exec {TIME} -f %M -o {shlex.quote(rss_prefix)}."{rank}" "$@"',
            "sh"] + cmd


def ensure(a):
    """Generates the graph once (kept under --work), partitions it (every time: its time and
    memory are figures); returns (parts dir, setup figures)."""
    dataset = os.path.join(a.work, f"mag{a.nodes // 1_000_000}m"
                           if a.nodes % 1_000_000 == 0 else f"mag{a.nodes}")
    generate = None  # reused: not timed
    if not os.path.exists(os.path.join(dataset, "test_idx.npy")):  # written last
        seconds, rss = timed([a.partita, "-q", "generate", "--hetero", "mag", "--nodes",
                              str(a.nodes), "--seed", "0", "--out", dataset],
                             os.path.join(a.work, "generate.rss"))
        generate = {"s": seconds, "peak_rss_bytes": rss}
    parts = dataset + "-parts2"
    if a.reuse_parts and os.path.exists(os.path.join(parts, "partita.json")):
        return parts, {"generate": generate, "partition": None}
    shutil.rmtree(parts, ignore_errors=True)
    seconds, rss = timed([a.partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                          "2", "--method", "metis", "--balance-train", "--seed", "1", "--out",
                          parts], os.path.join(a.work, "partition.rss"))
    return parts, {"generate": generate, "partition": {"s": seconds, "peak_rss_bytes": rss}}


def sample_once(a, parts, env):
    rss_prefix = os.path.join(a.work, "sample.rss")
    cmd = ["mpirun", "-np", str(RANKS), "--oversubscribe"] + per_rank(
        [a.partita, "-q", "sample-bench", "--parts", parts] + SAMPLE +
        (SMOKE_SAMPLE if a.smoke else []), rss_prefix)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, env=env, text=True).stdout
    r = json.loads(out[out.index("{"):])
    rss = rss_bytes(rss_prefix, RANKS) if os.access(TIME, os.X_OK) else None
    return {
        "batches_per_s": r["batches_per_s"],
        "sampled_edges_per_s": r["sampled_edges_per_s"],
        "sampled_edges_per_s_per_core": r["sampled_edges_per_s_per_core"],
        "feature_gb_per_s": r["feature_gb_per_s"],
        "sample_s_per_rank": r["sample_s_per_rank"],
        "fetch_s_per_rank": r["fetch_s_per_rank"],
        "sampled_edges_per_batch": r["sampled_edges"] / (r["batches_per_rank"] * RANKS),
        "input_nodes_per_batch": r["input_nodes"] / (r["batches_per_rank"] * RANKS),
        "remote_bytes_per_batch": r["remote_bytes"] / (r["batches_per_rank"] * RANKS),
        "peak_rss_bytes_max": max(rss) if rss else None,
    }


def epoch_record(path):
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("type") == "epoch":
                return rec
    raise RuntimeError(f"{path}: no epoch record")


def train_once(a, parts, env):
    metrics = os.path.join(a.work, f"metrics-{a.model}.jsonl")
    rss_prefix = metrics + ".rss"
    for path in [metrics] + [f"{rss_prefix}.{r}" for r in range(RANKS)]:
        if os.path.exists(path):
            os.remove(path)
    cmd = ["mpirun", "-np", str(RANKS), "--oversubscribe"] + per_rank(
        [a.partita, "-q", "train", "--parts", parts] + MODELS[a.model] +
        (SMOKE_MODEL if a.smoke else []) +
        ["--metrics-out", metrics],
        rss_prefix)
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    command_s = time.monotonic() - start
    e = epoch_record(metrics)
    epoch = e["epoch_s"]
    rss = rss_bytes(rss_prefix, RANKS) if os.access(TIME, os.X_OK) else None
    return {
        "epoch_s": epoch,
        "command_s": command_s,
        "sample_share": e["sample_s"] / epoch,
        "fetch_share": e["fetch_s"] / epoch,
        "compute_share": e["compute_s"] / epoch,
        "allreduce_share": e["allreduce_s"] / epoch,
        "wait_share": e["wait_s"] / epoch,
        "loss": e["loss"],
        "peak_rss_bytes_rank0": rss[0] if rss else None,
        "peak_rss_bytes_rank1": rss[1] if rss else None,
    }


def medians(runs):
    return {k: statistics.median(r[k] for r in runs) if all(r[k] is not None for r in runs)
            else None for k in runs[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of sample-bench and of train")
    ap.add_argument("--nodes", type=int, default=2_000_000)
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-hetero-mag"),
                    help="holds (or gets) the graph mag<N>m, reused when there, and its "
                    "partition mag<N>m-parts2")
    ap.add_argument("--reuse-parts", action="store_true",
                    help="reuse mag<N>m-parts2 when there (partition figures then null)")
    ap.add_argument("--model", choices=sorted(MODELS), default="rgcn",
                    help="the model of the training epoch (step 3)")
    ap.add_argument("--no-sample", action="store_true", help="skip sample-bench (step 2)")
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("error: mpirun not found")
    if a.smoke:
        a.nodes, a.runs = 5000, 1
    os.makedirs(a.work, exist_ok=True)
    parts, setup = ensure(a)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with open(os.path.join(parts, "partita.json")) as f:
        meta = json.load(f)
    result = {"benchmark": "hetero_mag", "nodes": meta["num_nodes"],
              "edges": meta["num_edges"], "ranks": RANKS, "fanouts": FANOUTS,
              "runs": a.runs, "parts": parts, "model": a.model, **setup}
    steps = (("train", train_once),) if a.no_sample else (("sample", sample_once),
                                                          ("train", train_once))
    for name, once in steps:
        runs = []
        for i in range(a.runs):
            runs.append(once(a, parts, env))
            print(f"{name} run {i + 1}/{a.runs}: {json.dumps(runs[-1])}", file=sys.stderr)
        result[name] = medians(runs)
    result["train"]["epoch_s_all"] = [round(r["epoch_s"], 2) for r in runs]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
