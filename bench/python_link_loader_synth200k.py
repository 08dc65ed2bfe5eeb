#!/usr/bin/env python3
"""Benchmark: the Python link loader's batches/s against its C++ pipeline alone, on synth200k.

synth200k (../shared/bench/synth200k.py; 200 K nodes, 4.0 M edges, 100 features),
partitioned into 2 METIS parts with `--edge-split 0.01,0.01` (bench/link_synth200k.py's
layout under --work), 2 ranks under mpirun. Per run, each rank goes through the first
--max-steps steps of an epoch of `partita.LinkNeighborLoader(fanouts=[15, 10, 5],
batch_size=2048, neg=1)` (2048 training pairs per global step, about 1024 per rank, one
uniform negative each, the global batch's pairs excluded both ways) twice: once inside C++
(`loader._c.drain()`: the pipeline samples and fetches every batch, removes its excluded
edges and converts it to tensors, as the C++ link task does in its step; none reaches
Python) and once as a Python `for batch in loader` that touches every batch's tensors (x,
edge_label_index, edge_label, every block's edge_index), the way a training loop does. The
difference is what Python adds. Prints one JSON object: the medians over --runs of both
loops' batches/s (rank 0), and the Python overhead per batch and as a share of the C++ time;
also each loop's CPU time (the rank process, all its threads: time.process_time()) and its
share; and the Python loop's wall time outside the C++ start/next/stop calls (the generator, the
batch object, touching its tensors: python_side_s), which bounds what Python adds to a
step and, unlike the difference of two wall times, holds still on a machine other jobs
share (python_side_share: as a share of the C++ loop's time); touch_s is the part of it
spent touching the tensors (block.edge_index stacks a copy of each block's edges;
python_side_untouched_share leaves it out: the generator, the batch objects and their
attributes). Never fails because a machine
is slow.

    python3 bench/python_link_loader_synth200k.py [--runs 5] [--max-steps 40] [--work DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RANK_SCRIPT = r"""
import json, sys, time
import torch
import partita
parts, runs, max_steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(1)
out = []


class Timed:  # forwards to the C++ loader, adding up the wall time inside start/next/stop

    def __init__(self, c):
        self.c, self.in_next = c, 0.0

    def timed(self, f, *args):
        start = time.monotonic()
        try:
            return f(*args)
        finally:
            self.in_next += time.monotonic() - start

    def start(self):
        return self.timed(self.c.start)

    def next(self, token):
        return self.timed(self.c.next, token)

    def stop(self, token=-1):
        return self.timed(self.c.stop, token)

    def __getattr__(self, name):
        return getattr(self.c, name)


with partita.DistGraph(parts) as g:
    rank = g.rank
    loader = partita.LinkNeighborLoader(g, fanouts=[15, 10, 5], batch_size=2048, neg=1,
                                        seed=0, max_steps=max_steps)
    for run in range(runs):
        g.barrier()
        start, cpu = time.monotonic(), time.process_time()
        batches = loader._c.drain()
        cpp_s, cpp_cpu_s = time.monotonic() - start, time.process_time() - cpu
        g.barrier()
        timed = loader._c = Timed(loader._c)
        start, cpu, touched = time.monotonic(), time.process_time(), 0
        touch_s = 0.0
        for batch in loader:
            touch = time.monotonic()
            touched += batch.x.shape[0] + batch.edge_label_index.shape[1]
            touched += batch.edge_label.shape[0]
            for block in batch.blocks:
                touched += block.edge_index.shape[1]
            touch_s += time.monotonic() - touch
        py_s, py_cpu_s = time.monotonic() - start, time.process_time() - cpu
        loader._c = timed.c
        out.append({"batches": batches, "cpp_s": cpp_s, "python_s": py_s,
                    "cpp_cpu_s": cpp_cpu_s, "python_cpu_s": py_cpu_s,
                    "python_side_s": py_s - timed.in_next, "touch_s": touch_s})
if rank == 0:
    print(json.dumps(out))
"""


def split_parts(a, env):
    """synth200k (generated once, as bench/train_synth200k.py does) and its 2-part split."""
    from train_synth200k import ensure
    ensure(a.partita, a.work, a.python, smoke_mode=a.smoke)
    dataset = os.path.join(a.work, "smoke-graph" if a.smoke else "synth200k")
    parts = os.path.join(a.work, "smoke-graph-parts2-split" if a.smoke else "synth200k-parts2-split")
    if a.smoke:
        shutil.rmtree(parts, ignore_errors=True)
    if not os.path.exists(os.path.join(parts, "partita.json")):
        subprocess.run([a.partita, "-q", "partition", "--dataset", dataset, "--num-parts", "2",
                        "--method", "metis", "--seed", "1", "--edge-split", "0.01,0.01",
                        "--out", parts], check=True, stdout=subprocess.DEVNULL, env=env)
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max-steps", type=int, default=40, help="steps per loop (0: the epoch)")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-synth200k"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3")
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import smoke
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:
        a.runs, a.max_steps = 1, 2
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.path.join(os.path.dirname(a.partita), "..", "..", "python"))
    parts = split_parts(a, env)
    out = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "-x", "PYTHONPATH",
                          a.python, "-c", RANK_SCRIPT, parts, str(a.runs), str(a.max_steps)],
                         check=True, capture_output=True, text=True, env=env).stdout
    runs = json.loads(out.strip().splitlines()[-1])
    for r in runs:
        r["cpp_batches_per_s"] = r["batches"] / r["cpp_s"]
        r["python_batches_per_s"] = r["batches"] / r["python_s"]
        r["overhead_per_batch_ms"] = 1e3 * (r["python_s"] - r["cpp_s"]) / r["batches"]
        r["overhead_share"] = (r["python_s"] - r["cpp_s"]) / r["cpp_s"]
        r["cpu_overhead_share"] = (r["python_cpu_s"] - r["cpp_cpu_s"]) / r["cpp_cpu_s"]
        r["python_side_share"] = r["python_side_s"] / r["cpp_s"]
        r["python_side_untouched_share"] = (r["python_side_s"] - r["touch_s"]) / r["cpp_s"]
    result = {"benchmark": "python_link_loader_synth200k", "ranks": 2, "fanouts": [15, 10, 5],
              "batch_size": 2048, "neg": 1, "max_steps": a.max_steps, "runs": a.runs}
    for key in ("batches", "cpp_s", "python_s", "cpp_batches_per_s", "python_batches_per_s",
                "overhead_per_batch_ms", "overhead_share", "cpp_cpu_s", "python_cpu_s",
                "cpu_overhead_share", "python_side_s", "python_side_share", "touch_s",
                "python_side_untouched_share"):
        result[key] = statistics.median(r[key] for r in runs)
    result["overhead_share_all"] = [round(r["overhead_share"], 4) for r in runs]
    result["cpu_overhead_share_all"] = [round(r["cpu_overhead_share"], 4) for r in runs]
    result["python_side_share_all"] = [round(r["python_side_share"], 4) for r in runs]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
