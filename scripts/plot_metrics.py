#!/usr/bin/python3
"""Draw a training run's loss and accuracy per epoch from `partita train --metrics-out`.

    scripts/plot_metrics.py metrics.jsonl out.png [--title TEXT]

Reads the JSON lines `train --metrics-out` writes (docs/training.md): the "run" record,
one "epoch" record per epoch and a "final" one. A resumed run appends to the same file, so
an epoch may appear twice: the later record wins. Writes a PNG with two panels, the
training loss, and the training accuracy with the validation metric (accuracy, or the
--metric of a link task) and the final test figure as a dashed line. Needs Debian's
python3-matplotlib (scripts/setup.sh installs it). Bad input gets one `error:` line and
exit code 1.
"""
import argparse
import json
import sys


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def read_records(path):
    """The records of the file, in order; fails naming the first line that is not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")
    except UnicodeDecodeError:
        fail(f"{path}: not a metrics file (not UTF-8 text)")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{path}:{number}: not a JSON record ({e.msg})")
        if not isinstance(record, dict):
            fail(f"{path}:{number}: not a JSON object")
        records.append(record)
    return records


def validation_key(epoch_record):
    """The epoch record's validation figure: val_acc, or val_<metric> of a link task."""
    keys = [k for k in epoch_record if k.startswith("val_")]
    return keys[0] if keys else None


def collect(path, records):
    """(epochs by number, later records winning; the last final record or None)."""
    epochs = {}
    final = None
    for record in records:
        kind = record.get("type")
        if kind == "epoch":
            epoch = record.get("epoch")
            if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
                fail(f"{path}: an epoch record without a valid epoch number: {epoch!r}")
            epochs[epoch] = record
        elif kind == "final":
            final = record
    if not epochs:
        fail(f"{path}: no epoch records (is it the file of `partita train --metrics-out`?)")
    return [epochs[e] for e in sorted(epochs)], final


def series(epochs, key):
    """(epoch numbers, values) of `key` where it is a number (validation may be skipped)."""
    xs, ys = [], []
    for record in epochs:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            xs.append(record["epoch"])
            ys.append(value)
    return xs, ys


def plot(epochs, final, out, title):
    try:
        import matplotlib
    except ImportError:
        fail("matplotlib is not installed (apt-get install python3-matplotlib)")
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    figure, (loss_axes, metric_axes) = plt.subplots(1, 2, figsize=(11, 4.2))
    loss_axes.plot(*series(epochs, "loss"), marker="o", color="tab:red")
    loss_axes.set_title("training loss")
    loss_axes.set_xlabel("epoch")
    loss_axes.grid(alpha=0.3)

    metric_axes.plot(*series(epochs, "train_acc"), marker="o", label="train_acc")
    key = validation_key(epochs[-1])
    if key:
        metric_axes.plot(*series(epochs, key), marker="s", label=key)
    if final:
        for test_key in ("test_acc", "test_auc"):
            if isinstance(final.get(test_key), (int, float)):
                metric_axes.axhline(final[test_key], linestyle="--", color="gray",
                                    label=f"{test_key} {final[test_key]:.4f}")
                break
    metric_axes.set_title("accuracy" if key in (None, "val_acc") else f"accuracy and {key}")
    metric_axes.set_xlabel("epoch")
    metric_axes.grid(alpha=0.3)
    metric_axes.legend(loc="best")
    for axes in (loss_axes, metric_axes):
        axes.xaxis.get_major_locator().set_params(integer=True)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    try:
        figure.savefig(out, dpi=100)
    except OSError as e:
        fail(f"{out}: cannot write ({e.strerror})")


def main():
    parser = argparse.ArgumentParser(
        description="Draw loss and accuracy per epoch from `partita train --metrics-out`.")
    parser.add_argument("metrics", help="the JSON-lines file of train --metrics-out")
    parser.add_argument("out", help="the PNG to write")
    parser.add_argument("--title", default="", help="a title over both panels")
    args = parser.parse_args()
    if not args.out.lower().endswith(".png"):
        fail(f"{args.out}: the output must be a .png file")
    epochs, final = collect(args.metrics, read_records(args.metrics))
    plot(epochs, final, args.out, args.title)
    print(f"wrote {args.out}: {len(epochs)} epochs")


if __name__ == "__main__":
    main()
