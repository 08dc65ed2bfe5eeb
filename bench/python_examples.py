#!/usr/bin/env python3
"""Benchmark: the test figures of the Python examples (examples/python/), next to the C++
trainer's for the same recipe: the figures of the README's "Python package" section and of
docs/python.md.

Every run is `mpirun -np 2` with PYTHONPATH=build/python (the build tree's package), on 2
METIS parts:
  train_cora   examples/python/train_cora.py --parts P --seed S (its defaults: GraphSAGE 2x64,
               fanouts 10,10, Adam 0.003, 30 epochs), seeds 0-2, on the README's partition
               of Cora (`partition --num-parts 2 --method metis --balance-train`) and on
               tests/python's (`--method metis --seed 1`)
  infer_cora   examples/python/infer_cora.py on the checkpoint of the README's `partita
               train --parts parts/cora-2 --epochs 20 --checkpoint-dir ck`, against `partita
               infer` on the same
  link_cora    examples/python/link_cora.py --parts P --seed S (GCN 2x32, fanouts -1,-1,
               Adam 0.01, 200 epochs, dot decoder) against `partita train --task link --model
               gcn --layers 2 --hidden 32 --fanouts -1,-1 --normalize-features --lr 0.01
               --epochs 200 --eval-every 0 --seed S`, seeds 0-2, on Cora partitioned with
               `--edge-split 0.05,0.10 --method metis --seed 1` (the README's); and the
               example at 30 epochs and untrained (0), as tests/python/test_link.py
  mag_rgcn     examples/python/train_mag_rgcn.py --parts P --seed S at 20 epochs (what
               tests/python/test_hetero.py runs) and at 100 (its default) against `partita
               train --model rgcn --layers 2 --hidden 64 --fanouts 25,20 --dropout 0.5 --lr
               0.01 --epochs 100 --eval-every 0 --seed S`, seeds 0-2, on heco-acm, split
               heco60 (`partition --split heco60 --num-parts 2 --method metis`, as the test)

--smoke runs each example once for an epoch or two on a generated graph, without the C++
comparisons. Prints one JSON object: per group and seed the last test figure (test_acc, or test_auc for
link prediction) of each run, and the medians. The figures do not depend on the machine's
load; they may differ between CPU models. Never fails because a figure is low; it fails
only if a command fails.

    python3 bench/python_examples.py [--groups train_cora,infer_cora,link_cora,mag_rgcn]
        [--seeds 0,1,2] [--work DIR] [--pythonpath build/python] [--smoke]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

import smoke

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
DATASETS = os.path.join(SHARED, "datasets", "ogb-layout")
EXAMPLES = os.path.join(ROOT, "examples", "python")
GROUPS = ["train_cora", "infer_cora", "link_cora", "mag_rgcn"]
LINK_CPP = ["--task", "link", "--model", "gcn", "--layers", "2", "--hidden", "32",
            "--fanouts", "-1,-1", "--normalize-features", "--lr", "0.01", "--epochs", "200",
            "--eval-every", "0"]
RGCN_CPP = ["--model", "rgcn", "--layers", "2", "--hidden", "64", "--fanouts", "25,20",
            "--dropout", "0.5", "--lr", "0.01", "--epochs", "100", "--eval-every", "0"]


class Runner:
    def __init__(self, a):
        self.a = a
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        PYTHONPATH=a.pythonpath)
        self.mpirun = ["mpirun", "-np", "2", "--oversubscribe", "-x", "PYTHONPATH"]

    def run(self, cmd):
        """Runs cmd; returns its last test_acc= or test_auc= value."""
        done = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if done.returncode != 0:
            raise RuntimeError(f"exit status {done.returncode} from {' '.join(cmd)}:\n"
                               f"{done.stderr[-2000:]}")
        out = done.stdout
        figures = {}
        for line in out.splitlines():
            for item in line.split():
                if item.startswith(("test_acc=", "test_auc=")):
                    key, value = item.split("=", 1)
                    figures[key] = float(value)
        if not figures:
            raise RuntimeError(f"no test_acc= or test_auc= in the output of {' '.join(cmd)}")
        return figures.get("test_auc", figures.get("test_acc"))

    def partition(self, name, dataset, flags):
        out = os.path.join(self.a.work, name)
        source = os.path.join(DATASETS, dataset)
        if self.a.smoke:
            extra = ["--hetero", "mag", "--nodes", "5000"] if dataset == "heco-acm" else []
            source = smoke.graph(self.a.partita, self.a.work, f"smoke-{dataset}", extra)
            flags = [f for f in flags if f not in ("--split", "heco60")]
            shutil.rmtree(out, ignore_errors=True)
        if not os.path.exists(os.path.join(out, "partita.json")):
            subprocess.run([self.a.partita, "-q", "partition", "--dataset", source, *flags,
                            "--out", out], check=True, stdout=subprocess.DEVNULL, env=self.env)
        return out

    def python(self, script, *args):
        return self.run([*self.mpirun, self.a.python, os.path.join(EXAMPLES, script), *args])

    def partita(self, command, *args):
        return self.run([*self.mpirun, self.a.partita, "-q", command, *args])


def summary(values):
    return {"values": values, "median": statistics.median(values) if values else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default=",".join(GROUPS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "bench-python-examples"))
    ap.add_argument("--partita", default=os.path.join(ROOT, "build", "src", "cli", "partita"))
    ap.add_argument("--pythonpath", default=os.path.join(ROOT, "build", "python"))
    ap.add_argument("--python", default=sys.executable)
    smoke.add_flag(ap)
    a = ap.parse_args()
    groups = a.groups.split(",")
    for g in groups:
        if g not in GROUPS:
            sys.exit(f"error: --groups: '{g}' is not one of {', '.join(GROUPS)}")
    seeds = a.seeds.split(",")
    epochs = {}  # --epochs overrides in smoke mode (a flag given twice keeps its last value)
    if a.smoke:
        seeds, epochs = ["0"], {"short": "1", "long": "2"}
    os.makedirs(a.work, exist_ok=True)
    r = Runner(a)
    result = {"benchmark": "python_examples", "ranks": 2, "seeds": [int(s) for s in seeds],
              "results": {}}

    def short(n):  # an epoch count, or the smoke run's
        return epochs.get("short", str(n))

    def long(n):
        return epochs.get("long", str(n))

    if "train_cora" in groups or "infer_cora" in groups:
        cora = r.partition("cora-2", "cora", ["--num-parts", "2", "--method", "metis",
                                              "--balance-train"])
    if "train_cora" in groups:
        accs = [r.python("train_cora.py", "--parts", cora, "--seed", s, "--epochs", long(30))
                for s in seeds]
        # The partition of tests/python (conftest.py: --seed 1, no --balance-train), on
        # which tests/python/test_mpi.py runs the example.
        tests = r.partition("cora-2-tests", "cora", ["--num-parts", "2", "--method", "metis",
                                                     "--seed", "1"])
        on_tests = [] if a.smoke else [
            r.python("train_cora.py", "--parts", tests, "--seed", s) for s in seeds]
        result["results"]["train_cora"] = {"test_acc": summary(accs),
                                           "tests_partition_test_acc": summary(on_tests)}
        print(f"train_cora.py: {accs}; on the tests' partition {on_tests}", file=sys.stderr)
    if "infer_cora" in groups:
        ck = os.path.join(a.work, "cora-ck")
        shutil.rmtree(ck, ignore_errors=True)
        trained = r.partita("train", "--parts", cora, "--epochs", long(20), "--checkpoint-dir",
                            ck)
        cpp = r.partita("infer", "--parts", cora, "--checkpoint-dir", ck, "--out",
                        os.path.join(a.work, "cora-inf"), "--force")
        py = r.python("infer_cora.py", "--parts", cora, "--checkpoint-dir", ck)
        result["results"]["infer_cora"] = {"train_test_acc": trained, "infer_test_acc": cpp,
                                           "infer_cora_py_test_acc": py}
        print(f"infer_cora.py: {py}; partita infer {cpp}; train {trained}", file=sys.stderr)
    if "link_cora" in groups:
        link = r.partition("cora-link", "cora", ["--edge-split", "0.05,0.10", "--num-parts", "2",
                                                 "--method", "metis", "--seed", "1"])
        norm = ["--no-normalize"] if a.smoke else []  # the smoke graph's features are Gaussian
        py = [r.python("link_cora.py", "--parts", link, "--seed", s, "--epochs", long(200),
                       *norm) for s in seeds]
        cpp = [] if a.smoke else [  # the smoke run: the examples only
            r.partita("train", "--parts", link, *LINK_CPP, "--seed", s, "--epochs", long(200))
            for s in seeds]
        # tests/python/test_link.py's short run (30 epochs) and the untrained model (0).
        py30 = [] if a.smoke else [
            r.python("link_cora.py", "--parts", link, "--seed", s, "--epochs", "30")
            for s in seeds]
        py0 = [] if a.smoke else [
            r.python("link_cora.py", "--parts", link, "--seed", s, "--epochs", "0")
            for s in seeds]
        result["results"]["link_cora"] = {"python_test_auc": summary(py),
                                          "cpp_test_auc": summary(cpp),
                                          "python_30_epochs_test_auc": summary(py30),
                                          "python_untrained_test_auc": summary(py0)}
        print(f"link_cora.py: {py}; partita train --task link: {cpp}", file=sys.stderr)
    if "mag_rgcn" in groups:
        acm = r.partition("acm-2", "heco-acm", ["--split", "heco60", "--num-parts", "2",
                                                "--method", "metis"])
        py20 = [r.python("train_mag_rgcn.py", "--parts", acm, "--seed", s, "--epochs",
                         short(20)) for s in seeds]
        py100 = [] if a.smoke else [  # the smoke run: the 20-epoch runs' code path only
            r.python("train_mag_rgcn.py", "--parts", acm, "--seed", s, "--epochs", long(100))
            for s in seeds]
        cpp = [] if a.smoke else [
            r.partita("train", "--parts", acm, *RGCN_CPP, "--seed", s, "--epochs", long(100))
            for s in seeds]
        result["results"]["mag_rgcn"] = {"python_20_epochs_test_acc": summary(py20),
                                         "cpp_100_epochs_test_acc": summary(cpp)}
        if py100:
            result["results"]["mag_rgcn"]["python_100_epochs_test_acc"] = summary(py100)
        print(f"train_mag_rgcn.py: 20 epochs {py20}, 100 epochs {py100}; partita train "
              f"--model rgcn: {cpp}", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
