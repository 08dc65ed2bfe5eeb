"""Runs a script RUNS times, each run a process of its own that ends as a fresh one does
(the script's own exit, then the interpreter's: atexit, module teardown, C++ static
destructors), but without paying `import torch` (about 1.5 s of CPU) per run: this process
imports partita (and with it torch) once, starts no thread and no MPI, and forks a child per
run, AT_ONCE at a time. Each child runs the script as __main__ with argv [SCRIPT, ARGS...]
and leaves through SystemExit to the interpreter's finalization, as `python3 SCRIPT ARGS`
would. Used by test_exit.py (issue 29: the crash was at exit) for its one-process runs;
runs under mpirun cannot share a parent (MPI starts once per process), so those are still
one `mpirun python3 SCRIPT` per run.

    python3 exit_runs.py RUNS AT_ONCE TIMEOUT_S OUTDIR SCRIPT [ARGS...]

Prints `ok RUNS runs` and exits 0 when every child exited 0; otherwise one line per failed
run (its exit code, or the signal that killed it, or `timeout`), then the first failed run's
output, and exits 1.
"""
import os
import signal
import sys
import time
import traceback

import partita  # noqa: F401  (torch and the extension, loaded once for every child)


# The child's script namespace, kept to the interpreter's exit as a script's __main__ is.
script_globals = None


def child(script, args, out):
    """Runs in the forked child: the script, then the interpreter's own exit. Never returns."""
    global script_globals
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.argv = [script] + args
    with open(script) as f:
        code = compile(f.read(), script, "exec")
    script_globals = {"__name__": "__main__", "__file__": script, "__builtins__": __builtins__}
    status = 0
    try:
        exec(code, script_globals)
    except SystemExit as e:
        status = e.code
    except BaseException:  # the traceback, as the interpreter would print it
        traceback.print_exc()
        status = 1
    # Leave as a script does: SystemExit out of the top level, through Py_FinalizeEx.
    raise SystemExit(status)


def main():
    runs, at_once, timeout_s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    outdir, script, args = sys.argv[4], sys.argv[5], sys.argv[6:]
    running = {}  # pid -> (run, start time)
    failed = []  # (run, why)
    started = 0
    while started < runs or running:
        while started < runs and len(running) < at_once:
            out = os.path.join(outdir, f"run-{started}.txt")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                child(script, args, out)  # raises SystemExit in the child only
            running[pid] = (started, time.monotonic())
            started += 1
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for p, (run, t0) in list(running.items()):
                if now - t0 > timeout_s:
                    os.kill(p, signal.SIGKILL)
                    os.waitpid(p, 0)
                    del running[p]
                    failed.append((run, f"timeout after {timeout_s:g} s"))
            time.sleep(0.02)
            continue
        run, _ = running.pop(pid)
        if os.WIFSIGNALED(status):
            failed.append((run, f"killed by signal {os.WTERMSIG(status)}"))
        elif os.WEXITSTATUS(status) != 0:
            failed.append((run, f"exit {os.WEXITSTATUS(status)}"))
    if not failed:
        print(f"ok {runs} runs")
        return 0
    failed.sort()
    for run, why in failed:
        print(f"run {run}: {why}")
    with open(os.path.join(outdir, f"run-{failed[0][0]}.txt"), errors="replace") as f:
        print(f"run {failed[0][0]}'s output:\n{f.read()[-3000:]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
