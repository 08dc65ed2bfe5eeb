#!/usr/bin/env python3
"""Benchmark: rank/thread layouts on synth200k at this host's core count (issue 23).

synth200k (../shared/bench/synth200k.py: 200 K nodes, 4.0 M edges, 100 features, 47
classes), GraphSAGE 3 x 256, fanouts 15,10,5, one epoch, `--eval-every 0` (the test accuracy
after it is reported). For each layout of R ranks in {1, 2, 4, ..., cores} on this host, each
rank with cores/R torch threads and the launch rule's sampler threads (one per 8 cores of a
rank, 1 to 4), run through `partita launch --procs-per-host R` (each rank bound to its cores):
  - at the same global batch: --batch-size 4096 (4096/R seeds per rank per step, 25 steps per
    epoch for any R; `train --batch-size` is global, summed over the ranks), and
  - at 1024 seeds per rank: --batch-size 1024*R (fewer, larger steps as R grows; the setting
    of the issue's 16-core table).
Ranks need R parts: --parts-mode metis uses an R-part METIS partition (made under --work once,
named synth200k-partsR as bench/train_synth200k.py names its own); --parts-mode replicated
runs every R on the 1-part directory (each rank holds the whole graph, as launch runs a 1-part
directory on several sockets or hosts). Then one rank on the 1-part partition, 20 steps (`--max-steps 20`) at
1, 2, 4, ..., cores torch threads: compute per step (forward, backward, optimizer).

Prints one JSON object: per layout and batch setting the medians over --runs of epoch seconds,
the per-stage seconds of rank 0 (sample, fetch, compute, allreduce, wait; sample and fetch run
on the loader's threads, overlapping compute), steps and test accuracy; per thread count the
compute per step; and the fastest layout per batch setting. Runs alternate between layouts so
that a slow spell of a shared machine hits them all. Never fails because a machine is slow.

    python3 bench/scaling_synth200k.py [--runs 3] [--precision bf16] [--cores N]
        [--batch global,per-rank] [--parts-mode metis|replicated] [--work DIR] [--smoke]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import smoke
from cpu_features import NO_BF16, native_bf16
from train_synth200k import ROOT, SMOKE_MODEL, ensure, epoch_record

MODEL = ["--model", "sage", "--layers", "3", "--hidden", "256", "--fanouts", "15,10,5",
         "--epochs", "1", "--eval-every", "0"]
GLOBAL_BATCH = 4096
PER_RANK_BATCH = 1024
STAGES = ["sample_s", "fetch_s", "compute_s", "allreduce_s", "wait_s"]


def physical_cores():
    """Distinct physical cores among the CPUs this process may use (as partita launch counts
    them): (package, core) pairs from sysfs, else the CPU count."""
    cpus = sorted(os.sched_getaffinity(0))
    cores = set()
    for cpu in cpus:
        topo = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(topo + "core_id") as f, open(topo + "physical_package_id") as g:
                cores.add((g.read().strip(), f.read().strip()))
        except OSError:
            return len(cpus)
    return len(cores)


def powers_up_to(n):
    out, r = [], 1
    while r < n:
        out.append(r)
        r *= 2
    return out + [n]


def sampler_threads(cores_per_rank):  # launch's rule (src/cli/launch_layout.cc)
    return min(max(cores_per_rank // 8, 1), 4)


def train(a, parts, ranks, torch_threads, threads, batch_size, extra, env):
    """One `partita launch ... -- train` run; returns the epoch record and test accuracy."""
    metrics = os.path.join(a.work, "scaling-metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = [a.partita, "-q", "launch", "--procs-per-host", str(ranks)]
    if ranks > a.cores:
        cmd += ["--bind", "none"]
    cmd += ["--", "train", "--parts", parts] + MODEL + [
        "--batch-size", str(batch_size), "--precision", a.precision,
        "--torch-threads", str(torch_threads), "--threads", str(threads),
        "--metrics-out", metrics] + extra + (SMOKE_MODEL[:4] if a.smoke else [])
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    command_s = time.monotonic() - start
    e = epoch_record(metrics)
    found = re.findall(r"test_acc=([0-9.]+)", out)
    rec = {"epoch_s": e["epoch_s"], "steps": e.get("steps"), "command_s": command_s,
           "test_acc": float(found[-1]) if found else None}
    rec.update({k: e[k] for k in STAGES})
    return rec


def medians(runs):
    return {k: statistics.median(r[k] for r in runs) if all(r[k] is not None for r in runs)
            else None for k in runs[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--precision", default="",
                    help="fp32 or bf16 (default: bf16 where the CPU has it natively, else fp32)")
    ap.add_argument("--cores", type=int, default=0,
                    help="cores to lay out (default: the physical cores this process may use)")
    ap.add_argument("--ranks", default="",
                    help="rank counts to run, comma-separated (default: 1, 2, 4, ..., cores)")
    ap.add_argument("--batch", default="global,per-rank",
                    help="global: --batch-size 4096 for every R; per-rank: 1024 seeds per rank")
    ap.add_argument("--global-batch", type=int, default=GLOBAL_BATCH,
                    help="seeds per step summed over the ranks, for --batch global")
    ap.add_argument("--parts-mode", choices=["metis", "replicated"], default="metis")
    ap.add_argument("--skip-compute", action="store_true",
                    help="skip the per-step compute at 1..cores torch threads")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-synth200k"),
                    help="holds (or gets) synth200k and its partitions (e.g. /work/bench-work)")
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter with numpy, to generate the graph")
    smoke.add_flag(ap)
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("error: mpirun not found")
    if not a.precision:
        a.precision = "bf16" if native_bf16() else "fp32"
    elif a.precision == "bf16" and not native_bf16():
        sys.exit(f"error: --precision bf16: {NO_BF16}; use --precision fp32")
    a.cores = a.cores or physical_cores()
    if a.smoke:  # 2 layouts at the global batch, compute at one thread count: 3 launches
        a.runs, a.cores, a.batch = 1, min(a.cores, 2), "global"
    rank_counts = ([int(r) for r in a.ranks.split(",")] if a.ranks else powers_up_to(a.cores))
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    one_part = ensure(a.partita, a.work, a.python, smoke_mode=a.smoke, num_parts=1)
    parts = {}
    for r in rank_counts:
        if a.parts_mode == "replicated" or r == 1:
            parts[r] = one_part
        else:
            parts[r] = ensure(a.partita, a.work, a.python, smoke_mode=a.smoke, num_parts=r)

    settings = []
    for batch in a.batch.split(","):
        for r in rank_counts:
            size = a.global_batch if batch == "global" else PER_RANK_BATCH * r
            if a.smoke:
                size = 256 if batch == "global" else 128 * r
            per_rank = max(a.cores // r, 1)
            settings.append({"batch": batch, "ranks": r, "batch_size": size,
                             "torch_threads": per_rank, "sampler_threads": sampler_threads(per_rank)})
    runs = [[] for _ in settings]
    for i in range(a.runs):
        for k, s in enumerate(settings):  # interleaved: a slow spell hits every layout
            runs[k].append(train(a, parts[s["ranks"]], s["ranks"], s["torch_threads"],
                                 s["sampler_threads"], s["batch_size"], [], env))
            print(f"run {i + 1}/{a.runs}: {s['ranks']} ranks x {s['torch_threads']} threads, "
                  f"batch {s['batch_size']}: epoch {runs[k][-1]['epoch_s']:.2f} s",
                  file=sys.stderr)
    layouts = []
    for s, r in zip(settings, runs):
        row = dict(s, **medians(r))
        row["epoch_s_all"] = [round(x["epoch_s"], 3) for x in r]
        layouts.append(row)

    compute = []
    if not a.skip_compute:
        steps = 2 if a.smoke else 20
        threads = [1] if a.smoke else powers_up_to(a.cores)
        per_thread = {t: [] for t in threads}
        for i in range(a.runs):
            for t in threads:
                rec = train(a, one_part, 1, t, 1, PER_RANK_BATCH if not a.smoke else 128,
                            ["--max-steps", str(steps)], env)
                per_thread[t].append(rec["compute_s"] / max(rec["steps"] or steps, 1))
        one = statistics.median(per_thread[1])
        for t in threads:
            ms = statistics.median(per_thread[t])
            compute.append({"torch_threads": t, "compute_ms_per_step": round(1e3 * ms, 2),
                            "speedup_over_1_thread": round(one / ms, 3) if ms else None,
                            "compute_ms_all": [round(1e3 * x, 2) for x in per_thread[t]]})

    best = {}
    for batch in a.batch.split(","):
        rows = [x for x in layouts if x["batch"] == batch]
        fastest = min(rows, key=lambda x: x["epoch_s"])
        best[batch] = {"ranks": fastest["ranks"], "torch_threads": fastest["torch_threads"],
                       "epoch_s": fastest["epoch_s"]}
    print(json.dumps({
        "benchmark": "scaling_synth200k", "cores": a.cores, "precision": a.precision,
        "model": "sage 3x256", "fanouts": [15, 10, 5], "parts_mode": a.parts_mode,
        "runs": a.runs, "smoke": a.smoke, "layouts": layouts,
        "compute_per_step_one_rank": {"steps": 2 if a.smoke else 20, "seeds": PER_RANK_BATCH,
                                      "by_threads": compute},
        "fastest": best}, indent=2))


if __name__ == "__main__":
    main()
