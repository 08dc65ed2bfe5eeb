#!/usr/bin/env python3
"""`partita infer` after a 2-rank GraphSAGE training run (issue 12's acceptance): trains on
the 2-part directory with --checkpoint-dir, then infers with 2 ranks on the 2 parts and
with 1 rank on the 1-part directory of the same dataset, and checks that
  - predictions.npy holds one class per node in ORIGINAL order: its accuracy on the
    dataset's test split (split/<name>/test.csv.gz, labels from raw/node-label.csv.gz)
    equals the printed test_acc (to its 4 printed digits), which is the last line;
  - embeddings.npy is float32 [N, hidden], and 1 rank's equal 2 ranks' within
    |a - b| <= 1e-5 (|b| + 1), with the same predictions;
  - training with --eval full (full-graph inference for validation and test) prints the
    test_acc that infer prints for its final checkpoint;
  - infer --device cpu (the device code path on the CPU) writes the same files, byte for
    byte, and prints the same test_acc as infer without the flag.

    infer_check.py --partita BIN --dataset DIR --split NAME --p1 DIR --p2 DIR --work DIR
                   [--mpirun mpirun] -- TRAIN FLAGS...

Exit 0 when all hold; otherwise prints what differs and exits 1. Pure Python (no numpy).
"""
import argparse
import array
import ast
import gzip
import os
import shutil
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def read_npy(path):
    """(shape, values) of a little-endian float32 or int64 .npy file (C order)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    header_len = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + header_len].decode())
    assert not header["fortran_order"], path
    code = {"<f4": "f", "<i8": "q"}[header["descr"]]
    values = array.array(code)
    values.frombytes(data[10 + header_len:])
    return tuple(header["shape"]), values


def read_ids(path):
    with gzip.open(path, "rt") as f:
        return [int(line.split(",")[0]) for line in f if line.strip()]


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    out = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, text=True, check=True).stdout
    lines = out.strip().splitlines()
    return lines


def main():
    p = argparse.ArgumentParser()
    for flag in ("--partita", "--dataset", "--split", "--p1", "--p2", "--work"):
        p.add_argument(flag, required=True)
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("train_flags", nargs=argparse.REMAINDER)
    args = p.parse_args()
    flags = [f for f in args.train_flags if f != "--"]
    shutil.rmtree(args.work, ignore_errors=True)
    ckpt = os.path.join(args.work, "ckpt")
    mpi = [args.mpirun, "-np", "2", "--oversubscribe", args.partita, "-q"]
    trained = run(mpi + ["train", "--parts", args.p2, "--checkpoint-dir", ckpt, "--eval", "full"]
                  + flags)
    out2, out1 = os.path.join(args.work, "out2"), os.path.join(args.work, "out1")
    lines2 = run(mpi + ["infer", "--parts", args.p2, "--checkpoint-dir", ckpt, "--out", out2,
                        "--batch-size", "300"])
    lines1 = run([args.partita, "-q", "infer", "--parts", args.p1, "--checkpoint-dir", ckpt,
                  "--out", out1])
    out2cpu = os.path.join(args.work, "out2-device-cpu")
    lines2cpu = run(mpi + ["infer", "--parts", args.p2, "--checkpoint-dir", ckpt, "--out",
                           out2cpu, "--batch-size", "300", "--device", "cpu"])
    failures = []
    for name, lines in (("2 ranks", lines2), ("1 rank", lines1)):
        if not lines or not lines[-1].startswith("test_acc="):
            failures.append(f"{name}: last line is not test_acc=: {lines[-1:]}")
    if failures:
        print("\n".join(failures))
        return 1
    printed = float(lines2[-1].split("=")[1])

    labels = read_ids(os.path.join(args.dataset, "raw", "node-label.csv.gz"))
    test = read_ids(os.path.join(args.dataset, "split", args.split, "test.csv.gz"))
    (n,), pred2 = read_npy(os.path.join(out2, "predictions.npy"))
    if n != len(labels):
        failures.append(f"predictions.npy has {n} rows, the dataset {len(labels)} nodes")
    acc = sum(pred2[i] == labels[i] for i in test) / len(test)
    print(f"accuracy of predictions.npy on {len(test)} test ids: {acc:.6f}; printed {printed}")
    if abs(acc - printed) > 0.5e-4:
        failures.append(f"accuracy on the test split {acc:.6f} != printed test_acc {printed}")
    if lines1[-1] != lines2[-1]:
        failures.append(f"1 rank printed {lines1[-1]}, 2 ranks {lines2[-1]}")
    if not trained or trained[-1] != lines2[-1]:
        failures.append(f"train --eval full printed {trained[-1:]}, infer {lines2[-1]}")

    shape2, emb2 = read_npy(os.path.join(out2, "embeddings.npy"))
    shape1, emb1 = read_npy(os.path.join(out1, "embeddings.npy"))
    _, pred1 = read_npy(os.path.join(out1, "predictions.npy"))
    if shape1 != shape2 or shape2[0] != n:
        failures.append(f"embeddings shapes {shape1} (1 rank), {shape2} (2 ranks), {n} nodes")
    else:
        worst = max(abs(a - b) - 1e-5 * (abs(b) + 1) for a, b in zip(emb1, emb2))
        print(f"embeddings {shape2}: worst excess over the tolerance {worst:.3g}")
        if worst > 0:
            failures.append("1 rank's embeddings differ from 2 ranks' beyond 1e-5 (|b| + 1)")
    if pred1 != pred2:
        failures.append("1 rank's predictions differ from 2 ranks'")
    for name in ("embeddings.npy", "predictions.npy"):
        with open(os.path.join(out2, name), "rb") as a, open(os.path.join(out2cpu, name), "rb") as b:
            if a.read() != b.read():
                failures.append(f"infer --device cpu wrote another {name}")
    if lines2cpu[-1:] != lines2[-1:]:
        failures.append(f"infer --device cpu printed {lines2cpu[-1:]}, without it {lines2[-1:]}")
    print("\n".join(failures) if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
