#!/usr/bin/env python3
"""Benchmark: one training epoch on synth200k, the side-by-side graph (fp32 and bf16).

The setting of the comparison with DGL (issue 9): synth200k (../shared/bench/synth200k.py:
200 K nodes, 4.0 M edges, 100 features, 47 classes), 2 METIS parts, 2 ranks on one host,
GraphSAGE 3 x 256, fanouts 15,10,5, --batch-size 2048 (1024 seeds per rank per step), one
epoch, validation after it. Runs `partita train` --runs times per precision and prints one
JSON object with the median of each figure: epoch time, the whole command's wall time, the
shares of compute / sample / fetch / allreduce / wait in the epoch, the matrix-product
GFLOP/s achieved in compute, and each rank's peak RSS. Generates and partitions the graph
under --work first if it is not there. Never fails because a machine is slow; it fails only
if a command fails.

    python3 bench/train_synth200k.py [--runs 3] [--precisions fp32,bf16] [--threads 1]
                                     [--cache-ratio 0.2] [--feature-dtype bfloat16]
                                     [--gpu-cache-ratio 0,0.2]

--gpu-cache-ratio with several values alternates them run by run (0, 0.2, 0, 0.2, ...) and
reports each apart as "<precision>@gpu_cache_ratio=<R>", e.g. the device feature cache
against none (issue 24): `--precisions fp32 --gpu-cache-ratio 0,0.2 --partita-args
'--host-local off'` (host-local reads would hide the remote traffic on one host).
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
from cpu_features import NO_BF16, native_bf16
from train_products import TIME, rss_bytes  # GNU time's peak RSS per rank

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
MODEL = ["--model", "sage", "--layers", "3", "--hidden", "256", "--fanouts", "15,10,5",
         "--batch-size", "2048", "--epochs", "1"]
# --smoke: appended to MODEL (a flag given twice keeps its last value)
SMOKE_MODEL = ["--hidden", "16", "--fanouts", "5,5,5", "--batch-size", "256", "--max-steps", "2"]


def ensure(partita, work, python, feature_dtype="float32", smoke_mode=False, num_parts=2):
    """Generates synth200k and its num_parts-part METIS partition (features stored as
    feature_dtype) once; returns the partition dir. smoke_mode: a small generated graph
    instead (bench/smoke.py), partitioned again each time."""
    if smoke_mode:
        dataset = smoke.graph(partita, work)
        suffix = "" if feature_dtype == "float32" else "-" + feature_dtype
        parts = os.path.join(work, f"smoke-graph-parts{num_parts}{suffix}")
        shutil.rmtree(parts, ignore_errors=True)
        subprocess.run([partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                        str(num_parts), "--method", "metis", "--balance-train", "--seed", "1",
                        "--feature-dtype", feature_dtype, "--out", parts],
                       check=True, stdout=subprocess.DEVNULL)
        return parts
    dataset = os.path.join(work, "synth200k")
    if not os.path.exists(os.path.join(dataset, "test_idx.npy")):  # written last
        gen = os.path.join(SHARED, "bench", "synth200k.py")
        subprocess.run([python, gen, dataset], check=True, stdout=subprocess.DEVNULL)
    suffix = "" if feature_dtype == "float32" else "-" + feature_dtype
    parts = os.path.join(work, f"synth200k-parts{num_parts}" + suffix)
    if not os.path.exists(os.path.join(parts, "partita.json")):
        subprocess.run([partita, "-q", "partition", "--dataset", dataset, "--num-parts",
                        str(num_parts),
                        "--method", "metis", "--balance-train", "--seed", "1",
                        "--feature-dtype", feature_dtype, "--out", parts],
                       check=True, stdout=subprocess.DEVNULL)
    return parts


def epoch_record(path):
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("type") == "epoch":
                return rec
    raise RuntimeError(f"{path}: no epoch record")


def run_once(a, parts, precision, env, gpu_cache_ratio=0.0):
    metrics = os.path.join(a.work, f"metrics-{precision}-gpu{gpu_cache_ratio}.jsonl")
    rss_prefix = metrics + ".rss"
    for path in [metrics] + [f"{rss_prefix}.{r}" for r in range(2)]:
        if os.path.exists(path):
            os.remove(path)
    train = [a.partita, "-q", "train", "--parts", parts] + MODEL + (
        SMOKE_MODEL if a.smoke else []) + [
        "--precision", precision, "--threads", str(a.threads), "--metrics-out", metrics,
        "--cache-ratio", str(a.cache_ratio)] + (
        ["--gpu-cache-ratio", str(gpu_cache_ratio)] if gpu_cache_ratio > 0 else []) + shlex.split(
        a.partita_args)
    if os.access(TIME, os.X_OK):
        rank = "${OMPI_COMM_WORLD_RANK:-0}"
        train = ["sh", "-c", f'exec {TIME} -f %M -o "{rss_prefix}.{rank}" "$@"', "sh"] + train
    start = time.monotonic()
    subprocess.run(["mpirun", "-np", "2", "--oversubscribe"] + shlex.split(a.mpirun_args) + train,
                   check=True,
                   stdout=subprocess.DEVNULL, env=env)
    command_s = time.monotonic() - start
    e = epoch_record(metrics)
    epoch = e["epoch_s"]
    rss = rss_bytes(rss_prefix, 2)
    return {
        "epoch_s": epoch,
        "command_s": command_s,
        "compute_s": e["compute_s"],
        "compute_share": e["compute_s"] / epoch,
        "sample_share": e["sample_s"] / epoch,
        "fetch_share": e["fetch_s"] / epoch,
        "allreduce_share": e["allreduce_s"] / epoch,
        "wait_share": e["wait_s"] / epoch,
        "sample_s": e["sample_s"],
        "fetch_s": e["fetch_s"],
        "matmul_gflop": e.get("matmul_gflop"),
        "matmul_gflops_per_s": e["matmul_gflop"] / e["compute_s"] if e.get("matmul_gflop") else None,
        "eval_s": e["eval_s"],
        # rank 0's bytes to the other rank (requests and replies), epoch and validation
        "request_bytes": e.get("request_bytes"),
        "collective_bytes": e.get("collective_bytes"),
        "cache_hit_rate": e.get("cache_hit_rate"),
        # rank 0's reply bytes received for its feature/label/degree requests
        "remote_bytes": e.get("remote_bytes"),
        "gpu_cache_hit_rate": e.get("gpu_cache_hit_rate"),
        "fetch_over_compute": e["fetch_s"] / e["compute_s"],
        "loss": e["loss"],
        "val_acc": e["val_acc"],
        "peak_rss_bytes_max": max(rss) if rss else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--threads", type=int, default=1, help="sampler threads per rank")
    ap.add_argument("--cache-ratio", type=float, default=0,
                    help="train --cache-ratio: hot-feature cache (0: none)")
    ap.add_argument("--gpu-cache-ratio", default="0",
                    help="train --gpu-cache-ratio: device feature cache (0: none); several "
                         "comma-separated values alternate run by run")
    ap.add_argument("--feature-dtype", default="float32",
                    help="stored features: float32, bfloat16 or float16")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-synth200k"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter with numpy, to generate the graph")
    ap.add_argument("--mpirun-args", default="",
                    help="extra mpirun arguments, e.g. '--mca btl_vader_single_copy_mechanism none'")
    ap.add_argument("--partita-args", default="",
                    help="extra train arguments, e.g. '--host-local off'")
    smoke.add_flag(ap)
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("error: mpirun not found")
    if a.smoke:
        a.runs = 1
    os.makedirs(a.work, exist_ok=True)
    parts = ensure(a.partita, a.work, a.python, a.feature_dtype, smoke_mode=a.smoke)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = {"benchmark": "train_synth200k", "ranks": 2, "model": "sage 3x256",
              "fanouts": [15, 10, 5], "batch_size": 2048, "threads": a.threads,
              "runs": a.runs, "cache_ratio": a.cache_ratio, "feature_dtype": a.feature_dtype,
              "reference": {"dgl_2.0_epoch_s": [71.6, 73.6]}}
    ratios = [float(r) for r in a.gpu_cache_ratio.split(",")]
    result["gpu_cache_ratio"] = ratios if len(ratios) > 1 else ratios[0]
    for precision in a.precisions.split(","):
        if precision == "bf16" and not native_bf16():
            result[precision] = {"skipped": NO_BF16}
            print(f"bf16 skipped: {NO_BF16}", file=sys.stderr)
            continue
        runs = {ratio: [] for ratio in ratios}
        for i in range(a.runs):
            for ratio in ratios:  # alternating, so a drift of the machine hits all alike
                runs[ratio].append(run_once(a, parts, precision, env, ratio))
                r = runs[ratio][-1]
                label = precision if len(ratios) == 1 else f"{precision}@gpu_cache_ratio={ratio:g}"
                print(f"{label} run {i + 1}/{a.runs}: epoch {r['epoch_s']:.1f} s, command "
                      f"{r['command_s']:.1f} s", file=sys.stderr)
        for ratio in ratios:
            key = precision if len(ratios) == 1 else f"{precision}@gpu_cache_ratio={ratio:g}"
            rs = runs[ratio]
            result[key] = {k: statistics.median(r[k] for r in rs)
                           if all(r[k] is not None for r in rs) else None
                           for k in rs[0]}
            result[key]["epoch_s_all"] = [round(r["epoch_s"], 2) for r in rs]
            result[key]["remote_bytes_all"] = [r["remote_bytes"] for r in rs]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
