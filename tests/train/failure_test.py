#!/usr/bin/env python3
"""Failure is loud and bounded: `partita train` on 2 ranks under mpirun when a rank is
frozen (SIGSTOP) or killed (SIGKILL) mid-epoch, when mpirun gets Ctrl-C (SIGINT), and over
many epochs (no growth of threads, descriptors or memory; nothing left in the temp dirs).
In server-client mode (4 ranks, --servers 2) when a server or a trainer is frozen.

    failure_test.py CASE PARTITA PARTS_DIR
    CASE: frozen | killed | interrupt | hygiene | frozen_server | frozen_trainer

Exit 0 when the case behaves; otherwise prints what went wrong and exits 1. Every wait is
bounded: a hang is a failure, never a stuck test.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def start(partita, parts, extra, tmp, ranks=2):
    """mpirun -np RANKS partita train ..., in its own session, output to files under tmp."""
    out = open(os.path.join(tmp, "out.txt"), "w")
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", partita, "train", "--parts", parts,
           "--batch-size", "64", "--hidden", "16", "--seed", "1"] + extra
    print("running:", " ".join(cmd))
    env = dict(ENV, TMPDIR=os.path.join(tmp, "tmpdir"))
    os.makedirs(env["TMPDIR"], exist_ok=True)
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True), out


def output(tmp):
    with open(os.path.join(tmp, "out.txt")) as f:
        return f.read()


def rank_pid(marker, rank, deadline):
    """PID of the train process of MPI rank `rank` whose command line holds `marker` (this
    run's own metrics path, so that a rank left over from an earlier case never matches)."""
    while time.time() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read().split(b"\0")
                if b"train" not in cmdline or marker.encode() not in cmdline:
                    continue
                if cmdline[0].endswith(b"mpirun"):
                    continue
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
                if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
                    return int(pid)
            except OSError:
                continue
        time.sleep(0.1)
    fail(f"rank {rank} never started")


def wait_for_epochs(metrics, count, deadline, proc):
    """Waits until the metrics file holds `count` epoch records."""
    while time.time() < deadline:
        if proc.poll() is not None:
            fail(f"training ended early with exit code {proc.returncode}")
        if os.path.exists(metrics):
            with open(metrics) as f:
                if sum(1 for line in f if '"type":"epoch"' in line) >= count:
                    return
        time.sleep(0.05)
    fail(f"no {count} epochs in time")


def wait_exit(proc, seconds):
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        fail(f"still running {seconds} s after the failure: a hang")


def run_failure(partita, parts, tmp, sig, timeout, limit, pattern, victim=1, servers=0,
                extra=()):
    """Sends `sig` to rank `victim` after 2 epochs; with servers, 4 ranks in server-client
    mode."""
    metrics = os.path.join(tmp, "m.jsonl")
    extra = (["--servers", str(servers)] if servers else []) + list(extra)
    proc, out = start(partita, parts, extra + ["--epochs", "100000", "--timeout", str(timeout),
                                               "--metrics-out", metrics], tmp,
                      ranks=4 if servers else 2)
    deadline = time.time() + 60
    try:
        pid = rank_pid(metrics, victim, deadline)
        wait_for_epochs(metrics, 2, deadline, proc)
        os.kill(pid, sig)
    except BaseException:  # never leave the job running behind a failed case
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    t0 = time.time()
    code = wait_exit(proc, limit)
    elapsed = time.time() - t0
    if sig == signal.SIGSTOP:  # it may survive a failed abort: do not leave it stopped
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    text = output(tmp)
    print(text[-3000:])
    print(f"exit code {code} after {elapsed:.1f} s")
    if code == 0:
        fail("exit code 0 after a rank failed")
    if not re.search(pattern, text):
        fail(f"no line matching {pattern!r}")


def case_frozen(partita, parts, tmp):
    # The others hit --timeout (5 s) in a request or a collective and name the frozen rank.
    run_failure(partita, parts, tmp, signal.SIGSTOP, 5, 40,
                r"error: rank 0: .*rank 1 did not answer")


def case_killed(partita, parts, tmp):
    # mpirun notices the death and stops the job; its message names the lost rank.
    run_failure(partita, parts, tmp, signal.SIGKILL, 60, 30, r"rank 1\b.*(exited|killed|signal)")


def case_frozen_server(partita, parts, tmp):
    # Server-client mode: a trainer's request to the frozen server times out, naming it.
    # --host-local off: on one host the trainers would read the servers' parts from memory
    # and send them no requests, so a frozen server would only be noticed at the end.
    run_failure(partita, parts, tmp, signal.SIGSTOP, 5, 40,
                r"error: rank [23]: .*rank 1 did not answer", victim=1, servers=2,
                extra=["--host-local", "off"])


def case_frozen_trainer(partita, parts, tmp):
    # Server-client mode: the servers' liveness pings (every --timeout) or the other
    # trainer's timed-out allreduce name the frozen trainer, whichever comes first (after
    # the first abort, mpirun's SIGCONT may let it answer the later pings).
    run_failure(partita, parts, tmp, signal.SIGSTOP, 5, 40,
                r"error: rank [0-2]: .*rank 3 did not answer", victim=3, servers=2)


def case_interrupt(partita, parts, tmp):
    ckpt = os.path.join(tmp, "ckpt")
    metrics = os.path.join(tmp, "m.jsonl")
    proc, out = start(partita, parts, ["--epochs", "100000", "--checkpoint-dir", ckpt,
                                       "--metrics-out", metrics], tmp)
    wait_for_epochs(metrics, 3, time.time() + 60, proc)
    os.kill(proc.pid, signal.SIGINT)  # what Ctrl-C sends mpirun
    t0 = time.time()
    code = wait_exit(proc, 20)
    print(output(tmp)[-2000:])
    print(f"exit code {code} {time.time() - t0:.1f} s after SIGINT")
    if code == 0:
        fail("exit code 0 after Ctrl-C")
    names = sorted(n for n in os.listdir(ckpt) if n.startswith("checkpoint-"))
    if not names:
        fail("no checkpoint left")
    done = int(names[-1][len("checkpoint-"):-len(".pt")])
    # The latest checkpoint is intact: resuming from it trains one more epoch.
    resumed = subprocess.run(
        ["mpirun", "-np", "2", "--oversubscribe", partita, "train", "--parts", parts,
         "--batch-size", "64", "--hidden", "16", "--seed", "1", "--checkpoint-dir", ckpt,
         "--resume", "--epochs", str(done + 1)],
        env=ENV, capture_output=True, text=True, timeout=120)
    print(resumed.stdout[-1000:], resumed.stderr[-1000:])
    if resumed.returncode != 0:
        fail(f"resuming from {names[-1]} failed")
    if f"({done} epochs done)" not in resumed.stderr:
        fail(f"did not resume from {names[-1]}")
    if not re.search(r"^test_acc=0\.\d+$", resumed.stdout, re.M):
        fail("no test_acc after resuming")


def case_hygiene(partita, parts, tmp):
    metrics = os.path.join(tmp, "m.jsonl")
    shm_before = set(os.listdir("/dev/shm"))
    proc, out = start(partita, parts, ["--epochs", "50", "--metrics-out", metrics], tmp)
    code = wait_exit(proc, 240)
    print(output(tmp)[-600:])
    if code != 0:
        fail(f"exit code {code}")
    with open(metrics) as f:
        epochs = [json.loads(l) for l in f if '"type":"epoch"' in l]
    if len(epochs) != 50:
        fail(f"{len(epochs)} epoch records, expected 50")
    base, last = epochs[4], epochs[-1]  # after warm-up
    growth = last["rss_bytes"] - base["rss_bytes"]
    print(f"epoch 5 -> 50: rss {base['rss_bytes']} -> {last['rss_bytes']} ({growth / 2**20:+.1f} "
          f"MiB), threads {base['os_threads']} -> {last['os_threads']}, fds {base['open_fds']} -> "
          f"{last['open_fds']}")
    if any(e["os_threads"] != base["os_threads"] for e in epochs[4:]):
        fail("thread count changes across epochs")
    if any(e["open_fds"] != base["open_fds"] for e in epochs[4:]):
        fail("open file descriptors change across epochs")
    if growth > 16 * 2**20:
        fail(f"resident memory grew {growth / 2**20:.1f} MiB over 45 epochs")
    left = os.listdir(os.path.join(tmp, "tmpdir"))
    if left:
        fail(f"left in TMPDIR: {left}")
    new_shm = set(os.listdir("/dev/shm")) - shm_before
    if new_shm:
        fail(f"left in /dev/shm: {sorted(new_shm)}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    case, partita, parts = sys.argv[1:]
    cases = {"frozen": case_frozen, "killed": case_killed, "interrupt": case_interrupt,
             "hygiene": case_hygiene, "frozen_server": case_frozen_server,
             "frozen_trainer": case_frozen_trainer}
    if case not in cases:
        sys.exit(f"unknown case {case}")
    tmp = tempfile.mkdtemp(prefix=f"partita-{case}-")
    try:
        cases[case](partita, os.path.abspath(parts), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
