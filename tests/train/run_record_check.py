"""The run record of `train --metrics-out` holds each flag's value as the user wrote it: an
enum flag given by name is recorded by that name (never the enum's number), so that a
record can be read and replayed.

    run_record_check.py PARTITA PARTS WORK

Exit 0 when every flag below is recorded as given; else prints what differs and exits 1.
"""
import json
import os
import subprocess
import sys

# Enum flags with a value other than their default, as a user writes them.
GIVEN = {"topology": "full", "host-local": "off", "sample-on": "host", "optimizer": "sgd",
         "progress": "off", "eval": "full", "model": "gcn"}


def main():
    partita, parts, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "record.jsonl")
    argv = [partita, "-q", "train", "--parts", parts, "--epochs", "1", "--max-steps", "1",
            "--hidden", "8", "--fanouts", "3,3", "--eval-every", "0", "--metrics-out", out,
            "--force"]
    for flag, value in GIVEN.items():
        argv += [f"--{flag}", value]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        settings = json.loads(f.readline())["settings"]
    wrong = {k: settings.get(k) for k, v in GIVEN.items() if settings.get(k) != v}
    for flag, got in wrong.items():
        print(f"FAIL: --{flag} {GIVEN[flag]} is recorded as {got!r}")
    if not wrong:
        print(f"ok: {len(GIVEN)} enum flags recorded by name")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
