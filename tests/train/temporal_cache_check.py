#!/usr/bin/env python3
"""`partita train --temporal` with the feature caches changes no number (issue 41): the
caches choose their rows by a pre-sampling without times, and which rows are held locally
decides no result. Runs, each with TRAIN_FLAGS (which carry --temporal, and --host-local off
so that rows travel between ranks): 1 rank (1 part) without a cache and with
`--gpu-cache-ratio 0.3`; 2 ranks (2 parts) without a cache, with `--cache-ratio 0.3` and with
`--gpu-cache-ratio 0.3`.
Every epoch's loss, train accuracy and validation figures and the final test accuracy of a
cached run equal the uncached run's on as many ranks, bit for bit (as --metrics-out writes
them); the cached run holds rows and hits them every epoch, the uncached one does not.

    temporal_cache_check.py PARTITA MPIRUN PARTS1 PARTS2 WORKDIR -- TRAIN_FLAGS...

Exit 0 when all of that holds; otherwise prints what does not and exits 1.
"""
import os
import subprocess
import sys

from compare_runs import read as read_metrics

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# cache flag -> (final record's rows key, epoch record's hits key)
CACHES = {"--cache-ratio": ("cache_rows", "cache_hits"),
          "--gpu-cache-ratio": ("gpu_cache_rows", "gpu_cache_hits")}
# ranks -> the caches tried (the host cache serves remote rows only: none on one rank)
RUNS = {1: ["--gpu-cache-ratio"], 2: ["--cache-ratio", "--gpu-cache-ratio"]}


def train(partita, mpirun, parts, ranks, out, extra, flags):
    cmd = [partita, "-q", "train", "--parts", parts, "--force", "--metrics-out", out] + flags
    cmd += extra if "--gpu-cache-ratio" in extra else extra + ["--gpu-cache-ratio", "0"]
    if ranks > 1:
        cmd = [mpirun, "-np", str(ranks), "--oversubscribe"] + cmd
    run = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {run.returncode}\n{run.stdout[-3000:]}")
    epochs, final = read_metrics(out)
    if not epochs:
        sys.exit(f"{out}: no epoch record")
    return epochs, final


def main():
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    if cut != 5 or "--temporal" not in argv[cut + 1:]:
        sys.exit(__doc__)
    partita, mpirun, parts1, parts2, work = argv[:cut]
    flags = argv[cut + 1:]
    os.makedirs(work, exist_ok=True)
    problems = []
    for ranks, caches in RUNS.items():
        parts = parts1 if ranks == 1 else parts2
        plain_epochs, plain = train(partita, mpirun, parts, ranks, f"{work}/np{ranks}-plain.jsonl",
                                    [], flags)
        for cache in caches:
            rows_key, hits_key = CACHES[cache]
            name = f"np{ranks} {cache} 0.3"
            epochs, final = train(partita, mpirun, parts, ranks,
                                  f"{work}/np{ranks}{cache.replace('-', '_')}.jsonl",
                                  [cache, "0.3"], flags)
            if len(epochs) != len(plain_epochs):
                problems.append(f"{name}: {len(epochs)} epochs, {len(plain_epochs)} without")
            for p, c in zip(plain_epochs, epochs):
                keys = ["loss", "train_acc", "steps", "seeds"] + [k for k in p if k.startswith("val_")]
                for key in keys:
                    if p.get(key) != c.get(key):
                        problems.append(f"{name} epoch {p['epoch']}: {key} {p.get(key)!r} "
                                        f"without the cache, {c.get(key)!r} with it")
                if not (c.get(hits_key, 0) > 0 and p.get(hits_key, 0) == 0):
                    problems.append(f"{name} epoch {p['epoch']}: {hits_key} {p.get(hits_key)} "
                                    f"without, {c.get(hits_key)} with the cache")
            if plain.get("test_acc") != final.get("test_acc"):
                problems.append(f"{name}: test_acc {plain.get('test_acc')!r} without the "
                                f"cache, {final.get('test_acc')!r} with it")
            if not (final.get(rows_key, 0) > 0 and plain.get(rows_key, 0) == 0):
                problems.append(f"{name}: {rows_key} {plain.get(rows_key)} without, "
                                f"{final.get(rows_key)} with the cache")
            print(f"{name}: losses {[e['loss'] for e in epochs]} "
                  f"({'equal' if [e['loss'] for e in epochs] == [e['loss'] for e in plain_epochs] else 'DIFFERENT'}), "
                  f"{rows_key} {final.get(rows_key)}, {hits_key} {[e.get(hits_key) for e in epochs]}",
                  flush=True)
    for p in problems:
        print("mismatch:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
