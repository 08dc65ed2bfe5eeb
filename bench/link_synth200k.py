#!/usr/bin/env python3
"""Benchmark: link-prediction step rate and `partita infer` time on synth200k.

The side-by-side graph (../shared/bench/synth200k.py: 200 K nodes, 4.0 M edges, 100
features), 2 METIS parts, 2 ranks on one host, GraphSAGE 3 x 256, fanouts 15,10,5.

- link: the graph partitioned with `--edge-split 0.01,0.01` (1% of the undirected edges held
  out for validation, 1% for test), then `partita train --task link --batch-size 2048
  --negatives 1 --epochs 1 --max-steps S --eval-every 0`: 2048 training edges per global
  step (1024 per rank) and one uniform negative each. Reports positive edges per second
  (the epoch's edges / epoch_s) and the epoch's time shares, medians of --runs runs.
- infer: a node-classification checkpoint of the same model (one `train --max-steps 2`
  epoch on the 2-part partition without a split), then `partita infer` over all 200 K
  nodes, wall time of the command (model load, 3 layers, writing the outputs) and its
  peak RSS per rank, medians of --runs runs.

Generates and partitions the graph under --work first if it is not there (the node
partition is shared with bench/train_synth200k.py's work directory layout). Never fails
because a machine is slow; it fails only if a command fails.

    python3 bench/link_synth200k.py [--runs 3] [--max-steps 40] [--skip link|infer]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from train_products import TIME, rss_bytes  # GNU time's peak RSS per rank
import smoke
from train_synth200k import SMOKE_MODEL, ensure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ["--model", "sage", "--layers", "3", "--hidden", "256", "--fanouts", "15,10,5",
         "--batch-size", "2048", "--epochs", "1"]


def mpirun(cmd, env, rss_prefix=None):
    if rss_prefix and os.access(TIME, os.X_OK):
        rank = "${OMPI_COMM_WORLD_RANK:-0}"
        cmd = ["sh", "-c", f'exec {TIME} -f %M -o "{rss_prefix}.{rank}" "$@"', "sh"] + cmd
    start = time.monotonic()
    subprocess.run(["mpirun", "-np", "2", "--oversubscribe"] + cmd, check=True,
                   stdout=subprocess.DEVNULL, env=env)
    return time.monotonic() - start


def split_parts(a, env):
    dataset = os.path.join(a.work, "smoke-graph" if a.smoke else "synth200k")
    parts = os.path.join(a.work, "smoke-graph-parts2-split" if a.smoke else "synth200k-parts2-split")
    if a.smoke:
        shutil.rmtree(parts, ignore_errors=True)
    if not os.path.exists(os.path.join(parts, "partita.json")):
        subprocess.run([a.partita, "-q", "partition", "--dataset", dataset, "--num-parts", "2",
                        "--method", "metis", "--seed", "1", "--edge-split", "0.01,0.01",
                        "--out", parts], check=True, stdout=subprocess.DEVNULL, env=env)
    return parts


def link_once(a, parts, env):
    metrics = os.path.join(a.work, "metrics-link.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    command_s = mpirun([a.partita, "-q", "train", "--parts", parts, "--task", "link"] + a.model +
                       ["--negatives", "1", "--max-steps", str(a.max_steps), "--eval-every", "0",
                        "--metrics-out", metrics], env)
    with open(metrics) as f:
        e = next(r for r in map(json.loads, f) if r["type"] == "epoch")
    epoch = e["epoch_s"]
    return {"epoch_s": epoch, "steps": e["steps"], "edges": e["seeds"],
            "edges_per_s": e["seeds"] / epoch, "command_s": command_s,
            "compute_share": e["compute_s"] / epoch, "sample_share": e["sample_s"] / epoch,
            "fetch_share": e["fetch_s"] / epoch, "allreduce_share": e["allreduce_s"] / epoch,
            "wait_share": e["wait_s"] / epoch}


def infer_once(a, parts, checkpoint, env):
    out = os.path.join(a.work, "infer-out")
    rss_prefix = os.path.join(a.work, "infer.rss")
    seconds = mpirun([a.partita, "-q", "infer", "--parts", parts, "--checkpoint-dir", checkpoint,
                      "--out", out, "--force"], env, rss_prefix)
    rss = rss_bytes(rss_prefix, 2) if os.access(TIME, os.X_OK) else None
    return {"infer_s": seconds, "peak_rss_bytes_max": max(rss) if rss else None}


def median_of(runs):
    return {k: statistics.median(r[k] for r in runs) if all(r[k] is not None for r in runs)
            else None for k in runs[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=40, help="link steps per run")
    ap.add_argument("--skip", default="", help="link or infer")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-synth200k"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter with numpy, to generate the graph")
    smoke.add_flag(ap)
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("error: mpirun not found")
    a.model = MODEL + (SMOKE_MODEL if a.smoke else [])
    if a.smoke:
        a.runs, a.max_steps = 1, 2
    os.makedirs(a.work, exist_ok=True)
    node_parts = ensure(a.partita, a.work, a.python, smoke_mode=a.smoke)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = {"benchmark": "link_synth200k", "ranks": 2, "model": "sage 3x256",
              "fanouts": [15, 10, 5], "runs": a.runs}
    if a.skip != "link":
        parts = split_parts(a, env)
        runs = []
        for i in range(a.runs):
            runs.append(link_once(a, parts, env))
            print(f"link run {i + 1}/{a.runs}: {runs[-1]['edges_per_s']:.0f} edges/s",
                  file=sys.stderr)
        result["link"] = dict(median_of(runs), batch_size=2048, negatives=1,
                              edges_per_s_all=[round(r["edges_per_s"]) for r in runs])
    if a.skip != "infer":
        checkpoint = os.path.join(a.work, "infer-checkpoint")
        shutil.rmtree(checkpoint, ignore_errors=True)
        mpirun([a.partita, "-q", "train", "--parts", node_parts] + a.model +
               ["--max-steps", "2", "--eval-every", "0", "--checkpoint-dir", checkpoint], env)
        runs = []
        for i in range(a.runs):
            runs.append(infer_once(a, node_parts, checkpoint, env))
            print(f"infer run {i + 1}/{a.runs}: {runs[-1]['infer_s']:.1f} s", file=sys.stderr)
        result["infer"] = dict(median_of(runs), nodes=smoke.NODES if a.smoke else 200000,
                               infer_s_all=[round(r["infer_s"], 2) for r in runs])
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
