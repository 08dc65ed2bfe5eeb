#!/usr/bin/env python3
"""Checks that two `partita train --metrics-out` files describe equivalent runs: the same
task, number of epochs and of steps in each, test metrics within --max-gap of each other
and above --min-acc, and with --loss-rtol, every epoch's loss equal within that relative
tolerance. Exit 0 when they do; otherwise prints what differs and exits 1.

The test metric is the final record's "test_acc" for node classification, and "test_auc"
when the final record says "task": "link" (`partita train --task link`).

    compare_runs.py A.jsonl B.jsonl [--max-gap 0.01] [--min-acc 0.9] [--loss-rtol 1e-4]
"""
import argparse
import json
import sys


def read(path):
    epochs, final = [], None
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if record["type"] == "epoch":
                epochs.append(record)
            elif record["type"] == "final":
                final = record
    if final is None:
        sys.exit(f"{path}: no final record")
    return epochs, final


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--max-gap", type=float, default=0.01)
    ap.add_argument("--min-acc", type=float, default=0.9)
    ap.add_argument("--loss-rtol", type=float, default=None)
    args = ap.parse_args()
    (ea, fa), (eb, fb) = read(args.a), read(args.b)
    problems = []
    if [e["steps"] for e in ea] != [e["steps"] for e in eb]:
        problems.append(f"steps per epoch differ: {[e['steps'] for e in ea]} vs "
                        f"{[e['steps'] for e in eb]}")
    if not ea:
        problems.append("no epochs")
    if args.loss_rtol is not None:
        for a, b in zip(ea, eb):
            if abs(a["loss"] - b["loss"]) > args.loss_rtol * abs(a["loss"]):
                problems.append(f"epoch {a['epoch']}: loss {a['loss']!r} vs {b['loss']!r} "
                                f"(relative {abs(a['loss'] - b['loss']) / abs(a['loss']):.2e} > "
                                f"{args.loss_rtol})")
        print("losses:", [e["loss"] for e in ea], "vs", [e["loss"] for e in eb])
    task_a, task_b = fa.get("task", "node"), fb.get("task", "node")
    if task_a != task_b:
        sys.exit(f"mismatch: tasks differ: {task_a} vs {task_b}")
    key = "test_auc" if task_a == "link" else "test_acc"
    for name, final in ((args.a, fa), (args.b, fb)):
        if key not in final:
            sys.exit(f"{name}: final record has no {key!r}")
    gap = abs(fa[key] - fb[key])
    if gap > args.max_gap:
        problems.append(f"{key} {fa[key]} vs {fb[key]}: gap {gap:.4f} > {args.max_gap}")
    for name, final in ((args.a, fa), (args.b, fb)):
        if final[key] < args.min_acc:
            problems.append(f"{name}: {key} {final[key]} < {args.min_acc}")
    print(f"ranks {fa['ranks']} vs {fb['ranks']}: steps {[e['steps'] for e in ea]}, "
          f"{key} {fa[key]:.4f} vs {fb[key]:.4f}")
    for p in problems:
        print("mismatch:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
