#!/usr/bin/env python3
"""`partita train --sample-on device --device cpu` against `--sample-on host` on one
partition, for several seeds: the final records say where each run sampled, every epoch's
loss and the test accuracy are the same (the device sampler's blocks are the host
pipeline's, bit for bit), and the median test accuracy clears --min-acc. Prints one line
per seed. Exit 0 when all of that holds, else 1 with what differs.

    sample_on_check.py PARTITA PARTS WORKDIR --seeds 0,1,2 --min-acc 0.7 -- TRAIN_FLAGS...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def train(partita, parts, out, seed, extra, flags):
    cmd = [partita, "-q", "train", "--parts", parts, "--seed", str(seed), "--force",
           "--metrics-out", out] + extra + flags
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {run.returncode}\n{run.stdout}")
    epochs, final = [], None
    with open(out) as f:
        for line in f:
            record = json.loads(line)
            if record["type"] == "epoch":
                epochs.append(record["loss"])
            elif record["type"] == "final":
                final = record
    if final is None:
        sys.exit(f"{out}: no final record")
    return epochs, final


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("partita")
    ap.add_argument("parts")
    ap.add_argument("work")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--min-acc", type=float, default=0.7)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    flags = argv[cut + 1:]
    os.makedirs(args.work, exist_ok=True)
    problems, accs = [], []
    for seed in [int(s) for s in args.seeds.split(",")]:
        host_losses, host = train(args.partita, args.parts, f"{args.work}/host-{seed}.jsonl",
                                  seed, ["--sample-on", "host"], flags)
        dev_losses, dev = train(args.partita, args.parts, f"{args.work}/device-{seed}.jsonl",
                                seed, ["--sample-on", "device", "--device", "cpu"], flags)
        same = "equal" if host_losses == dev_losses else "DIFFERENT"
        print(f"seed {seed}: host test_acc={host['test_acc']:.4f} "
              f"device test_acc={dev['test_acc']:.4f}, {len(host_losses)} epoch losses {same}")
        if host.get("sample_on") != "host" or dev.get("sample_on") != "device":
            problems.append(f"seed {seed}: sample_on {host.get('sample_on')!r} and "
                            f"{dev.get('sample_on')!r}, expected 'host' and 'device'")
        if host_losses != dev_losses:
            problems.append(f"seed {seed}: losses differ: {host_losses} vs {dev_losses}")
        if host["test_acc"] != dev["test_acc"]:
            problems.append(f"seed {seed}: test_acc {host['test_acc']} vs {dev['test_acc']}")
        accs.append(dev["test_acc"])
    median = statistics.median(accs)
    print(f"median test_acc {median:.4f} (minimum {args.min_acc})")
    if median < args.min_acc:
        problems.append(f"median test_acc {median} < {args.min_acc}")
    for p in problems:
        print("mismatch:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
