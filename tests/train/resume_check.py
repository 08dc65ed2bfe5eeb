#!/usr/bin/env python3
"""Resume repeats the uninterrupted run, learned embeddings included: `partita train` under
mpirun for --epochs TOTAL straight, then the same flags for --epochs SPLIT with
--checkpoint-dir, then again for TOTAL with --resume. The epochs after SPLIT must print the
same lines (loss, train_acc, val_acc; timings aside) and record the same losses and
accuracies in --metrics-out, exactly; the final test_acc too. The checkpoint directory must
hold the two latest checkpoints and, beside each, one embeddings file per part (its owner's
rows and optimizer state), and nothing else.

    resume_check.py --partita BIN --parts DIR --work DIR [--np 2] [--servers 0]
                    [--split 2] [--epochs 4] [--mpirun mpirun] -- TRAIN FLAGS...

Exit 0 when it does; otherwise prints what differs and exits 1.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# The fields of an epoch line that depend on the computation only (not on timing).
EPOCH_LINE = re.compile(r"^epoch=(\d+) steps=\d+ loss=\S+ train_acc=\S+ val_acc=\S+")


def train(args, epochs, metrics, extra):
    """Runs one `partita train`; returns rank 0's epoch lines, without their timings."""
    cmd = [args.mpirun, "-np", str(args.np), "--oversubscribe", args.partita, "-q", "train",
           "--parts", args.parts, "--epochs", str(epochs), "--metrics-out", metrics]
    if args.servers:
        cmd += ["--servers", str(args.servers)]
    cmd += extra + args.flags
    print("running:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        sys.exit(f"FAIL: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return [m.group(0) for m in map(EPOCH_LINE.match, r.stdout.splitlines()) if m]


def records(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    return ([r for r in lines if r["type"] == "epoch"], [r for r in lines if r["type"] == "final"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partita", required=True)
    ap.add_argument("--parts", required=True)
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--servers", type=int, default=0)
    ap.add_argument("--split", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("flags", nargs="*")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    ck = os.path.join(args.work, "ck")
    straight_m, resumed_m = (os.path.join(args.work, n) for n in ("straight.jsonl",
                                                                  "resumed.jsonl"))

    straight = train(args, args.epochs, straight_m, [])
    first = train(args, args.split, resumed_m, ["--checkpoint-dir", ck])
    second = train(args, args.epochs, resumed_m, ["--checkpoint-dir", ck, "--resume"])

    problems = []
    if len(straight) != args.epochs:
        problems.append(f"straight run printed {len(straight)} epoch lines, not {args.epochs}")
    if first != straight[:args.split]:
        problems.append(f"first {args.split} epochs differ: {first} vs {straight[:args.split]}")
    if second != straight[args.split:]:
        problems.append(f"resumed epochs print {second}, the straight run {straight[args.split:]}")

    (se, sf), (re_, rf) = records(straight_m), records(resumed_m)
    keys = ("epoch", "steps", "loss", "train_acc", "val_acc")
    sa = [tuple(r[k] for k in keys) for r in se[args.split:]]
    ra = [tuple(r[k] for k in keys) for r in re_[args.split:]]
    if sa != ra or len(ra) != args.epochs - args.split:
        problems.append(f"metrics of the epochs after {args.split}: {ra} vs straight {sa}")
    if not rf or rf[-1]["test_acc"] != sf[-1]["test_acc"]:
        problems.append(f"final test_acc {rf[-1]['test_acc'] if rf else None} vs "
                        f"{sf[-1]['test_acc']}")
    elif rf[-1].get("resumed_epochs") != args.split:
        problems.append(f"final record: resumed_epochs {rf[-1].get('resumed_epochs')}, "
                        f"expected {args.split}")

    with open(os.path.join(args.parts, "partita.json")) as f:
        parts = json.load(f)["num_parts"]
    expected = set()
    for epoch in (args.epochs - 1, args.epochs):
        expected.add(f"checkpoint-{epoch:06d}.pt")
        expected.update(f"embeddings-{epoch:06d}-rank{r}.bin" for r in range(parts))
    found = set(os.listdir(ck))
    if found != expected:
        problems.append(f"{ck} holds {sorted(found)}, expected {sorted(expected)}")
    for name in sorted(found & expected):
        if os.path.getsize(os.path.join(ck, name)) == 0:
            problems.append(f"{ck}/{name} is empty")

    print("straight:", straight)
    print("resumed: ", first + second)
    for p in problems:
        print("mismatch:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
