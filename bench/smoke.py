"""Smoke mode of the benchmarks: `--smoke` runs a benchmark at tiny sizes in a few seconds, on
a small graph made by `partita generate`, so that CTest (label bench_smoke, bench/CMakeLists.txt)
notices when a benchmark no longer runs. Its figures mean nothing."""
import os
import shutil
import subprocess

NODES = 3000  # the smoke graph: 3000 nodes, 16 features, 4 classes, 10 edges per node


def add_flag(ap):
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes, one run, a small generated graph: checks that the "
                    "benchmark runs (CTest label bench_smoke); the figures mean nothing")


def graph(partita, work, name="smoke-graph", extra=()):
    """Generates the smoke graph (again each time: it takes well under a second) under work;
    returns its directory. extra: more `partita generate` flags (--hetero mag ...)."""
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    subprocess.run([partita, "-q", "generate", "--out", out, "--nodes", str(NODES),
                    "--feat-dim", "16", "--classes", "4", "--seed", "1", "--threads", "1",
                    *extra], check=True, stdout=subprocess.DEVNULL)
    return out
