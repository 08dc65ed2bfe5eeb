#!/usr/bin/env python3
"""Runs the hostile-input corpus against the `partita` binary (see README.md here).

Every case is a directory cases/<name>/ with a case.json: a command line that must fail
with exit code 1 or 2 and exactly one `error: ...` line matching a regex, within a time
limit (a hang is a failure). Inputs are a base fixture (a small valid dataset or partition
directory, built once by `setup`) copied and then edited by the case, and/or files checked
in under cases/<name>/input/.

    run_corpus.py --partita BIN --fixtures DIR setup         # build the base fixtures
    run_corpus.py --partita BIN --fixtures DIR case NAME...  # run cases (CTest: one each)
    run_corpus.py --partita BIN all                          # fixtures in a temp dir + all

Standard library only (no numpy): .npy and .gz inputs are written byte by byte.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
TIME_LIMIT_S = 60
STAMP = "fixtures.ok"
FIXTURES = ("numpy", "ogb", "parts1", "parts2", "parts3", "eparts2", "hetero", "hparts1",
            "hparts2")
SKIP = 77  # a case marked "skip" (a known bug, named there): CTest reports it skipped
# Output that must never appear: crashes, uncaught exceptions, Open MPI's abort banner or
# its note on a rank killed by a signal, sanitizer reports.
FORBIDDEN = ("terminate called", "Traceback", "Segmentation fault", "core dumped",
             "MPI_ABORT", "exited on signal", "AddressSanitizer", "runtime error:", "Aborted",
             "internal:")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

# The OGB-layout base: 6 nodes, 7 edges, 2 features, 3 classes, split "random".
OGB_BASE = {
    "raw/num-node-list.csv.gz": "6\n",
    "raw/num-edge-list.csv.gz": "7\n",
    "raw/edge.csv.gz": "0,1\n1,2\n2,0\n3,4\n4,5\n5,3\n2,3\n",
    "raw/node-feat.csv.gz": "0.5,1\n1,0.25\n-1,2\n3,3\n0,0\n1e-3,-2.5\n",
    "raw/node-label.csv.gz": "0\n1\n2\n0\n1\n2\n",
    "split/random/train.csv.gz": "0\n1\n2\n",
    "split/random/valid.csv.gz": "3\n",
    "split/random/test.csv.gz": "4\n5\n",
}


class CaseError(Exception):
    pass


# ---- input files written byte by byte ------------------------------------------------

NPY_FORMATS = {"<i8": "q", "<i4": "i", "<f4": "f", "<f8": "d", "|u1": "B", "|b1": "?"}


def npy_bytes(descr, shape, values, header=None):
    """A version-1.0 .npy file; `header` replaces the dict (to write lying headers)."""
    if header is None:
        dims = f"{shape[0]}," if len(shape) == 1 else ", ".join(str(d) for d in shape)
        header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}"
    text = header.encode("latin-1")
    total = 10 + len(text) + 1
    text += b" " * ((total + 63) // 64 * 64 - total) + b"\n"
    data = struct.pack("<" + NPY_FORMATS[descr] * len(values), *values) if values else b""
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data


def npy_data(path):
    """(descr, offset of the data) of an existing .npy file written by partita."""
    raw = open(path, "rb").read(4096)
    length = struct.unpack("<H", raw[8:10])[0]
    descr = re.search(r"'descr': '([^']+)'", raw[10:10 + length].decode("latin-1")).group(1)
    return descr, 10 + length


def gz_bytes(text):
    return gzip.compress(text.encode(), mtime=0)


def payload(op):
    """The bytes an op writes: text, hex, gzip (text compressed) or npy."""
    if "text" in op:
        return op["text"].encode()
    if "hex" in op:
        return bytes.fromhex(op["hex"])
    if "gzip" in op:
        return gz_bytes(op["gzip"])
    if "npy" in op:  # {"descr", "shape", "values" | "fill" | "data_bytes", "header"}
        n = op["npy"]
        shape = n.get("shape", [len(n.get("values", []))])
        if "data_bytes" in n:  # a header (often a lying one) and that many zero bytes
            return npy_bytes(n["descr"], shape, [], n.get("header")) + b"\0" * n["data_bytes"]
        count = 1
        for d in shape:
            count *= d
        values = n["values"] if "values" in n else [number(n["fill"])] * count
        return npy_bytes(n["descr"], shape, [number(v) for v in values], n.get("header"))
    raise CaseError(f"op {op}: no text, hex, gzip or npy")


def number(v):
    """JSON has no NaN or infinity: "nan", "inf" and "-inf" stand for them."""
    return float(v) if isinstance(v, str) else v


def json_node(doc, keys):
    for k in keys[:-1]:
        doc = doc[k]
    return doc, keys[-1]


def apply_op(root, op):
    """Applies one edit to the copy in `root`; paths in ops are relative to it."""
    kinds = ("delete", "truncate", "flip", "append", "write", "mkdir", "mkfifo", "json_set",
             "json_delete", "fix_crc", "npy_set", "npy_fill")
    kind = next((k for k in kinds if k in op), None)
    if kind is None:
        raise CaseError(f"op {op}: expected one of {', '.join(kinds)}")
    path = os.path.join(root, op[kind]) if isinstance(op[kind], str) else None
    if kind == "delete":
        (shutil.rmtree if os.path.isdir(path) else os.remove)(path)
    elif kind == "truncate":
        size = op["size"] if op["size"] >= 0 else os.path.getsize(path) + op["size"]
        os.truncate(path, size)
    elif kind == "flip":
        with open(path, "r+b") as f:
            off = op["offset"] if op["offset"] >= 0 else os.path.getsize(path) + op["offset"]
            f.seek(off)
            b = f.read(1)[0]
            f.seek(off)
            f.write(bytes([b ^ op.get("mask", 0xFF)]))
    elif kind == "append":
        with open(path, "ab") as f:
            f.write(payload(op))
    elif kind == "write":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(payload(op))
    elif kind == "mkdir":
        os.makedirs(path, exist_ok=True)
    elif kind == "mkfifo":  # a named pipe where a file should be: opening it must not block
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.mkfifo(path)
    elif kind in ("json_set", "json_delete"):
        doc = json.load(open(path))
        parent, key = json_node(doc, op["key"])
        if kind == "json_set":
            parent[key] = op["value"]
        else:
            del parent[key]
        json.dump(doc, open(path, "w"), indent=1)
    elif kind == "fix_crc":  # after editing arrays: make partita.json's checksums right again
        doc = json.load(open(path))
        for rel, entry in doc["files"].items():
            entry["crc32"] = zlib.crc32(open(os.path.join(root, rel), "rb").read())
        json.dump(doc, open(path, "w"), indent=1)
    elif kind in ("npy_set", "npy_fill"):  # element `index` / every element of an array
        descr, offset = npy_data(path)
        fmt = "<" + NPY_FORMATS[descr]
        size = struct.calcsize(fmt)
        count = (os.path.getsize(path) - offset) // size
        with open(path, "r+b") as f:
            for i in [op["index"]] if kind == "npy_set" else range(count):
                f.seek(offset + i * size)
                f.write(struct.pack(fmt, number(op["value"])))


# ---- fixtures --------------------------------------------------------------------------

def run_ok(argv):
    r = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise CaseError(f"fixture command failed ({r.returncode}): {' '.join(argv)}\n"
                        f"{r.stdout}{r.stderr}")


def setup(partita, fixtures):
    if os.path.exists(fixtures):
        shutil.rmtree(fixtures)
    os.makedirs(fixtures)
    numpy = os.path.join(fixtures, "numpy")
    run_ok([partita, "-q", "generate", "--nodes", "300", "--avg-degree", "4", "--feat-dim", "4",
            "--classes", "3", "--seed", "1", "--threads", "1", "--out", numpy])
    for name, parts, method in (("parts1", 1, "metis"), ("parts2", 2, "metis"),
                                ("parts3", 3, "random")):
        run_ok([partita, "-q", "partition", "--dataset", numpy, "--num-parts", str(parts),
                "--method", method, "--threads", "1", "--out", os.path.join(fixtures, name)])
    # Link prediction (`train --task link`): `numpy` with held-out edges.
    run_ok([partita, "-q", "partition", "--dataset", numpy, "--num-parts", "2", "--method",
            "metis", "--edge-split", "0.1,0.1", "--seed", "1", "--threads", "1", "--out",
            os.path.join(fixtures, "eparts2")])
    # The typed base: a mag-shaped graph (4 node types, 3 of them featureless; 4 relations),
    # partitioned with the reverse relations (8 in all).
    hetero = os.path.join(fixtures, "hetero")
    run_ok([partita, "-q", "generate", "--hetero", "mag", "--nodes", "400", "--feat-dim", "4",
            "--classes", "3", "--seed", "1", "--threads", "1", "--out", hetero])
    for name, parts in (("hparts1", 1), ("hparts2", 2)):
        run_ok([partita, "-q", "partition", "--dataset", hetero, "--num-parts", str(parts),
                "--threads", "1", "--out", os.path.join(fixtures, name)])
    ogb = os.path.join(fixtures, "ogb")
    for rel, text in OGB_BASE.items():
        os.makedirs(os.path.dirname(os.path.join(ogb, rel)), exist_ok=True)
        with open(os.path.join(ogb, rel), "wb") as f:
            f.write(gz_bytes(text))
    # The bases themselves must be valid, or every edit of them proves nothing.
    run_ok([partita, "-q", "partition", "--dataset", ogb, "--num-parts", "2", "--threads", "1",
            "--out", os.path.join(fixtures, "ogb-parts")])
    for name in ("parts1", "parts2", "parts3", "eparts2", "ogb-parts", "hparts1",
                 "hparts2"):
        run_ok([partita, "-q", "info", "--verify", os.path.join(fixtures, name)])
    open(os.path.join(fixtures, STAMP), "w").close()


# ---- one case ----------------------------------------------------------------------------

def load_case(name):
    path = os.path.join(CASES, name, "case.json")
    if not os.path.isfile(path):
        raise CaseError(f"{path}: no such case")
    case = json.load(open(path))
    for key in ("command", "exit", "error"):
        if key not in case:
            raise CaseError(f"{path}: missing key '{key}'")
    if case["exit"] not in (1, 2):
        raise CaseError(f"{path}: exit must be 1 or 2")
    return case


class CaseSkipped(Exception):
    pass


def run_case(name, partita, fixtures, mpirun):
    case = load_case(name)
    if "skip" in case:  # the command does not fail as it should yet: a known bug
        raise CaseSkipped(case["skip"])
    if not os.path.exists(os.path.join(fixtures, STAMP)):
        raise CaseError(f"{fixtures}: fixtures not built (run setup first)")
    work = tempfile.mkdtemp(prefix=f"corpus-{name}-")
    try:
        places = {"partita": partita, "case": os.path.join(CASES, name),
                  "input": os.path.join(work, "input"), "tmp": os.path.join(work, "tmp")}
        places.update({f: os.path.join(fixtures, f) for f in FIXTURES})
        os.makedirs(places["tmp"])
        if "base" in case:
            shutil.copytree(places[case["base"]], places["input"])
        own = os.path.join(CASES, name, "input")
        if os.path.isdir(own):
            shutil.copytree(own, places["input"], dirs_exist_ok=True)
        for op in case.get("edit", []):
            apply_op(places["input"], op)

        def fill(text, escape=False):
            return re.sub(r"\{(\w+)\}", lambda m: (re.escape if escape else str)(
                places[m.group(1)]) if m.group(1) in places else m.group(0), text)

        argv = [partita] + [fill(a) for a in case["command"]]
        ranks = case.get("ranks", 0)
        # Under a bare mpirun, Open MPI's notes ("Primary job terminated normally, but 1
        # process returned a non-zero exit code...") may follow the error line; `partita
        # launch` filters them out, so nothing may follow its error line.
        bare_mpirun = ranks > 0
        if ranks:
            argv = [mpirun, "-np", str(ranks), "--oversubscribe"] + argv
        env = dict(ENV, **case.get("env", {}))
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
        try:
            out, err = proc.communicate(timeout=case.get("time_limit", TIME_LIMIT_S))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise CaseError(f"hang: no exit within {case.get('time_limit', TIME_LIMIT_S)} s")
        shown = f"\n$ {' '.join(argv)}\n--- exit {proc.returncode}\n--- stderr:\n{err}--- stdout:\n{out}"
        problems = []
        rc = proc.returncode
        if rc < 0 or rc > 128:
            problems.append(f"killed by a signal (exit {rc})")
        elif rc != case["exit"]:
            problems.append(f"exit code {rc}, expected {case['exit']}")
        lines = err.splitlines()
        errors = [line for line in lines if line.startswith("error:")]
        if len(errors) != 1:
            problems.append(f"{len(errors)} `error:` lines on stderr, expected exactly 1")
        elif not re.search(fill(case["error"], escape=True), errors[0][len("error: "):]):
            problems.append(f"the error line does not match /{case['error']}/")
        elif not bare_mpirun and lines[-1] != errors[0]:
            problems.append("output follows the error line")
        if any(line.startswith("error:") for line in out.splitlines()):
            problems.append("`error:` on stdout")
        for bad in FORBIDDEN:
            if bad in out or bad in err:
                problems.append(f"output contains '{bad}'")
        if problems:
            raise CaseError("; ".join(problems) + shown)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def all_cases():
    return sorted(d for d in os.listdir(CASES) if os.path.isfile(os.path.join(CASES, d, "case.json")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partita", required=True, help="the partita binary")
    ap.add_argument("--fixtures", help="directory of the base fixtures")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("mode", choices=["setup", "case", "all"])
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    partita = os.path.abspath(args.partita)
    try:
        if args.mode == "setup":
            setup(partita, args.fixtures)
            return 0
        temp = None
        fixtures = args.fixtures
        if args.mode == "all":
            temp = tempfile.mkdtemp(prefix="corpus-fixtures-")
            fixtures = os.path.join(temp, "f")
            setup(partita, fixtures)
        failed = skipped = 0
        for name in args.names or all_cases():
            start = time.monotonic()
            try:
                run_case(name, partita, fixtures, args.mpirun)
                print(f"ok    {name} ({time.monotonic() - start:.1f} s)", flush=True)
            except CaseSkipped as e:
                skipped += 1
                print(f"skip  {name}: {e}", flush=True)
            except CaseError as e:
                failed += 1
                print(f"FAIL  {name}: {e}")
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
        # Cases run one per CTest test: one skipped and none failed is SKIP, which CTest
        # reports as skipped (SKIP_RETURN_CODE).
        return 1 if failed else SKIP if skipped and args.mode == "case" else 0
    except CaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
