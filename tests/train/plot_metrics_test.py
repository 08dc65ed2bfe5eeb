#!/usr/bin/python3
"""scripts/plot_metrics.py on a real `train --metrics-out` file: a valid PNG of the expected
size, a resumed file's repeated epoch counted once, and one `error:` line for bad input.

    plot_metrics_test.py SCRIPT METRICS_JSONL WORK_DIR
"""
import json
import os
import struct
import subprocess
import sys

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def png_size(path):
    """(width, height) from the IHDR chunk; fails unless the file is a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_SIGNATURE, f"{path}: not a PNG ({head[:8]!r})"
    assert head[12:16] == b"IHDR", f"{path}: no IHDR chunk first"
    return struct.unpack(">II", head[16:24])


def expect_error(result, text):
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], lines


def main():
    script, metrics, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    records = [json.loads(line) for line in open(metrics) if line.strip()]
    epochs = sorted({r["epoch"] for r in records if r.get("type") == "epoch"})
    assert epochs, f"{metrics}: no epoch records"

    out = os.path.join(work, "metrics.png")
    result = run(script, metrics, out, "--title", "test")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {out}: {len(epochs)} epochs\n", result.stdout
    assert png_size(out) == (1100, 420), png_size(out)
    assert os.path.getsize(out) > 20000, os.path.getsize(out)  # drawn, not blank

    # A resumed run appends a run record and its epochs again: each epoch counts once.
    resumed = os.path.join(work, "resumed.jsonl")
    with open(resumed, "w") as f:
        for record in records + records:
            f.write(json.dumps(record) + "\n")
    result = run(script, resumed, os.path.join(work, "resumed.png"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(f": {len(epochs)} epochs\n"), result.stdout

    expect_error(run(script, os.path.join(work, "absent.jsonl"), out), "cannot read")
    garbage = os.path.join(work, "garbage.jsonl")
    with open(garbage, "w") as f:
        f.write(json.dumps(records[0]) + "\n{not json\n")
    expect_error(run(script, garbage, out), "garbage.jsonl:2: not a JSON record")
    only_run = os.path.join(work, "run-only.jsonl")
    with open(only_run, "w") as f:
        f.write(json.dumps({"type": "run"}) + "\n")
    expect_error(run(script, only_run, out), "no epoch records")
    expect_error(run(script, metrics, os.path.join(work, "out.jpg")), "must be a .png")
    print(f"ok: {out} is a {png_size(out)[0]}x{png_size(out)[1]} PNG of {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
