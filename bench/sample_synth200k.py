#!/usr/bin/env python3
"""Benchmark: one sampling epoch on synth200k, with and without the hot-feature cache.

The feature-path setting: synth200k (../shared/bench/synth200k.py), 2 METIS parts, 2 ranks on
one host, `partita sample-bench --fanouts 15,10,5 --batch-size 2048 --batches 49` (one epoch
of sampling and feature fetching per rank, no model), for each stored feature type
(--feature-dtypes: float32, bfloat16, float16) and each --cache-ratio given (0 = no cache). Runs each setting --runs times, interleaved, and prints one JSON object with the
median of each figure: the whole command's wall time, sampling and fetch time per rank,
remote feature rows and bytes that crossed the wire, the cache's hit rate, rows, bytes and
build time. Generates and partitions the graph under --work first if it is not there. Never
fails because a machine is slow; it fails only if a command fails.

    python3 bench/sample_synth200k.py [--runs 3] [--ratios 0,0.2,0.5,1]
                                      [--feature-dtypes float32,bfloat16]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

import smoke
from train_synth200k import ROOT, ensure

FLAGS = ["--fanouts", "15,10,5", "--batch-size", "2048", "--batches", "49"]  # 1024 per rank
FIGURES = ["wall_s_max", "sample_s_per_rank", "fetch_s_per_rank", "remote_feature_rows",
           "remote_feature_bytes", "cache_hit_rate", "cache_expected_hit_rate",
           "cached_rows_sum", "cache_bytes_sum", "cache_build_s_per_rank"]
EXTRA = ["remote_requests", "remote_bytes", "host_sampled_nodes", "host_feature_rows"]


def run_once(a, parts, ratio, env):
    command = (["mpirun", "-np", "2", "--oversubscribe"] + shlex.split(a.mpirun_args) +
               [a.partita, "-q", "sample-bench", "--parts", parts, "--cache-ratio", str(ratio)] +
               FLAGS + shlex.split(a.partita_args) +
               (["--fanouts", "5,5", "--batch-size", "256", "--batches", "2"] if a.smoke else []))
    start = time.monotonic()
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    command_s = time.monotonic() - start
    record = json.loads(out)
    result = {"command_s": command_s}
    result.update({k: record[k] for k in FIGURES})
    result.update({k: record[k] for k in EXTRA if k in record})
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ratios", default="0,0.2,0.5,1")
    ap.add_argument("--feature-dtypes", default="float32,bfloat16")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-synth200k"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="a python3 with numpy, to generate the graph")
    ap.add_argument("--mpirun-args", default="",
                    help="extra mpirun arguments, e.g. '--mca btl_vader_single_copy_mechanism none'")
    ap.add_argument("--partita-args", default="",
                    help="extra sample-bench arguments, e.g. '--host-local off'")
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:
        # one run of the reduced-precision, cached path (float32 runs in the other smokes)
        a.runs, a.ratios, a.feature_dtypes = 1, "0.5", "bfloat16"
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    dtypes = a.feature_dtypes.split(",")
    parts = {d: ensure(a.partita, a.work, a.python, d, smoke_mode=a.smoke) for d in dtypes}
    ratios = [float(r) for r in a.ratios.split(",")]
    settings = [(d, r) for d in dtypes for r in ratios]
    runs = {s: [] for s in settings}
    for i in range(a.runs):
        for d, r in settings:  # interleaved: a slow spell of the machine hits every setting
            runs[(d, r)].append(run_once(a, parts[d], r, env))
            last = runs[(d, r)][-1]
            print(f"{d} ratio {r} run {i + 1}/{a.runs}: command {last['command_s']:.2f} s, "
                  f"remote {last['remote_feature_bytes'] / 1e9:.2f} GB", file=sys.stderr)
    out = {"benchmark": "sample_synth200k", "ranks": 2, "fanouts": [15, 10, 5],
           "batch_size": 1024, "batches_per_rank": 49, "runs": a.runs}
    for d, r in settings:
        med = {k: statistics.median(x[k] for x in runs[(d, r)]) for k in runs[(d, r)][0]}
        med["command_s_all"] = [round(x["command_s"], 2) for x in runs[(d, r)]]
        out[f"{d}_cache_ratio_{r:g}"] = med
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
