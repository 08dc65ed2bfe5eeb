#!/usr/bin/env python3
"""One layout rule, stated once and used everywhere (issue 37): docs/launch.md states it,
and README.md and `partita launch --help` say the same; the commands launch builds agree
with it: each rank's thread flags match the cores it is bound to (`--map-by ...:PE=K` and
`--threads K` for generate and partition; `--torch-threads K` for infer), and a 1-part
directory runs one rank per host on a one-socket host. Prints what is wrong and exits 1.

    layout_rule_check.py --partita BIN --source DIR
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

RULE = "one rank per socket"
STALE = ["one rank per core", "at most 16 per host", "at most 16, the same number"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--partita", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    problems = []
    work = tempfile.mkdtemp(prefix="layout-rule-")
    a.parts1 = os.path.join(work, "p1")  # a tiny 1-part partition
    subprocess.run([a.partita, "-q", "generate", "--nodes", "200", "--out",
                    os.path.join(work, "g")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([a.partita, "-q", "partition", "--dataset", os.path.join(work, "g"),
                    "--num-parts", "1", "--out", a.parts1], check=True,
                   stdout=subprocess.DEVNULL)

    def text_of(name):
        with open(os.path.join(a.source, name)) as f:
            return " ".join(f.read().split())  # line breaks as spaces

    env = dict(os.environ, PATH="/usr/bin:/bin")
    help_text = " ".join(subprocess.run([a.partita, "launch", "--help"], capture_output=True,
                                        text=True, check=True).stdout.split())
    for where, text in [("docs/launch.md", text_of("docs/launch.md")),
                        ("README.md", text_of("README.md")), ("launch --help", help_text)]:
        if RULE not in text.lower():
            problems.append(f"{where} does not state the rule ('{RULE}')")
        for stale in STALE:
            if stale in text.lower() and where != "docs/launch.md":  # launch.md has history
                problems.append(f"{where} still says '{stale}'")

    def dry_run(*words):
        r = subprocess.run([a.partita, "launch", "--dry-run", "--cores-per-host", "8",
                            "--bind", "core", "--", *words], capture_output=True, text=True,
                           env=env)
        if r.returncode != 0:
            problems.append(f"launch --dry-run -- {' '.join(words)}: exit {r.returncode}: "
                            f"{r.stderr.strip()}")
        return r.stdout.strip()

    for words, flag in [(["generate", "--nodes", "100", "--out", "/tmp/g"], "--threads"),
                        (["partition", "--dataset", "/tmp/g", "--out", "/tmp/p"], "--threads"),
                        (["infer", "--parts", a.parts1, "--checkpoint-dir", "/tmp/ck",
                          "--out", "/tmp/o"], "--torch-threads")]:
        line = dry_run(*words)
        pe = re.search(r":PE=(\d+) ", line)
        threads = re.search(re.escape(flag) + r" (\d+)$", line)
        if not pe or not threads or pe.group(1) != threads.group(1):
            problems.append(f"{words[0]}: the ranks' {flag} does not match the cores each is "
                            f"bound to: {line}")
    line = dry_run("train", "--parts", a.parts1)
    if not line.startswith("mpirun -np 1 ") or not line.endswith("--torch-threads 7 --threads 1"):
        problems.append(f"train on a 1-part directory, 8 cores, 1 socket: not one rank of 7 "
                        f"torch threads and 1 sampler thread: {line}")
    subprocess.run(["rm", "-rf", work], check=True)
    for p in problems:
        print(f"layout_rule_check: {p}")
    print(f"layout_rule_check: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
