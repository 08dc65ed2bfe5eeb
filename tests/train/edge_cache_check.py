#!/usr/bin/env python3
"""Checks that a `partita train --edge-features --cache-ratio R --metrics-out` file shows
the edge cache at work: the final record's "edge_cache_rows" > 0 and every epoch's
"edge_cache_hits" > 0; and that a run of the same flags without the cache shows none
(0 rows, 0 hits). Exit 0 when so; otherwise prints what differs and exits 1. The losses
are compared by compare_runs.py.

    edge_cache_check.py WITHOUT.jsonl WITH.jsonl
"""
import json
import sys


def read(path):
    with open(path) as f:
        records = [json.loads(line) for line in f]
    epochs = [r for r in records if r["type"] == "epoch"]
    finals = [r for r in records if r["type"] == "final"]
    if not epochs or len(finals) != 1:
        sys.exit(f"{path}: {len(epochs)} epoch records, {len(finals)} final records")
    return epochs, finals[0]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    (plain_epochs, plain), (cached_epochs, cached) = read(sys.argv[1]), read(sys.argv[2])
    problems = []
    if plain["edge_cache_rows"] != 0 or cached["edge_cache_rows"] <= 0:
        problems.append(f"edge_cache_rows {plain['edge_cache_rows']} without, "
                        f"{cached['edge_cache_rows']} with the cache")
    for p, c in zip(plain_epochs, cached_epochs):
        if p["edge_cache_hits"] != 0 or c["edge_cache_hits"] <= 0:
            problems.append(f"epoch {c['epoch']}: edge_cache_hits {p['edge_cache_hits']} "
                            f"without, {c['edge_cache_hits']} with the cache")
    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"edge cache: {cached['edge_cache_rows']} rows, hits per epoch "
          f"{[c['edge_cache_hits'] for c in cached_epochs]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
