#!/usr/bin/env python3
"""Ctrl-C says how far `partita train` got, and suggests --resume only when a checkpoint is
there to resume from (issue 37, section 3.4). Each signal is sent at a point the run cannot
leave by itself, found from a printed line, never after a guessed sleep:

  sequence     no signal: with -v the rank logs each change of what Ctrl-C would say
               ("on Ctrl-C: <line>"): starting, epoch 1 before the first checkpoint, epoch 2
               with one, the final test, finished (with the printed test_acc), and a
               resumed run's start offers the checkpoint
  starting     SIGINT to mpirun while rank 0 waits in MPI_Init for rank 1, which a wrapper
               holds back: "interrupted while starting, before epoch 1: ..." (the user saw
               nothing at all)
  epoch1       SIGINT alone in epoch 1 (hundreds of steps): nothing to resume, and no
               checkpoint directory to resume from (the user was told to resume from it)
  finished     SIGINT once training and the test are done, while the process is stuck
               writing test_acc= to a full pipe: nothing to resume (the user was told to
               resume)

    interrupt_stages_test.py PARTITA MPIRUN P1_DIR P2_DIR WORK_DIR
"""
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
FAST = ["--fanouts", "3,3", "--batch-size", "256"]
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
failures = []


def fail(name, why, err=""):
    failures.append(name)
    print(f"FAIL: {name}: {why}\n{err}", flush=True)


def wait_for(path, pattern, proc, seconds):
    """Until file `path` has a line matching `pattern` (True), `proc` ends or time is up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path) and re.search(pattern, open(path).read(), re.M):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def interrupted_lines(text):
    return [line for line in text.splitlines() if line.startswith("interrupted")]


def sequence(partita, p1, work):
    """No signal: the lines Ctrl-C would print, in order; returns the epoch line's length."""
    ck = os.path.join(work, "seq")
    r = subprocess.run([partita, "-v", "train", "--parts", p1, *FAST, "--epochs", "2",
                        "--checkpoint-dir", ck], env=ENV, capture_output=True, text=True,
                       timeout=300)
    notes = re.findall(r"^on Ctrl-C: (.*)$", r.stderr, re.M)
    acc = re.findall(r"^test_acc=(\S+)$", r.stdout, re.M)
    resume = f"resume with --resume --checkpoint-dir {ck} (and the same other flags)"
    want = [
        f"interrupted while starting, before epoch 1: nothing was trained, and {ck} holds no "
        "checkpoint to resume from",
        f"interrupted in epoch 1, before the first checkpoint: {ck} holds none, so there is "
        "nothing to resume; run the same command again to start over",
        f"interrupted in epoch 2; {resume} to go on after epoch 1",
        f"interrupted in the final test, after the last epoch; {resume} to test the model of "
        "epoch 2",
        f"interrupted after the run had finished (test_acc={acc[0] if acc else '?'}): nothing "
        "to resume",
    ]
    if r.returncode != 0 or notes != want:
        fail("sequence", f"exit {r.returncode}; lines:\n  " + "\n  ".join(notes) +
             "\nwanted:\n  " + "\n  ".join(want), r.stderr)
    else:
        print("ok: sequence:", len(notes), "lines, the last:", notes[-1], flush=True)
    # A resumed run offers the checkpoint from its start.
    r2 = subprocess.run([partita, "-v", "train", "--parts", p1, *FAST, "--epochs", "3",
                         "--resume", "--checkpoint-dir", ck], env=ENV, capture_output=True,
                        text=True, timeout=300)
    notes2 = re.findall(r"^on Ctrl-C: (.*)$", r2.stderr, re.M)
    first = f"interrupted while starting; {resume} to go on after epoch 2"
    if r2.returncode != 0 or not notes2 or notes2[0] != first:
        fail("sequence (resumed)", f"exit {r2.returncode}; first line {notes2[:1]}, wanted "
             f"{first!r}", r2.stderr)
    else:
        print("ok: sequence (resumed): starts with", first, flush=True)
    epoch_lines = [line for line in r.stdout.splitlines() if line.startswith("epoch=1 ")]
    return len(epoch_lines[0]) + 1 if epoch_lines else 0


def starting(partita, mpirun, p2, work):
    """SIGINT to mpirun while rank 0 waits for rank 1 (held back 60 s) in MPI_Init."""
    ck = os.path.join(work, "starting")
    hold = os.path.join(work, "hold.sh")
    with open(hold, "w") as f:
        f.write('[ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && sleep 60\nexec "$@"\n')
    err = os.path.join(work, "starting.err")
    with open(err, "w") as e:
        proc = subprocess.Popen([mpirun, "-np", "2", "--oversubscribe", "sh", hold, partita,
                                 "-v", "train", "--parts", p2, *FAST, "--epochs", "5",
                                 "--checkpoint-dir", ck], env=ENV, stdout=subprocess.DEVNULL,
                                stderr=e, start_new_session=True)
    # Rank 0's first line says it is starting; it stays in MPI_Init until rank 1 comes.
    seen = wait_for(err, r"^on Ctrl-C: interrupted while starting", proc, 30)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
    text = open(err).read()
    want = (f"interrupted while starting, before epoch 1: nothing was trained, and {ck} holds "
            "no checkpoint to resume from")
    if not seen or code == 0 or interrupted_lines(text) != [want]:
        fail("starting", f"line seen {seen}, exit {code}, lines {interrupted_lines(text)}",
             text)
    else:
        print(f"ok: starting (mpirun exit {code}): {want}", flush=True)


def epoch1(partita, p1, work):
    """SIGINT alone in epoch 1: 75 steps of 32 seeds, interrupted once the first began."""
    ck = os.path.join(work, "epoch1")
    err = os.path.join(work, "epoch1.err")
    with open(err, "w") as e:
        proc = subprocess.Popen([partita, "-v", "train", "--parts", p1, "--fanouts", "3,3",
                                 "--batch-size", "32", "--epochs", "100", "--checkpoint-dir",
                                 ck], env=ENV, stdout=subprocess.DEVNULL, stderr=e)
    seen = wait_for(err, r"^on Ctrl-C: interrupted in epoch 1,", proc, 60)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=60)
    text = open(err).read()
    want = (f"interrupted in epoch 1, before the first checkpoint: {ck} holds none, so there is "
            "nothing to resume; run the same command again to start over")
    if os.path.exists(os.path.join(ck, "checkpoint-000001.pt")):
        print("note: epoch1: epoch 1 ended before the signal; not checked", flush=True)
    elif not seen or code != -signal.SIGINT or interrupted_lines(text) != [want]:
        fail("epoch1", f"line seen {seen}, exit {code}, lines {interrupted_lines(text)}", text)
    else:
        print("ok: epoch1:", want, flush=True)


def finished(partita, p1, work, epoch_line):
    """SIGINT after training and the test, while test_acc= waits for room in a full pipe:
    stdout is a pipe of one page that this test fills up to the epoch line's length and 8
    bytes more (the 16 of `test_acc=0.xxxx` cannot fit)."""
    ck = os.path.join(work, "finished")
    err = os.path.join(work, "finished.err")
    read_end, write_end = os.pipe()
    size = fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    os.set_blocking(write_end, False)
    os.write(write_end, b"#" * (size - epoch_line - 8))
    os.set_blocking(write_end, True)
    with open(err, "w") as e:
        proc = subprocess.Popen([partita, "-v", "train", "--parts", p1, *FAST, "--epochs", "1",
                                 "--checkpoint-dir", ck], env=ENV, stdout=write_end, stderr=e)
    os.close(write_end)
    seen = wait_for(err, r"^on Ctrl-C: interrupted after the run had finished", proc, 120)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=60)
    finally:
        fcntl.fcntl(read_end, fcntl.F_SETFL, os.O_NONBLOCK)
        try:
            out = os.read(read_end, 1 << 16).decode(errors="replace")
        except BlockingIOError:
            out = ""
        os.close(read_end)
    text = open(err).read()
    acc = re.findall(r"^on Ctrl-C: interrupted after the run had finished \((test_acc=\S+)\)",
                     text, re.M)
    want = f"interrupted after the run had finished ({acc[0] if acc else '?'}): nothing to resume"
    if "test_acc=" in out:
        fail("finished", "test_acc= got through the full pipe: the run was not held", text)
    elif not seen or code != -signal.SIGINT or interrupted_lines(text) != [want]:
        fail("finished", f"line seen {seen}, exit {code}, lines {interrupted_lines(text)}", text)
    else:
        print("ok: finished:", want, flush=True)


def main():
    partita, mpirun, p1, p2, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    epoch_line = sequence(partita, p1, work)
    starting(partita, mpirun, p2, work)
    epoch1(partita, p1, work)
    if epoch_line:
        finished(partita, p1, work, epoch_line)
    else:
        fail("finished", "no epoch line in the sequence run to size the pipe by")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
