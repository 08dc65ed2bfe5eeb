#!/usr/bin/env python3
"""`partita train --gpu-cache-ratio` changes no number (issue 24): each run below is made
twice, without and with `--gpu-cache-ratio 0.3`, and every epoch's loss, train accuracy and
validation figure and the final test metrics must be equal, bit for bit (as --metrics-out
writes them: shortest round-trip decimals). The cached run must have found rows in the
cache every epoch; on 2 ranks (every remote row through requests: --host-local off) its
remote reply bytes must be lower, its remote hits > 0, and the epoch line must end with
`gpu_cache_hit_rate=... remote_bytes=...`.

Runs: GraphSAGE on Cora, 1 rank (1 part) and 2 ranks (2 parts) under mpirun; GCN with
--normalize-features (normalization after assembly) and GraphSAGE on bfloat16-stored
features on 2 ranks; link prediction on 1 and 2 ranks.

    gpu_cache_check.py --partita BIN --mpirun MPIRUN --cora-parts DIR --link-parts DIR --work DIR

Exit 0 when everything holds; otherwise prints what does not and exits 1.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
NODE = ["--hidden", "16", "--fanouts", "5,5", "--batch-size", "64", "--epochs", "2",
        "--lr", "0.01", "--seed", "3", "--threads", "1", "--eval-every", "1"]
LINK = ["--task", "link", "--hidden", "16", "--fanouts", "5,5", "--batch-size", "256",
        "--epochs", "2", "--lr", "0.01", "--seed", "3", "--threads", "1", "--eval-every", "1"]
# name: (parts key, part dir, ranks, flags)
RUNS = {
    "sage_np1": ("cora", "p1", 1, NODE + ["--model", "sage"]),
    "sage_np2": ("cora", "p2", 2, NODE + ["--model", "sage"]),
    "gcn_normalized_np2": ("cora", "p2", 2, NODE + ["--model", "gcn", "--normalize-features"]),
    "sage_bf16_stored_np2": ("cora", "p2-bf16", 2, NODE + ["--model", "sage"]),
    "link_np1": ("link", "p1", 1, LINK),
    "link_np2": ("link", "p2", 2, LINK),
}
# Figures that must not change (epoch records; final record).
EPOCH_KEYS = ["epoch", "steps", "seeds", "loss", "train_acc"]
FINAL_KEYS = ["test_acc", "test_auc", "test_ap", "test_mrr", "epochs", "steps", "seeds"]
FAILURES = []


def fail(message):
    print("FAIL:", message, flush=True)
    FAILURES.append(message)


def train(a, name, parts, ranks, flags, ratio):
    metrics = os.path.join(a.work, f"{name}-{ratio}.jsonl")
    command = [a.partita, "train", "--parts", parts, "--host-local", "off", "--force",
               "--metrics-out", metrics, "--gpu-cache-ratio", str(ratio)] + flags
    if ranks > 1:
        command = [a.mpirun, "-np", str(ranks), "--oversubscribe"] + command
    done = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        fail(f"{name} (ratio {ratio}) exited {done.returncode}: {done.stderr[-2000:]}")
        return None, ""
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    return records, done.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partita", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--cora-parts", required=True)
    ap.add_argument("--link-parts", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", help="one run's name")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    roots = {"cora": a.cora_parts, "link": a.link_parts}
    for name, (root, part, ranks, flags) in RUNS.items():
        if a.only and name != a.only:
            continue
        parts = os.path.join(roots[root], part)
        plain, _ = train(a, name, parts, ranks, flags, 0)
        cached, stdout = train(a, name, parts, ranks, flags, 0.3)
        if plain is None or cached is None:
            continue
        epochs = [[r for r in run if r["type"] == "epoch"] for run in (plain, cached)]
        finals = [[r for r in run if r["type"] == "final"][0] for run in (plain, cached)]
        if len(epochs[0]) != 2 or len(epochs[1]) != 2:
            fail(f"{name}: {len(epochs[0])} and {len(epochs[1])} epoch records, 2 expected")
            continue
        for p, c in zip(*epochs):
            val = [k for k in p if k.startswith("val_")]
            for key in EPOCH_KEYS + val:
                if p.get(key) != c.get(key):
                    fail(f"{name} epoch {p['epoch']}: {key} {p.get(key)!r} without the cache, "
                         f"{c.get(key)!r} with it")
            if c["gpu_cache_hits"] <= 0 or p["gpu_cache_hits"] != 0:
                fail(f"{name} epoch {p['epoch']}: gpu_cache_hits {p['gpu_cache_hits']} without, "
                     f"{c['gpu_cache_hits']} with the cache")
            if ranks > 1 and not (c["remote_bytes"] < p["remote_bytes"]
                                  and c["gpu_cache_remote_hits"] > 0):
                fail(f"{name} epoch {p['epoch']}: remote_bytes {p['remote_bytes']} without, "
                     f"{c['remote_bytes']} with the cache ({c['gpu_cache_remote_hits']} "
                     "remote hits)")
        for key in FINAL_KEYS:
            if finals[0].get(key) != finals[1].get(key):
                fail(f"{name}: final {key} {finals[0].get(key)!r} without the cache, "
                     f"{finals[1].get(key)!r} with it")
        if finals[1]["gpu_cache_rows"] <= 0 or finals[0]["gpu_cache_rows"] != 0:
            fail(f"{name}: gpu_cache_rows {finals[0]['gpu_cache_rows']} without, "
                 f"{finals[1]['gpu_cache_rows']} with the cache")
        lines = [l for l in stdout.splitlines() if l.startswith("epoch=")]
        if len(lines) != 2 or not all(
                re.search(r" gpu_cache_hit_rate=0\.\d{4} remote_bytes=\d+$", l) for l in lines):
            fail(f"{name}: epoch lines do not end with the cache's figures: {lines}")
        print(f"ok {name}: losses {[e['loss'] for e in epochs[1]]}, hit rate "
              f"{[e['gpu_cache_hit_rate'] for e in epochs[1]]}, remote bytes "
              f"{[e['remote_bytes'] for e in epochs[0]]} -> "
              f"{[e['remote_bytes'] for e in epochs[1]]}", flush=True)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
