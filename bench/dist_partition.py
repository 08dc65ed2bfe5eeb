#!/usr/bin/env python3
"""Benchmark: `partita partition` across ranks (mpirun) against single-process METIS.

(a) products-scale (`generate --nodes 2400000 --avg-degree 26 --feat-dim 100`): R ranks
    distributed (--dist-partitioner: coarse or PT-Scotch) against single-process METIS into the same number of parts:
    wall time, edge cut ratio (distributed / METIS), total peak RSS of all ranks over the
    input .npy bytes (edges + features), medians of --runs runs.
(b) papers100M-shaped graphs (`generate --shape papers100m --scale S`, chunked layout,
    written by R ranks) at each --scales, partitioned --undirected (papers100M's 1.6 B
    listed edges are 3.2 B directed ones) by R ranks into R parts: time, peak RSS per rank,
    edge cut, then `partita info --verify`.

Every figure is the median of --runs runs (per-rank peaks: per rank); each run's load
average (`uptime`'s 1-minute figure, at its start) is listed, since a shared machine slows
it. Prints one JSON object. Never fails because a machine is slow; it fails only if a
command fails. `--only products` / `--only papers` runs one half. `--smoke`: tiny sizes, one
run (CTest bench_smoke_dist_partition_py).

    python3 bench/dist_partition.py [--ranks 4] [--runs 3] [--scales 0.025,0.05,0.1]
        [--threads 1]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mpirun(ranks):
    return ["mpirun", "--oversubscribe", "-np", str(ranks)]


def run(cmd, quiet=True):
    """Runs cmd; returns wall seconds."""
    print("+ " + " ".join(cmd), file=sys.stderr)
    start = time.monotonic()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL if quiet else None, env=env)
    return time.monotonic() - start


def npy_bytes(path):
    """Bytes of every .npy file under path (a dataset's input arrays)."""
    total = 0
    for d, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(d, f)) for f in files if f.endswith(".npy"))
    return total


def summary_of(out):
    with open(os.path.join(out, "partita.json")) as f:
        return json.load(f)["summary"]


def load_average():
    """The 1-minute load average now (the machine may be shared)."""
    return round(os.getloadavg()[0], 2)


def median_phases(runs):
    """Per phase, the median of its seconds over the runs' phase_seconds."""
    phases = {}
    for p in runs:
        for k, v in p.items():
            phases.setdefault(k, []).append(v)
    return {k: round(statistics.median(v), 3) for k, v in phases.items()}


def partition(a, dataset, out, ranks, parts, method, extra=()):
    """One partition run; returns (seconds, summary, load average at its start)."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [a.partita, "--quiet", "partition", "--dataset", dataset, "--num-parts", str(parts),
           "--method", method, "--seed", "1", "--out", out, *extra]
    if ranks > 1 and method == "metis":
        cmd += ["--dist-partitioner", a.dist_partitioner]
    if ranks > 1 and a.threads > 0:
        cmd += ["--threads", str(a.threads)]
    load = load_average()
    seconds = run((mpirun(ranks) if ranks > 1 else []) + cmd)
    return seconds, summary_of(out), load


def products(a):
    dataset = os.path.join(a.work, f"products-{a.nodes}")
    if not os.path.exists(os.path.join(dataset, "edges.npy")):
        run([a.partita, "--quiet", "generate", "--nodes", str(a.nodes), "--avg-degree",
             str(a.avg_degree), "--feat-dim", str(a.feat_dim), "--classes", "47", "--seed", "1",
             "--out", dataset])
    input_bytes = npy_bytes(dataset)
    res = {"nodes": a.nodes, "avg_degree": a.avg_degree, "feat_dim": a.feat_dim,
           "ranks": a.ranks, "parts": a.ranks, "runs": a.runs, "input_npy_bytes": input_bytes}
    res["distributed_method"] = a.dist_method
    res["dist_partitioner"] = a.dist_partitioner
    sides = [("metis_single", 1, "metis"), ("distributed", a.ranks, a.dist_method)]
    for name, ranks, method in sides[1:] if a.skip_single else sides:
        times, rss, cuts, phases, loads = [], [], [], [], []
        for _ in range(a.runs):
            seconds, s, load = partition(a, dataset, os.path.join(a.work, f"parts-{name}"),
                                         ranks, a.ranks, method,
                                         ["--undirected"] if a.undirected else [])
            times.append(seconds)
            rss.append(sum(s.get("rank_peak_rss_bytes", [s["peak_rss_bytes"]])))
            cuts.append(s["edge_cut_fraction"])
            phases.append(s["phase_seconds"])
            loads.append(load)
        res[name] = {
            "wall_s_median": round(statistics.median(times), 2),
            "wall_s": [round(t, 2) for t in times],
            "load_average": loads,
            "phase_s_median": median_phases(phases),
            "total_peak_rss_bytes_median": statistics.median(rss),
            "total_peak_rss_over_input": round(statistics.median(rss) / input_bytes, 3),
            "edge_cut_fraction": round(statistics.median(cuts), 5),
            "imbalance": s["imbalance"],
        }
    if "metis_single" in res:
        res["edge_cut_ratio_distributed_over_metis"] = round(
            res["distributed"]["edge_cut_fraction"] / res["metis_single"]["edge_cut_fraction"],
            4)
    return res


def papers(a):
    out = []
    for scale in a.scales:
        dataset = os.path.join(a.work, f"papers-{scale}")
        if not os.path.exists(os.path.join(dataset, "manifest.json")):
            shutil.rmtree(dataset, ignore_errors=True)
            gen_s = run(mpirun(a.ranks) + [a.partita, "--quiet", "generate", "--shape",
                                           "papers100m", "--scale", str(scale), "--seed", "1",
                                           "--out", dataset])
        else:
            gen_s = None
        parts = os.path.join(a.work, f"papers-{scale}-parts")
        times, rss, cuts, phases, loads = [], [], [], [], []
        for _ in range(a.runs):
            seconds, s, load = partition(a, dataset, parts, a.ranks, a.ranks, a.method,
                                         ["--undirected"])
            times.append(seconds)
            rss.append(s["rank_peak_rss_bytes"])
            cuts.append(s["edge_cut_fraction"])
            phases.append(s["phase_seconds"])
            loads.append(load)
        verify_s = run([a.partita, "--quiet", "info", "--verify", parts])
        with open(os.path.join(parts, "partita.json")) as f:
            meta = json.load(f)
        out.append({
            "scale": scale, "nodes": meta["num_nodes"], "edges": meta["num_edges"],
            "input_npy_bytes": npy_bytes(dataset), "generate_s": gen_s and round(gen_s, 2),
            "method": a.method, "ranks": a.ranks, "parts": a.ranks, "runs": a.runs,
            "wall_s_median": round(statistics.median(times), 2),
            "wall_s": [round(t, 2) for t in times],
            "load_average": loads,
            "phase_s_median": median_phases(phases),
            "rank_peak_rss_bytes_median": [int(statistics.median(r)) for r in zip(*rss)],
            "edge_cut_fraction": round(statistics.median(cuts), 5),
            "imbalance": s["imbalance"],
            "verify_s": round(verify_s, 2), "verified": True,
        })
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=2_400_000)
    p.add_argument("--avg-degree", type=float, default=26)
    p.add_argument("--feat-dim", type=int, default=100)
    p.add_argument("--undirected", action="store_true")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--scales", default="0.025,0.05,0.1")
    p.add_argument("--method", default="metis", help="papers100M-shaped runs: metis or random")
    p.add_argument("--dist-method", default="metis",
                   help="products-scale distributed runs: metis (PT-Scotch) or random")
    p.add_argument("--dist-partitioner", default="coarse", choices=["coarse", "ptscotch"],
                   help="distributed metis runs: the coarse partitioner or PT-Scotch")
    p.add_argument("--threads", type=int, default=0,
                   help="--threads of each rank under mpirun (0: partita's default)")
    p.add_argument("--skip-single", action="store_true",
                   help="products-scale: run the distributed side only")
    p.add_argument("--only", choices=["products", "papers"])
    p.add_argument("--work", default=os.path.join(ROOT, "out", "bench-dist-partition"))
    p.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    smoke.add_flag(p)
    a = p.parse_args()
    a.scales = [float(s) for s in a.scales.split(",") if s]
    if a.smoke:
        # Two runs, so that the medians are taken.
        a.nodes, a.runs, a.ranks, a.scales, a.feat_dim = smoke.NODES, 2, 2, [0.0002], 16
    os.makedirs(a.work, exist_ok=True)
    result = {"benchmark": "dist_partition"}
    if a.only != "papers":
        result["products"] = products(a)
    if a.only != "products":
        result["papers100m_shaped"] = papers(a)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
