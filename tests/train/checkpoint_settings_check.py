#!/usr/bin/env python3
"""What a checkpoint records, walked flag by flag (docs/training.md, "What a checkpoint
records"): the doc's table must list every flag of `partita train --help` and nothing
else, and each flag must behave on --resume as its kind says. A 1-epoch run writes a
checkpoint; then, for every flag, a copy of that checkpoint directory is resumed with the
flag changed (--epochs 1, so nothing more is trained):

- signature: exit 2 with one `error: --FLAG: STORED in the checkpoint PATH, GIVEN given` line;
- input: given with another value, refused in the same way; left out, the stored value is
  reapplied (a notice line), by `train --resume` and by `partita infer`;
- schedule: exit 0 with one `warning: --FLAG: STORED in the checkpoint, GIVEN given` line;
- schedule, quiet, and run: exit 0 and no warning naming the flag.

Then a resume given none of the base run's flags takes them all from the checkpoint (one
notice lists them) and trains as the base run did.

Then `partita infer` on a run trained with --normalize-features gives, without the flag,
the test accuracy it gives with it.

The checks after the base run are independent processes on their own copies (about 60
process starts, most of the time libtorch's start-up): JOBS of them run at a time.

    checkpoint_settings_check.py --partita BIN --doc docs/training.md --cora DIR --work DIR

Exit 0 when everything holds; otherwise prints what does not and exits 1.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

# bench/cpu_features.py decides bf16 as nn::cpu_supports_bf16() does
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))
from cpu_features import native_bf16  # noqa: E402

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
BASE = ["--hidden", "8", "--fanouts", "4,4", "--batch-size", "32", "--seed", "1",
        "--lr", "0.01", "--eval-every", "0"]
# The changed value each flag is resumed with ([] for a flag that takes no value). The run
# is 1 process on a 1-part directory of a node-classification graph.
CHANGED = {
    "task": ["link"], "negatives": ["2"], "negatives-by": ["degree"], "exclude": ["self"],
    "decoder": ["mlp"], "metric": ["ap"], "model": ["gcn"], "num-bases": ["2"],
    "embed-lr": ["0.1"], "layers": ["3", "--fanouts", "4,4,4"], "hidden": ["16"],
    "heads": ["2"], "embed-init": ["0.5"], "fanouts": ["3,3"], "batch-size": ["64"],
    "epochs": ["2"], "max-steps": ["2"], "lr": ["0.02"], "weight-decay": ["0.001"],
    "normalize-features": [], "dropout": ["0.1"], "attention-dropout": ["0.2"],
    "precision": ["bf16"], "optimizer": ["sgd"], "seed": ["3"], "threads": ["2"],
    "torch-threads": ["1"], "prefetch": ["3"], "timeout": ["30"], "eval": ["full"],
    "eval-every": ["2"], "metrics-out": ["{work}/m-{n}.jsonl"], "force": [],
    "cache-ratio": ["0.5"], "cache-presample": ["3"], "gpu-cache-ratio": ["0.5"], "progress": ["off"],
    "progress-every": ["5"], "checksum": [], "profile": [], "host-local": ["off"], "parts": ["{work}/parts-copy"],
    "kernels": ["generic"], "log-every": ["2"],
    "sample-on": ["device"], "topology": ["full"],
}
# Flags each run changes anyway, or that one process cannot change.
NOT_VARIED = {
    "checkpoint-dir": "every resumed run reads its own copy of the directory",
    "resume": "every run here resumes",
    "servers": "needs a job of several ranks on a several-part directory",
    "metapaths": "model han only, on a typed partition; the runs here are GraphSAGE on an "
                 "untyped one",
    "temporal": "needs a partition with edge and node times; Cora has none",
    "temporal-strict": "applies with --temporal only, which Cora cannot take",
    "temporal-strategy": "applies with --temporal only, which Cora cannot take",
    "edge-features": "needs a partition with edge features and a model that reads them (gat, "
                     "gine); the runs here are GraphSAGE on a graph without (its refusal on "
                     "resume: Checkpoint.EdgeFeaturesOrNotAreAnotherModel)",
    "sample-weight": "its other value (edge_weight) needs a partition with edge weights; Cora "
                     "has none",
    "device": "its other value (cuda) needs a GPU; a run resumed on cpu from a cuda "
              "checkpoint is the device check's (scripts/device-check.sh)",
}

if not native_bf16():
    del CHANGED["precision"]
    NOT_VARIED["precision"] = ("its other value (bf16) needs a CPU with native bf16, which this "
                               "one lacks")
FAILURES = []
# Checks run at once: each is a partita process that spends most of its second or two
# starting libtorch, so a few overlap on CI's two cores (train_checkpoint_settings: 74 s
# one at a time, ~35 s at 3).
JOBS = 3


def fail(message):
    print(f"FAIL: {message}", flush=True)  # one write: checks run in threads
    FAILURES.append(message)


def run(args, argv, expect_exit=None):
    r = subprocess.run([args.partita] + argv, env=ENV, capture_output=True, text=True,
                       timeout=120)
    if expect_exit is not None and r.returncode != expect_exit:
        fail(f"{' '.join(argv)}: exit {r.returncode}, expected {expect_exit}\n{r.stdout}{r.stderr}")
    return r


def doc_table(path):
    """{flag: (kind, quiet)} from the doc's "What a checkpoint records" table."""
    text = open(path).read()
    section = text.split("## What a checkpoint records", 1)[1].split("\n## ", 1)[0]
    table = {}
    for m in re.finditer(r"^\| `--([a-z0-9-]+)` \| (signature|input|schedule|run)( \(quiet\))? \|",
                         section, re.M):
        table[m.group(1)] = (m.group(2), bool(m.group(3)))
    return table


def help_flags(args):
    out = run(args, ["train", "--help"], 0).stdout
    return set(re.findall(r"^\s+--([a-z0-9-]+)", out, re.M)) - {"help"}


def resume(args, flag, extra, n):
    ck = os.path.join(args.work, f"ck-{n}")
    shutil.copytree(os.path.join(args.work, "ck"), ck)
    argv = ["train", "--parts", os.path.join(args.work, "p1"), *BASE, "--epochs", "1",
            "--checkpoint-dir", ck, "--resume", "--progress", "off"]
    values = [v.format(work=args.work, n=n) for v in extra]
    # A flag the base run gave is replaced, not repeated.
    if f"--{flag}" in argv:
        i = argv.index(f"--{flag}")
        del argv[i:i + 2]
    if flag == "layers":
        argv[argv.index("--fanouts") + 1] = values[2]
        values = values[:1]
    return run(args, argv + [f"--{flag}"] + values)


def error_lines(r):
    return [line for line in r.stderr.splitlines() if line.startswith("error:")]


def check_flag(args, flag, kind, quiet, n):
    r = resume(args, flag, CHANGED[flag], n)
    ck = os.path.join(args.work, f"ck-{n}", "checkpoint-000001.pt")
    warn = re.compile(rf"^warning: --{re.escape(flag)}: .* in the checkpoint, .* given", re.M)
    if kind in ("signature", "input"):
        errors = error_lines(r)
        want = rf"^error: --{re.escape(flag)}: \S* in the checkpoint {re.escape(ck)}, \S+ given"
        if r.returncode != 2 or len(errors) != 1 or not re.match(want, errors[0]):
            fail(f"--{flag} ({kind}): expected exit 2 and one line matching {want!r}; got exit "
                 f"{r.returncode}:\n{r.stderr}")
    elif r.returncode != 0:
        fail(f"--{flag} ({kind}): exit {r.returncode}\n{r.stderr}")
    elif (quiet or kind == "run") and warn.search(r.stderr):
        fail(f"--{flag} ({kind}{', quiet' if quiet else ''}): warned\n{r.stderr}")
    elif kind == "schedule" and not quiet and len(warn.findall(r.stderr)) != 1:
        fail(f"--{flag} (schedule): expected one warning naming it\n{r.stderr}")


def check_inputs_reapplied(args):
    """Trained with --normalize-features: --resume and infer without the flag apply it (on
    Cora: row normalization needs non-negative features)."""
    parts = os.path.join(args.work, "cora1")
    run(args, ["-q", "partition", "--dataset", args.cora, "--num-parts", "1", "--out", parts], 0)
    ck = os.path.join(args.work, "ck-norm")
    run(args, ["-q", "train", "--parts", parts, *BASE, "--epochs", "1", "--normalize-features",
               "--checkpoint-dir", ck], 0)
    r = run(args, ["train", "--parts", parts, *BASE, "--epochs", "1", "--checkpoint-dir", ck,
                   "--resume", "--progress", "off"], 0)
    if not re.search(r"^--resume: as recorded in \S+: --normalize-features true$", r.stderr, re.M):
        fail(f"resume without --normalize-features: no notice that it was reapplied\n{r.stderr}")
    acc = {}
    for given in (False, True):
        out = os.path.join(args.work, f"infer-{given}")
        r = run(args, ["infer", "--parts", parts, "--checkpoint-dir", ck, "--out", out] +
                (["--normalize-features"] if given else []), 0)
        acc[given] = re.findall(r"^test_acc=(\S+)$", r.stdout, re.M)
        if not given and "--normalize-features true: as the training run" not in r.stderr:
            fail(f"infer without --normalize-features: no notice\n{r.stderr}")
    if not acc[False] or acc[False] != acc[True]:
        fail(f"infer: test_acc without the flag {acc[False]} != with it {acc[True]}")
    # Trained without: infer given the flag is refused.
    r = run(args, ["infer", "--parts", os.path.join(args.work, "p1"),
                   "--checkpoint-dir", os.path.join(args.work, "ck"),
                   "--out", os.path.join(args.work, "infer-refused"), "--normalize-features"], 2)
    if not re.match(r"^error: --normalize-features: false in the checkpoint \S+, true given",
                    "\n".join(error_lines(r))):
        fail(f"infer --normalize-features on a run trained without: {r.stderr}")


def check_bare_resume(args):
    """A resume given no flag of the base run (not even --epochs) takes every one from the
    checkpoint: the notice lists those that differ from the defaults, and the run goes on to
    the recorded --epochs as the uninterrupted run does (the same test accuracy)."""
    parts = os.path.join(args.work, "p1")
    straight = run(args, ["-q", "train", "--parts", parts, *BASE, "--epochs", "2"], 0)
    ck = os.path.join(args.work, "ck-bare")
    run(args, ["-q", "train", "--parts", parts, *BASE, "--epochs", "2", "--checkpoint-dir", ck],
        0)
    # Keep only the first epoch's checkpoint: the resume has one epoch left to train.
    os.remove(os.path.join(ck, "checkpoint-000002.pt"))
    r = run(args, ["train", "--parts", parts, "--checkpoint-dir", ck, "--resume",
                   "--progress", "off"], 0)
    want = ("--resume: as recorded in " + os.path.join(ck, "checkpoint-000001.pt") +
            ": --hidden 8 --fanouts 4,4 --batch-size 32 --epochs 2 --lr 0.01 --seed 1")
    if want not in r.stderr:
        fail(f"bare resume: expected the notice {want!r}\n{r.stderr}")
    if re.search(r"^warning:", r.stderr, re.M):
        fail(f"bare resume: warned\n{r.stderr}")
    acc = re.findall(r"^test_acc=(\S+)$", r.stdout, re.M)
    if acc != re.findall(r"^test_acc=(\S+)$", straight.stdout, re.M):
        fail(f"bare resume: test_acc {acc} differs from the straight run's\n{straight.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partita", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--cora", required=True, help="Cora in OGB's layout (non-negative features)")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    table = doc_table(args.doc)
    flags = help_flags(args)
    if set(table) != flags:
        fail(f"docs table vs train --help: only in the doc {sorted(set(table) - flags)}, only "
             f"in --help {sorted(flags - set(table))}")
    missing = set(table) - set(CHANGED) - set(NOT_VARIED)
    if missing:
        fail(f"no changed value to resume with for {sorted(missing)}")

    ds, parts = os.path.join(args.work, "ds"), os.path.join(args.work, "p1")
    run(args, ["-q", "generate", "--nodes", "300", "--avg-degree", "4", "--feat-dim", "4",
               "--classes", "3", "--seed", "1", "--out", ds], 0)
    run(args, ["-q", "partition", "--dataset", ds, "--num-parts", "1", "--out", parts], 0)
    shutil.copytree(parts, os.path.join(args.work, "parts-copy"))
    run(args, ["-q", "train", "--parts", parts, *BASE, "--epochs", "1", "--checkpoint-dir",
               os.path.join(args.work, "ck")], 0)
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        # The two longest first, so that they do not end the run alone.
        checks = [pool.submit(check_bare_resume, args), pool.submit(check_inputs_reapplied, args)]
        for n, (flag, (kind, quiet)) in enumerate(sorted(table.items())):
            if flag in CHANGED:
                checks.append(pool.submit(check_flag, args, flag, kind, quiet, n))
        for c in checks:
            c.result()  # an exception in a check (not a failure it reports) ends the run
    print(f"{len(table)} flags, {sum(f in CHANGED for f in table)} resumed with a changed value, "
          f"{len(FAILURES)} failures")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
