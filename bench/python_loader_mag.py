#!/usr/bin/env python3
"""Benchmark: the Python loader's typed batches/s against the C++ pipeline alone, on a
generated ogbn-mag-shaped graph.

`partita generate --hetero mag --nodes N --seed 0` (author, field_of_study, institution,
paper; features on papers only; default N 200000), partitioned into 2 METIS parts under
--work once, 2 ranks under mpirun. Per run, each rank iterates one epoch of
`partita.NeighborLoader(fanouts=[25, 20], batch_size=1024)` (a typed loader: per-type inputs
and per-relation blocks) twice: once inside C++ (`loader._c.drain()`: the pipeline builds
every batch and splits it into its relations, none reaches Python) and once as a Python `for
batch in loader` that touches every batch's tensors (every type's x and ids, y, every block's
every relation's edge_index), the way a training loop does. The difference is what Python
adds; the two epochs alternate in order from run to run. Prints one JSON object (rank 0):
the medians over --runs of both epochs' batches/s, the Python overhead per batch and as a
share of the C++ wall time, and the same share of the process's CPU time (sampler threads
included), which a machine loaded by other work disturbs less than wall time; and, from a
third epoch, the CPU time the main thread spends in Python outside the C++ next() (the
HeteroBatch wrappers and the touching loop) per batch and as a share of the C++ epoch's CPU
time: the direct measure of what Python adds, the steadiest of the three. Never fails
because a machine is slow.

    python3 bench/python_loader_mag.py [--runs 5] [--nodes 200000] [--work DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RANK_SCRIPT = r"""
import json, sys, time
import torch
import partita
parts, runs = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(1)
out = []

def cpp_epoch():
    return loader._c.drain()


def python_epoch():
    touched = 0
    for batch in loader:
        touched += batch.y.shape[0]
        for t, x in batch.x_dict.items():
            touched += x.shape[0]
        for t, ids in batch.n_id_dict.items():
            touched += ids.shape[0]
        for block in batch.blocks:
            for edge_index in block.edge_index_dict.values():
                touched += edge_index.shape[1]


# The Python epoch again, counting the main thread's CPU time outside the C++ next() (which
# waits for the pipeline and converts the batch, as drain() does): what Python itself spends
# per epoch (the HeteroBatch wrappers and the touching loop).
def python_own_cpu():
    token = loader._c.start()
    own, batches = 0.0, 0
    mark = time.thread_time()
    while True:
        own += time.thread_time() - mark
        raw = loader._c.next(token)
        mark = time.thread_time()
        if raw is None:
            return own, batches
        batches += 1
        batch = partita.hetero.HeteroBatch(raw, loader._schema)  # as the loader's __iter__
        touched = batch.y.shape[0]
        for t, x in batch.x_dict.items():
            touched += x.shape[0]
        for t, ids in batch.n_id_dict.items():
            touched += ids.shape[0]
        for block in batch.blocks:
            for edge_index in block.edge_index_dict.values():
                touched += edge_index.shape[1]


def timed(epoch):
    g.barrier()
    wall, cpu = time.monotonic(), time.process_time()
    batches = epoch()
    return batches, time.monotonic() - wall, time.process_time() - cpu


with partita.DistGraph(parts) as g:
    rank = g.rank
    loader = partita.NeighborLoader(g, fanouts=[25, 20], batch_size=1024, seed=0)
    for run in range(runs):
        # Alternating which epoch goes first cancels a drift of the machine's load.
        first, second = (cpp_epoch, python_epoch) if run % 2 == 0 else (python_epoch, cpp_epoch)
        a, b = timed(first), timed(second)
        cpp, py = (a, b) if run % 2 == 0 else (b, a)
        own_cpu_s, _ = python_own_cpu()
        out.append({"batches": cpp[0], "cpp_s": cpp[1], "python_s": py[1],
                    "cpp_cpu_s": cpp[2], "python_cpu_s": py[2], "python_own_cpu_s": own_cpu_s})
if rank == 0:
    print(json.dumps(out))
"""


def ensure(partita, work, nodes):
    """The generated graph and its 2-part METIS partition under `work` (made once)."""
    dataset = os.path.join(work, f"mag{nodes}")
    parts = os.path.join(work, f"mag{nodes}-2")
    if not os.path.exists(os.path.join(dataset, "hetero.json")) and not os.path.isdir(parts):
        subprocess.run([partita, "-q", "generate", "--hetero", "mag", "--nodes", str(nodes),
                        "--seed", "0", "--out", dataset], check=True)
    if not os.path.exists(os.path.join(parts, "partita.json")):
        subprocess.run([partita, "-q", "partition", "--dataset", dataset, "--num-parts", "2",
                        "--out", parts], check=True)
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=200000)
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-mag"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--python", default="/usr/bin/python3")
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import smoke
    smoke.add_flag(ap)
    a = ap.parse_args()
    if a.smoke:
        a.runs, a.nodes = 1, 5000
    os.makedirs(a.work, exist_ok=True)
    parts = ensure(a.partita, a.work, a.nodes)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.path.join(os.path.dirname(a.partita), "..", "..", "python"))
    out = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "-x", "PYTHONPATH",
                          a.python, "-c", RANK_SCRIPT, parts, str(a.runs)],
                         check=True, capture_output=True, text=True, env=env).stdout
    runs = json.loads(out.strip().splitlines()[-1])
    for r in runs:
        r["cpp_batches_per_s"] = r["batches"] / r["cpp_s"]
        r["python_batches_per_s"] = r["batches"] / r["python_s"]
        r["overhead_per_batch_ms"] = 1e3 * (r["python_s"] - r["cpp_s"]) / r["batches"]
        r["overhead_share"] = (r["python_s"] - r["cpp_s"]) / r["cpp_s"]
        r["cpu_overhead_share"] = (r["python_cpu_s"] - r["cpp_cpu_s"]) / r["cpp_cpu_s"]
        r["python_own_cpu_per_batch_ms"] = 1e3 * r["python_own_cpu_s"] / r["batches"]
        r["python_own_cpu_share"] = r["python_own_cpu_s"] / r["cpp_cpu_s"]
    result = {"benchmark": "python_loader_mag", "nodes": a.nodes, "ranks": 2,
              "fanouts": [25, 20], "batch_size": 1024, "runs": a.runs}
    for key in ("batches", "cpp_s", "python_s", "cpp_batches_per_s", "python_batches_per_s",
                "overhead_per_batch_ms", "overhead_share", "cpp_cpu_s", "python_cpu_s",
                "cpu_overhead_share", "python_own_cpu_s", "python_own_cpu_per_batch_ms",
                "python_own_cpu_share"):
        result[key] = statistics.median(r[key] for r in runs)
    result["overhead_share_all"] = [round(r["overhead_share"], 4) for r in runs]
    result["cpu_overhead_share_all"] = [round(r["cpu_overhead_share"], 4) for r in runs]
    result["python_own_cpu_share_all"] = [round(r["python_own_cpu_share"], 4) for r in runs]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
