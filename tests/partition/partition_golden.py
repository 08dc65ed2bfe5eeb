#!/usr/bin/env python3
"""Same input, same flags, same bytes: a fixed set of `partita partition` runs whose files
(path, dtype, shape and CRC-32 of every array, as partita.json lists them) and figures are
recorded in tests/partition/partition_golden.json and must come out exactly the same. One
process and mpirun run one pipeline (partition/pipeline.h); with one part the assignment is
the same on any rank count, so those runs must also equal each other byte for byte.

    partition_golden.py --partita BIN --mpirun MPIRUN --datasets DIR --work DIR compare FILE
    partition_golden.py --partita BIN --mpirun MPIRUN --datasets DIR --work DIR record FILE

--datasets is ../shared/datasets (Cora, heco-acm); the other inputs are generated. Exit 0
when everything equals the file (compare) or after writing it (record); otherwise prints
every difference and exits 1. Record on the CI machine's kind (METIS's results are those of
Debian's libmetis).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
GEN = ["--nodes", "2000", "--avg-degree", "6", "--feat-dim", "6", "--classes", "4",
       "--seed", "3", "--threads", "1"]
# name: (ranks, input, flags); ranks 1 runs partita alone, more under mpirun.
RUNS = {
    "cora_metis3": (1, "cora", ["--num-parts", "3", "--seed", "1"]),
    "cora_random2": (1, "cora", ["--num-parts", "2", "--method", "random", "--seed", "2"]),
    "cora_balanced3": (1, "cora", ["--num-parts", "3", "--balance-train", "--balance-edges"]),
    "cora_split2": (1, "cora", ["--num-parts", "2", "--undirected", "--edge-split", "0.1,0.1"]),
    "cora_bf16": (1, "cora", ["--num-parts", "2", "--feature-dtype", "bfloat16"]),
    "acm_metis2": (1, "acm", ["--num-parts", "2", "--split", "heco20", "--balance-train"]),
    "chunked_metis3": (1, "chunked", ["--num-parts", "3", "--undirected"]),
    "ds_coarse2_np2": (2, "ds", ["--num-parts", "2", "--undirected"]),
    "mag_coarse3_np3": (3, "mag", ["--num-parts", "3", "--balance-train"]),
    # One part: every rank count gives one process's bytes.
    "ds_split1": (1, "ds", ["--num-parts", "1", "--undirected", "--edge-split", "0.05,0.1"]),
    "ds_split1_np3": (3, "ds", ["--num-parts", "1", "--undirected", "--edge-split", "0.05,0.1"]),
    "chunked_one": (1, "chunked", ["--num-parts", "1", "--feature-dtype", "float16"]),
    "chunked_one_np2": (2, "chunked", ["--num-parts", "1", "--feature-dtype", "float16"]),
    "mag_one": (1, "mag", ["--num-parts", "1"]),
    "mag_one_np2": (2, "mag", ["--num-parts", "1"]),
}
SAME = [("ds_split1", "ds_split1_np3"), ("chunked_one", "chunked_one_np2"),
        ("mag_one", "mag_one_np2")]


def sh(argv):
    r = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)}: exit {r.returncode}\n{r.stdout}{r.stderr}")


def inputs(args):
    d = os.path.join(args.work, "inputs")
    out = {"cora": os.path.join(args.datasets, "ogb-layout", "cora"),
           "acm": os.path.join(args.datasets, "ogb-layout", "heco-acm"),
           "ds": os.path.join(d, "ds"), "chunked": os.path.join(d, "chunked"),
           "mag": os.path.join(d, "mag")}
    if not os.path.isdir(d):
        sh([args.partita, "-q", "generate", *GEN, "--out", out["ds"]])
        sh([args.partita, "-q", "generate", *GEN, "--layout", "chunked", "--chunk-rows", "5000",
            "--node-chunk-rows", "700", "--feature-dtype", "bfloat16", "--out", out["chunked"]])
        sh([args.partita, "-q", "generate", "--hetero", "mag", "--nodes", "3000", "--feat-dim",
            "4", "--classes", "3", "--seed", "1", "--threads", "1", "--out", out["mag"]])
    return out


def summary(directory):
    """What must not change: every file's path, dtype, shape and CRC, in partita.json's
    order; the figures."""
    with open(os.path.join(directory, "partita.json")) as f:
        meta = json.load(f)
    s = meta["summary"]
    for key in ("phase_seconds", "peak_rss_bytes", "rank_peak_rss_bytes"):
        s.pop(key, None)
    meta.pop("dataset", None)  # the path it was made from
    meta["files"] = [[path, f["dtype"], f["shape"], f["crc32"]] for path, f in meta["files"].items()]
    return meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--partita", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("mode", choices=["compare", "record"])
    ap.add_argument("file")
    args = ap.parse_args()
    data = inputs(args)
    got = {}
    for name, (ranks, dataset, flags) in RUNS.items():
        out = os.path.join(args.work, name)
        shutil.rmtree(out, ignore_errors=True)
        argv = [args.partita, "-q", "partition", "--dataset", data[dataset], "--out", out,
                "--threads", "1", *flags]
        if ranks > 1:
            argv = [args.mpirun, "-np", str(ranks), "--oversubscribe", *argv]
        sh(argv)
        got[name] = summary(out)
    bad = []
    for a, b in SAME:
        if got[a]["files"] != got[b]["files"]:
            bad.append(f"{a} and {b}: different files (one process vs mpirun)")
    if args.mode == "record":
        with open(args.file, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
    else:
        with open(args.file) as f:
            want = json.load(f)
        for name in RUNS:
            if want.get(name) != got[name]:
                bad.append(f"{name}: differs from {args.file}:\n want {json.dumps(want.get(name))}"
                           f"\n got  {json.dumps(got[name])}")
    for line in bad:
        print("FAIL:", line)
    if not bad:
        print(f"partition golden: {len(RUNS)} runs {args.mode}ed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
