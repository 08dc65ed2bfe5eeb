#!/usr/bin/env python3
"""Same seed, same losses: a fixed set of `partita train` runs (GraphSAGE, GCN, GAT, R-GCN,
link prediction, server-client, resume) whose per-epoch losses, accuracies and final test
metrics are recorded in tests/train/loss_baseline.json. A change meant to leave training
alone (a refactoring such as the trainer's seams) is checked by `compare`; a change meant to
alter the numbers records a new baseline with `record` and says why in its commit.

    loss_baseline.py --partita BIN --cora DIR --work DIR compare tests/train/loss_baseline.json
    loss_baseline.py --partita BIN --cora DIR --work DIR record tests/train/loss_baseline.json
    loss_baseline.py selftest tests/train/loss_baseline.json

Two kinds of equality (issue 37):
- Against the stored figures, within a stated tolerance. They were recorded on one CPU;
  BLAS and oneDNN pick other kernels on another CPU model, whose float32 sums round
  differently: on a second machine 15 figures differed in the 8th significant digit
  (`/gat_np2/epochs[1]/loss` 1.647711197535197 against 1.647711157798767, relative 2.4e-8;
  `/link_np2/test/test_auc` 0.7954975895316805 against 0.7955011765381084, one pair of the
  528 x 528 test edges ranked the other way). The tolerances (TOLERANCE below):
    losses                         relative 1e-5: 400 times that drift, which grows over
                                   the epochs; a real change of the computation (sampling,
                                   initialisation, dropout, an op) moves them by 1e-4..1e-1
    steps, epochs                  exact
    accuracies (train/val/test)    one sample: 1/n of the set measured (Cora: 140 training,
                                   500 validation, 1000 test nodes), so that a node whose
                                   prediction is a near tie may flip, two may not
    link metrics (AUC, AP, MRR)    one positive: 1/P of the split's positive edges (528
                                   test, 264 validation on Cora), so that one edge's score
                                   may move past its neighbours in the ranking
  The set sizes are stored with the figures ("sizes", from each fixture's partita.json)
  and must match exactly. `selftest` (CTest train_loss_baseline_tolerance) checks, without
  training, that the second machine's differences pass and realistic regressions fail.
- On the machine that runs them, bit for bit: `--rerun NAME` runs NAME again and wants the
  same doubles; `--results-out FILE` writes this run's figures and `--same-as FILE` wants
  exactly those of another run on this machine (CTest: `--device cpu` against the runs
  without the flag).

Every run uses 1 sampler thread and --torch-threads torch threads (1 unless given), so the
figures do not depend on the machine's core count. Torch's own ops (matrix products,
reductions) round differently at another thread count, so each thread count has its own
baseline file (loss_baseline.json: 1 thread, loss_baseline_t2.json: 2).
`--device D` adds `--device D` to every run: `--device cpu` must give exactly the figures
of runs without the flag (CTest train_loss_baseline_device_cpu); `--device cuda` on a GPU
machine gives its own figures (compare them with a tolerance elsewhere, not here).
Exit 0 when everything matches (compare), after writing the file (record) or when every
self-test holds; otherwise prints every difference and exits 1.
"""
import argparse
import copy
import json
import os
import re
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


def set_sizes(parts):
    """The sizes the tolerances count in, from a partition's partita.json: training,
    validation and test nodes, or, for a link-prediction split, training, validation and
    test positive edges."""
    meta = json.load(open(os.path.join(parts, "partita.json")))
    summary, split = meta["summary"], meta.get("edge_split")
    if split:
        return {"train": sum(split["train"]), "valid": split["valid"], "test": split["test"]}
    return {k: sum(p[k] for p in summary["parts"]) for k in ("train", "valid", "test")}


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
    todo = [(name, False) for name in RUNS] + [(name, True) for name in RESUMED]
    for name, resumed in todo:
        print("running", name, flush=True)
        results[name] = run_one(args, parts, name)
        results[name]["sizes"] = set_sizes(parts[(RESUMED if resumed else RUNS)[name][0]])
    return results, parts


def run_one(args, parts, name):
    """The figures of run `name` (RUNS or RESUMED) on this machine."""
    if name in RUNS:
        fixture, ranks, flags = RUNS[name]
        return train(args, parts[fixture], ranks, flags, os.path.join(args.work, name + ".jsonl"))
    fixture, ranks, flags = RESUMED[name]
    ck = os.path.join(args.work, name + "-ck")
    shutil.rmtree(ck, ignore_errors=True)
    train(args, parts[fixture], ranks, flags + ["--epochs", "2", "--checkpoint-dir", ck],
          os.path.join(args.work, name + "-first.jsonl"))
    return train(args, parts[fixture], ranks,
                 flags + ["--epochs", "4", "--checkpoint-dir", ck, "--resume"],
                 os.path.join(args.work, name + ".jsonl"))


# Tolerances against the stored figures (the docstring says why): (kind, value).
RELATIVE, ONE_SAMPLE, EXACT = "relative", "one sample", "exact"
TOLERANCE = {"loss": (RELATIVE, 1e-5), "epoch": (EXACT, 0), "steps": (EXACT, 0)}
# Which set a metric is measured on (its "sizes" entry): the prefix of its name.
SETS = {"train_": "train", "val_": "valid", "test_": "test"}


def allowed(key, want, got, sizes):
    """Whether `got` may stand for the stored `want` of metric `key`; None when it may,
    else the tolerance it is out of, in words."""
    kind, value = TOLERANCE.get(key, (ONE_SAMPLE, None))
    if kind == EXACT or not isinstance(want, (int, float)) or not isinstance(got, (int, float)):
        return None if want == got else "exact"
    if kind == RELATIVE:
        return None if abs(got - want) <= value * abs(want) else f"relative {value:g}"
    prefix = next((p for p in SETS if key.startswith(p)), None)
    n = sizes.get(SETS[prefix]) if prefix and sizes else None
    if not n:
        return None if want == got else "exact (no set size for this metric)"
    what = "positive edge" if re.search(r"auc|_ap|mrr|hits", key) else "sample"
    return None if abs(got - want) <= 1.0 / n + 1e-12 else f"1/{n} (one {what})"


def differences(want, got, where="", sizes=None, exact=False):
    """The differences between stored figures `want` and this run's `got`: within the
    tolerances, or bit for bit when `exact`."""
    if isinstance(want, dict) and isinstance(got, dict):
        if "sizes" in want and "sizes" in got and not exact and want["sizes"] != got["sizes"]:
            yield (f"{where}/sizes: baseline {want['sizes']}, this run {got['sizes']} (another "
                   "dataset or split: record a new baseline)")
        sizes = want.get("sizes", sizes)
        for key in sorted(set(want) | set(got)):
            if key == "sizes" and not exact:
                continue
            if key not in got or key not in want:
                yield f"{where}/{key}: only in {'the baseline' if key in want else 'this run'}"
            else:
                yield from differences(want[key], got[key], f"{where}/{key}", sizes, exact)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got)):
            yield from differences(a, b, f"{where}[{i}]", sizes, exact)
    elif exact or isinstance(want, (list, dict)) or isinstance(got, (list, dict)):
        if want != got:
            yield f"{where}: {'the other run' if exact else 'baseline'} {want!r}, this run {got!r}"
    else:
        key = where.rsplit("/", 1)[-1]
        broken = allowed(key, want, got, sizes)
        if broken:
            yield f"{where}: baseline {want!r}, this run {got!r} (tolerance: {broken})"


def selftest(baseline_path):
    """The tolerances against the second machine's differences (pass) and realistic
    regressions (fail), on copies of the stored figures: no training."""
    base = json.load(open(baseline_path))
    failures = []

    def expect(name, edit, should_pass):
        got = copy.deepcopy(base)
        edit(got)
        found = list(differences(base, got))
        if bool(found) == should_pass:
            failures.append(f"{name}: expected {'no difference' if should_pass else 'a difference'}"
                            f", got {found or 'none'}")
        else:
            print(f"ok: {name}: {'passes' if should_pass else found[0]}")

    def setter(run, path, value):
        def edit(d):
            node = d[run]
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value(node[path[-1]]) if callable(value) else value
        return edit

    for run in base:
        if "sizes" not in base[run]:
            failures.append(f"{run}: no sizes in {baseline_path}")
    expect("the baseline itself", lambda d: None, True)
    # The second machine's differences (issue 37), and the same drift on every loss.
    if "gat_np2" in base and "link_np2" in base:
        expect("gat_np2 epoch 2 loss of another CPU",
               setter("gat_np2", ["epochs", 1, "loss"], 1.647711157798767), True)
        expect("link_np2 test_auc of another CPU (one pair of test edges)",
               setter("link_np2", ["test", "test_auc"], 0.7955011765381084), True)

    def every_loss(factor):
        def edit(d):
            for r in d.values():
                for e in r["epochs"]:
                    e["loss"] *= factor
        return edit
    expect("every loss x (1 + 2e-6): drift 80 times the second machine's", every_loss(1 + 2e-6),
           True)
    expect("every loss x (1 + 1e-4): a change in the 5th digit", every_loss(1 + 1e-4), False)
    expect("one loss x (1 - 3e-5)", setter("sage_np2", ["epochs", 2, "loss"],
                                         lambda v: v * (1 - 3e-5)), False)
    n_val = base["sage_np2"]["sizes"]["valid"]
    n_train = base["sage_np2"]["sizes"]["train"]
    expect("one validation node flipped", setter("sage_np2", ["epochs", 0, "val_acc"],
                                                 lambda v: v + 1 / n_val), True)
    expect("two validation nodes flipped", setter("sage_np2", ["epochs", 0, "val_acc"],
                                                  lambda v: v + 2 / n_val), False)
    expect("two training nodes flipped", setter("gcn_np2", ["epochs", 2, "train_acc"],
                                                lambda v: v - 2 / n_train), False)
    expect("test_acc 0.005 lower", setter("gat_np2", ["test", "test_acc"], lambda v: v - 0.005),
           False)
    expect("test_auc 0.01 higher", setter("link_np2", ["test", "test_auc"], lambda v: v + 0.01),
           False)
    expect("val_auc 0.005 lower", setter("link_np2", ["epochs", 1, "val_auc"],
                                         lambda v: v - 0.005), False)
    expect("one step more", setter("rgcn_np2", ["epochs", 0, "steps"], lambda v: v + 1), False)
    for line in failures:
        print("FAIL:", line)
    print(f"selftest: {len(failures)} failed")
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partita")
    ap.add_argument("--cora", help="Cora in OGB's layout")
    ap.add_argument("--work", help="scratch directory (emptied first)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--torch-threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--device", help="--device of every run (default: the flag not given)")
    ap.add_argument("--rerun", metavar="NAME", help="run NAME again: the same figures, exactly")
    ap.add_argument("--results-out", metavar="FILE", help="write this run's figures to FILE")
    ap.add_argument("--same-as", metavar="FILE",
                    help="this run's figures must be exactly those in FILE (--results-out)")
    ap.add_argument("mode", choices=["compare", "record", "selftest"])
    ap.add_argument("baseline")
    args = ap.parse_args()
    if args.mode == "selftest":
        sys.exit(0 if selftest(args.baseline) else 1)
    if not (args.partita and args.cora and args.work):
        ap.error(f"{args.mode} needs --partita, --cora and --work")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    results, parts = run_all(args)
    if args.results_out:
        with open(args.results_out, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    if args.mode == "record":
        with open(args.baseline, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded {len(results)} runs in {args.baseline}")
        return
    found = [f"DIFFERS: {line}" for line in differences(json.load(open(args.baseline)), results)]
    if args.same_as:
        found += [f"NOT THE SAME AS {args.same_as}: {line}"
                  for line in differences(json.load(open(args.same_as)), results, exact=True)]
    if args.rerun:
        print("running", args.rerun, "again", flush=True)
        again = dict(run_one(args, parts, args.rerun), sizes=results[args.rerun]["sizes"])
        found += [f"RERUN DIFFERS: {line}"
                  for line in differences(results[args.rerun], again, f"/{args.rerun}",
                                          exact=True)]
    for line in found:
        print(line)
    print(f"{len(results)} runs, {len(found)} differences from {args.baseline}"
          f"{' (within its tolerances)' if not found else ''}"
          f"{', ' + args.same_as + ' exactly' if args.same_as else ''}"
          f"{', a rerun of ' + args.rerun + ' exactly' if args.rerun else ''}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
