#!/usr/bin/env python3
"""Same seed, same losses, bit for bit: a fixed set of `partita train` runs (GraphSAGE, GCN,
GAT, R-GCN, link prediction, server-client, resume) whose per-epoch losses, accuracies and
final test metrics are recorded in tests/train/loss_baseline.json and must come out exactly
the same (as the JSON of --metrics-out writes them: shortest round-trip decimals of the
doubles). A change meant to leave training alone (a refactoring such as the trainer's seams)
is checked by `compare`; a change meant to alter the numbers records a new baseline with
`record` and says why in its commit.

    loss_baseline.py --partita BIN --cora DIR --work DIR compare tests/train/loss_baseline.json
    loss_baseline.py --partita BIN --cora DIR --work DIR record tests/train/loss_baseline.json

Every run uses 1 sampler thread and --torch-threads torch threads (1 unless given), so the
figures do not depend on the machine's core count (they may on its CPU's kernels: record on
the CI machine's kind). Torch's own ops (matrix products, reductions) may round differently
at another thread count, so each thread count has its own baseline file
(loss_baseline.json: 1 thread, loss_baseline_t2.json: 2).
`--device D` adds `--device D` to every run: `--device cpu` must give the baseline of runs
without the flag exactly (CTest train_loss_baseline_device_cpu); `--device cuda` on a GPU
machine gives its own figures (compare them with a tolerance elsewhere, not here).
Exit 0 when everything equals the file (compare) or after writing it (record); otherwise
prints every difference and exits 1.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
FIXED = ["--threads", "1", "--seed", "1", "--eval-every", "1"]
CORA = ["--fanouts", "10,5", "--batch-size", "64", "--hidden", "16", "--lr", "0.01"]
# name: (parts fixture, ranks, flags)
RUNS = {
    "sage_np2": ("cora2", 2, CORA + ["--model", "sage", "--epochs", "3"]),
    "gcn_np2": ("cora2", 2, CORA + ["--model", "gcn", "--normalize-features", "--epochs", "3"]),
    "gat_np2": ("cora2", 2, CORA + ["--model", "gat", "--heads", "2", "--epochs", "3"]),
    "rgcn_np2": ("mag2", 2, ["--model", "rgcn", "--hidden", "16", "--fanouts", "5,5",
                             "--batch-size", "64", "--lr", "0.01", "--epochs", "3"]),
    "link_np2": ("link2", 2, ["--task", "link", "--fanouts", "5,5", "--batch-size", "256",
                              "--hidden", "16", "--lr", "0.01", "--epochs", "2"]),
    "sage_servers2_np3": ("cora2", 3, CORA + ["--model", "sage", "--epochs", "3",
                                              "--servers", "2"]),
}
# Resumed: 2 epochs with checkpoints, then --resume to 4; the second run's records.
RESUMED = {"sage_resume_np2": ("cora2", 2, CORA + ["--model", "sage"])}


def sh(argv, cwd=None):
    r = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=600, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def fixtures(args):
    """The partition directories the runs use, made once under --work."""
    p, w = args.partita, args.work
    out = {"cora2": os.path.join(w, "cora2"), "link2": os.path.join(w, "link2"),
           "mag2": os.path.join(w, "mag2")}
    sh([p, "-q", "partition", "--dataset", args.cora, "--num-parts", "2", "--seed", "1",
        "--out", out["cora2"]])
    sh([p, "-q", "partition", "--dataset", args.cora, "--num-parts", "2", "--seed", "1",
        "--edge-split", "0.05,0.10", "--out", out["link2"]])
    sh([p, "-q", "generate", "--hetero", "mag", "--nodes", "2000", "--feat-dim", "8",
        "--classes", "4", "--seed", "3", "--out", os.path.join(w, "mag")])
    sh([p, "-q", "partition", "--dataset", os.path.join(w, "mag"), "--num-parts", "2",
        "--seed", "1", "--out", out["mag2"]])
    return out


def train(args, parts, ranks, flags, metrics):
    sh([args.mpirun, "-np", str(ranks), "--oversubscribe", args.partita, "-q", "train",
        "--parts", parts, "--metrics-out", metrics, "--force",
        "--torch-threads", str(args.torch_threads)] + FIXED + flags +
       (["--device", args.device] if args.device else []))
    return summary(metrics)


def summary(metrics):
    """The figures of a --metrics-out file that depend on the computation only."""
    out = {"epochs": []}
    for line in open(metrics):
        r = json.loads(line)
        if r["type"] == "epoch":
            out["epochs"].append({k: r.get(k) for k in ("epoch", "steps", "loss", "train_acc",
                                                        "val_acc", "val_auc")
                                  if r.get(k) is not None})
        elif r["type"] == "final":
            out["test"] = {k: r[k] for k in ("test_acc", "test_auc", "test_ap", "test_mrr")
                           if k in r}
    return out


def run_all(args):
    parts = fixtures(args)
    results = {}
    for name, (fixture, ranks, flags) in RUNS.items():
        print("running", name, flush=True)
        results[name] = train(args, parts[fixture], ranks, flags,
                              os.path.join(args.work, name + ".jsonl"))
    for name, (fixture, ranks, flags) in RESUMED.items():
        print("running", name, flush=True)
        ck = os.path.join(args.work, name + "-ck")
        train(args, parts[fixture], ranks, flags + ["--epochs", "2", "--checkpoint-dir", ck],
              os.path.join(args.work, name + "-first.jsonl"))
        results[name] = train(args, parts[fixture], ranks,
                              flags + ["--epochs", "4", "--checkpoint-dir", ck, "--resume"],
                              os.path.join(args.work, name + ".jsonl"))
    return results


def differences(want, got, where=""):
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if key not in got or key not in want:
                yield f"{where}/{key}: only in {'the baseline' if key in want else 'this run'}"
            else:
                yield from differences(want[key], got[key], f"{where}/{key}")
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got)):
            yield from differences(a, b, f"{where}[{i}]")
    elif want != got:
        yield f"{where}: baseline {want!r}, this run {got!r}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partita", required=True)
    ap.add_argument("--cora", required=True, help="Cora in OGB's layout")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--torch-threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--device", help="--device of every run (default: the flag not given)")
    ap.add_argument("mode", choices=["compare", "record"])
    ap.add_argument("baseline")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    results = run_all(args)
    if args.mode == "record":
        with open(args.baseline, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded {len(results)} runs in {args.baseline}")
        return
    found = list(differences(json.load(open(args.baseline)), results))
    for line in found:
        print("DIFFERS:", line)
    print(f"{len(results)} runs, {len(found)} differences from {args.baseline}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
