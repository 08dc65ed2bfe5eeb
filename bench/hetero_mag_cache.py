#!/usr/bin/env python3
"""Benchmark: the typed hot-feature cache on the ogbn-mag-shaped graph (issue 28).

Goal: `--cache-ratio 0.2` cuts the remote bytes per epoch by >= 30 %. The graph and its 2
METIS parts are hetero_mag.py's (`partita generate --hetero mag --nodes N --seed 0`, features
on papers only), made under --work when not there. Then `sample-bench` (sampling and feature
fetching, no training) under 2 ranks, fanouts 25,20, batch size 2048 (1024 per rank),
--batches per rank, once with --cache-ratio 0 and once with each --ratios value; the cache
is chosen by pre-sampling --presample batches under another key, as training does. Both ranks
run on this host, so --host-local off makes them send their rows over MPI as on two hosts.

Per ratio it prints the remote feature bytes (the reply bytes of feature requests) and all
remote bytes (feature replies + hop requests and replies), per batch and per epoch (per
batch x the global batches of one epoch: ceil(training ids / 2048), every batch costing
about the same), the cache's hit rate and size, and the reductions against ratio 0. One
JSON object; fails only if a command fails.

    python3 bench/hetero_mag_cache.py [--nodes 2000000] [--ratios 0.2] [--batches 20]
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

import hetero_mag
import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RANKS = 2
BATCH = 1024 * RANKS
FANOUTS = "25,20"


def bench(a, parts, env, ratio):
    cmd = ["mpirun", "-np", str(RANKS), "--oversubscribe", a.partita, "-q", "sample-bench",
           "--parts", parts, "--fanouts", FANOUTS, "--batch-size", str(BATCH), "--batches",
           str(a.batches), "--threads", "1", "--cache-ratio", str(ratio), "--cache-presample",
           str(a.presample), "--host-local", a.host_local]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, env=env, text=True).stdout
    return json.loads(out[out.index("{"):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2_000_000)
    ap.add_argument("--ratios", default="0.2", help="comma-separated cache ratios besides 0")
    ap.add_argument("--batches", type=int, default=20, help="measured batches per rank")
    ap.add_argument("--presample", type=int, default=10, help="--cache-presample")
    ap.add_argument("--host-local", default="off",
                    help="sample-bench --host-local: off (default) sends every remote row over "
                    "MPI, as ranks on different hosts do; auto would read the other rank's part "
                    "from memory on this one host and leave no remote bytes to cut")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-hetero-mag"),
                    help="holds (or gets) the graph mag<N>m and its partition, as hetero_mag.py")
    ap.add_argument("--reuse-parts", action="store_true",
                    help="reuse the partition when there (default: partition again)")
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(ap)
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("error: mpirun not found")
    if a.smoke:
        a.nodes, a.batches, a.presample = 5000, 2, 1
    os.makedirs(a.work, exist_ok=True)
    parts, setup = hetero_mag.ensure(a)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with open(os.path.join(parts, "partita.json")) as f:
        meta = json.load(f)
    train_ids = sum(p["train"] for p in meta["summary"]["parts"])
    epoch_batches = math.ceil(train_ids / BATCH)
    result = {"benchmark": "hetero_mag_cache", "nodes": meta["num_nodes"],
              "edges": meta["num_edges"], "ranks": RANKS, "fanouts": FANOUTS,
              "batch_size": BATCH, "batches_per_rank": a.batches, "presample": a.presample,
              "train_ids": train_ids, "epoch_batches": epoch_batches, "parts": parts,
              "setup": setup, "ratios": {}}
    base = None
    for ratio in [0.0] + [float(r) for r in a.ratios.split(",")]:
        r = bench(a, parts, env, ratio)
        batches = a.batches * RANKS
        rec = {
            "remote_feature_bytes_per_batch": r["remote_feature_bytes"] / batches,
            "remote_bytes_per_batch": r["remote_bytes"] / batches,
            "remote_feature_bytes_per_epoch": r["remote_feature_bytes"] / batches * epoch_batches,
            "remote_bytes_per_epoch": r["remote_bytes"] / batches * epoch_batches,
            "remote_feature_rows": r["remote_feature_rows"],
            "remote_requests": r["remote_requests"],
            "cache_hits": r["cache_hits"],
            "cache_hit_rate": r["cache_hit_rate"],
            "cache_expected_hit_rate": r["cache_expected_hit_rate"],
            "cached_rows_sum": r["cached_rows_sum"],
            "cache_bytes_sum": r["cache_bytes_sum"],
            "cache_build_s_per_rank": r["cache_build_s_per_rank"],
            "fetch_s_per_rank": r["fetch_s_per_rank"],
            "wall_s_max": r["wall_s_max"],
        }
        if base is None:
            base = rec
        else:
            for key in ("remote_feature_bytes_per_epoch", "remote_bytes_per_epoch"):
                rec[key.replace("_per_epoch", "_cut")] = (
                    1 - rec[key] / base[key] if base[key] > 0 else 0.0)
        result["ratios"][str(ratio)] = rec
        print(f"ratio {ratio}: {json.dumps(rec)}", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
