#!/usr/bin/env python3
"""Benchmark: which parts of a training step do not speed up with torch threads (issue 40).

One rank, synth200k 1 part (../shared/bench/synth200k.py, partitioned once under --work as
bench/train_synth200k.py does), GraphSAGE 3 x 256, fanouts 15,10,5, 1024 seeds, --max-steps
20, `--eval-every 0`, one sampler thread, `train --profile`, at 1 and at N torch threads
(--threads, default 2). The runs alternate between 1 and N threads so that a slow spell of a
shared machine hits both. From the profile's tables (docs/training.md, "Where a step's time
goes") it takes, per stage and per op (the ops in the top 15 of every run), the median over
--runs of ms per step at 1 and at N threads and their ratio (1-thread time / N-thread time):
an op whose ratio stays near 1 is serial (or bandwidth-bound) and bounds the step's speed-up.

Prints one JSON object: compute per step (forward, backward, optimizer: the metrics'
compute_s over the steps) at each thread count and its ratio, the stage and op rows sorted by
1-thread time, and `serial_ops`: the ops under 1.3x that cost at least 1 % of the 1-thread
step, costliest first. Never fails because a machine is slow.

    python3 bench/thread_ratio_synth200k.py [--runs 3] [--threads 2] [--precision fp32]
        [--work DIR] [--smoke]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import smoke
from cpu_features import NO_BF16, native_bf16
from train_synth200k import ROOT, SMOKE_MODEL, ensure, epoch_record

MODEL = ["--model", "sage", "--layers", "3", "--hidden", "256", "--fanouts", "15,10,5",
         "--epochs", "1", "--eval-every", "0", "--batch-size", "1024", "--max-steps", "20"]
SERIAL_RATIO = 1.3  # under it an op counts as serial
MIN_SHARE = 0.01  # ops cheaper than this share of the 1-thread step are not listed as serial

# "forward    4.150   45.0%    20   207.50" (stage names have spaces; the total row has no ms)
STAGE_ROW = re.compile(r"^(\S.*?)\s+([0-9.]+)\s+([0-9.]+)%\s+(\d+)\s+([0-9.]+)$")
# "aten::mm   4.846   52.5%   4.846   260   18636.9"
OP_ROW = re.compile(r"^(\S+)\s+([0-9.]+)\s+([0-9.]+)%\s+([0-9.]+)\s+(\d+)\s+([0-9.]+)$")


def parse_profile(text):
    """{stage: ms/step}, {op: self ms/step} from `train --profile`'s stderr."""
    stages, ops, steps, in_ops = {}, {}, None, False
    for line in text.splitlines():
        found = re.search(r"; (\d+) steps,", line)
        if line.startswith("profile:") and found:
            steps = int(found.group(1))
        if line.startswith("largest ops"):
            in_ops = True
            continue
        m = OP_ROW.match(line) if in_ops else STAGE_ROW.match(line)
        if in_ops and m:
            ops[m.group(1)] = 1e3 * float(m.group(2)) / max(steps or 1, 1)
        elif not in_ops and m:
            stages[m.group(1)] = float(m.group(5))
    if not stages or not ops:
        raise RuntimeError("no profile tables in partita's output:\n" + text[-2000:])
    return stages, ops


def run(a, parts, torch_threads):
    metrics = os.path.join(a.work, "thread-ratio-metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = [a.partita, "-q", "train", "--parts", parts] + MODEL + [
        "--threads", "1", "--torch-threads", str(torch_threads), "--precision", a.precision,
        "--profile", "--metrics-out", metrics] + (SMOKE_MODEL if a.smoke else [])
    p = subprocess.run(cmd, check=True, capture_output=True, text=True)
    stages, ops = parse_profile(p.stderr)
    e = epoch_record(metrics)
    return {"compute_ms": 1e3 * e["compute_s"] / max(e.get("steps") or 1, 1),
            "stages": stages, "ops": ops}


def side_by_side(runs_1, runs_n, key):
    """Rows {name, ms_1, ms_n, ratio} for the names present in every run, by ms_1."""
    names = set.intersection(*(set(r[key]) for r in runs_1 + runs_n))
    rows = []
    for name in names:
        one = statistics.median(r[key][name] for r in runs_1)
        many = statistics.median(r[key][name] for r in runs_n)
        rows.append({"name": name, "ms_1": round(one, 2), "ms_n": round(many, 2),
                     "ratio": round(one / many, 3) if many > 0 else None})
    return sorted(rows, key=lambda x: -x["ms_1"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="N: the torch threads against 1")
    ap.add_argument("--precision", default="fp32", help="fp32, or bf16 (needs native bf16)")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-synth200k"),
                    help="holds (or gets) synth200k and its 1-part partition")
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter with numpy, to generate the graph")
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.precision not in ("fp32", "bf16"):
        sys.exit(f"error: --precision {a.precision}: fp32 or bf16")
    if a.precision == "bf16" and not native_bf16():
        sys.exit(f"error: --precision bf16: {NO_BF16}; use --precision fp32")
    if a.threads < 2:
        sys.exit(f"error: --threads {a.threads}: at least 2")
    if a.runs < 1:
        sys.exit(f"error: --runs {a.runs}: at least 1")
    if a.smoke:
        a.runs = 1
    os.makedirs(a.work, exist_ok=True)
    parts = ensure(a.partita, a.work, a.python, smoke_mode=a.smoke, num_parts=1)

    runs_1, runs_n = [], []
    for i in range(a.runs):  # alternating: a slow spell hits both thread counts
        runs_1.append(run(a, parts, 1))
        runs_n.append(run(a, parts, a.threads))
        print(f"run {i + 1}/{a.runs}: compute {runs_1[-1]['compute_ms']:.1f} ms/step at 1 thread, "
              f"{runs_n[-1]['compute_ms']:.1f} at {a.threads}", file=sys.stderr)
    c1 = statistics.median(r["compute_ms"] for r in runs_1)
    cn = statistics.median(r["compute_ms"] for r in runs_n)
    stages = side_by_side(runs_1, runs_n, "stages")
    ops = side_by_side(runs_1, runs_n, "ops")
    serial = [o["name"] for o in ops
              if o["ratio"] is not None and o["ratio"] < SERIAL_RATIO and o["ms_1"] >= MIN_SHARE * c1]
    print(json.dumps({
        "benchmark": "thread_ratio_synth200k", "precision": a.precision, "threads": a.threads,
        "runs": a.runs, "smoke": a.smoke, "model": "sage 3x256", "fanouts": [15, 10, 5],
        "seeds": 256 if a.smoke else 1024, "steps": 2 if a.smoke else 20,
        "compute_ms_per_step": {"1": round(c1, 2), str(a.threads): round(cn, 2),
                                "ratio": round(c1 / cn, 3) if cn else None,
                                "all_1": [round(r["compute_ms"], 2) for r in runs_1],
                                "all_n": [round(r["compute_ms"], 2) for r in runs_n]},
        "stages_ms_per_step": stages, "ops_self_ms_per_step": ops,
        "serial_ops": serial}, indent=2))


if __name__ == "__main__":
    main()
