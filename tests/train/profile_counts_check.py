#!/usr/bin/env python3
"""The CPU proxies of a GPU step (issue 38), through the command line.

Runs `partita train --kernels generic --profile` (the device-generic ops a GPU runs, on the
CPU) with GraphSAGE 3 x 256 and fanouts 15,10,5 on PARTS and checks the counts it prints:
  training thread: ops_per_step <= 250 and host_syncs_per_step == 0 (its losses and counts
  stay on the device; --log-every's default reads them once per epoch, outside the steps);
  training and loader threads together: host_syncs_per_step <= 3 per layer + 1.
Counts, not times: the same on any machine.

    profile_counts_check.py PARTITA PARTS
"""
import re
import subprocess
import sys

LAYERS = 3
MAX_OPS = 250


def main():
    partita, parts = sys.argv[1], sys.argv[2]
    cmd = [partita, "-q", "train", "--parts", parts, "--kernels", "generic", "--layers",
           str(LAYERS), "--hidden", "256", "--fanouts", "15,10,5", "--batch-size", "256",
           "--epochs", "1", "--max-steps", "3", "--eval-every", "0", "--profile"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"profile_counts_check: exit status {r.returncode}: {r.stderr[-2000:]}")
    counts = {}
    for who in ("training thread", "loader threads"):
        m = re.search(rf"^{who}: ops_per_step=([0-9.]+) host_syncs_per_step=([0-9.]+) "
                      rf"all_ops_per_step=([0-9.]+)", r.stderr, re.M)
        if not m:
            sys.exit(f"profile_counts_check: no '{who}:' counts in:\n{r.stderr[-3000:]}")
        counts[who] = tuple(float(v) for v in m.groups())
    ops, syncs, all_ops = counts["training thread"]
    loader_syncs = counts["loader threads"][1]
    print(f"training thread: {ops} ops ({all_ops} nested included) and {syncs} host syncs per "
          f"step; loader threads: {loader_syncs} host syncs per step")
    failures = []
    if not 20 <= ops <= MAX_OPS:
        failures.append(f"ops_per_step {ops} not in [20, {MAX_OPS}]")
    if all_ops < ops:
        failures.append(f"all_ops_per_step {all_ops} < ops_per_step {ops}")
    if syncs != 0:
        failures.append(f"the training thread syncs {syncs} times per step, not 0")
    if syncs + loader_syncs > 3 * LAYERS + 1:
        failures.append(f"{syncs + loader_syncs} host syncs per step, over 3 per layer + 1")
    if failures:
        sys.exit("profile_counts_check: " + "; ".join(failures))


if __name__ == "__main__":
    main()
