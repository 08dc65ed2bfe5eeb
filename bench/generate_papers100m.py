"""papers100M-shaped graphs written in the chunked layout by `mpirun -np R partita generate
--shape papers100m --scale S` (docs/dataset-format.md): wall time, every rank's peak RSS and
the bytes written, per scale, as one JSON object.

Each rank builds the model's per-node tables and writes its own chunks, so peak memory per
rank grows with the node count (about 58 bytes a node over the ~170 MiB of the process) and
not with the edges or features; the outputs are deleted after each scale unless --keep.

    python3 bench/generate_papers100m.py --partita build/src/cli/partita --work /tmp/pap \\
        --scales 0.025,0.05,0.1 --ranks 4
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
SUMMARY = re.compile(r"\): (\d+) nodes, (\d+) edges, (\w+) features, ([\d.]+) (\w+) written in "
                     r"([\d.]+) s; peak RSS per rank: (.*)$")


def to_bytes(text):
    value, unit = text.split()
    return int(float(value) * UNITS[unit])


def run(partita, work, scale, ranks):
    out = os.path.join(work, f"papers100m-{scale}")
    shutil.rmtree(out, ignore_errors=True)
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), partita, "generate", "--shape",
           "papers100m", "--scale", str(scale), "--out", out]
    start = time.time()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.time() - start
    lines = [m for m in map(SUMMARY.search, done.stdout.splitlines()) if m]
    if not lines:
        sys.exit("no summary line in:\n" + done.stdout + done.stderr)
    m = lines[-1]
    return out, {
        "scale": scale, "ranks": ranks, "nodes": int(m.group(1)), "edges": int(m.group(2)),
        "feature_dtype": m.group(3),
        "bytes_written": int(float(m.group(4)) * UNITS[m.group(5)]),
        "generate_s": float(m.group(6)), "wall_s": round(wall, 2),
        "peak_rss_bytes_per_rank": [to_bytes(t) for t in m.group(7).split(", ")],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--partita", required=True)
    p.add_argument("--work", required=True, help="output directories go here")
    p.add_argument("--scales", default="0.025,0.05,0.1")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--keep", action="store_true", help="keep the generated datasets")
    smoke.add_flag(p)
    a = p.parse_args()
    scales = [2e-5] if a.smoke else [float(s) for s in a.scales.split(",")]
    ranks = 2 if a.smoke else a.ranks
    os.makedirs(a.work, exist_ok=True)
    results = []
    for scale in scales:
        out, figures = run(a.partita, a.work, scale, ranks)
        results.append(figures)
        if not a.keep:
            shutil.rmtree(out, ignore_errors=True)
    print(json.dumps({"benchmark": "generate_papers100m", "runs": results}, indent=1))


if __name__ == "__main__":
    main()
