#pragma once
// Runs a launch plan's mpirun (or srun) under supervision, for `partita launch`.
//
// Running is supervised, not exec'd: mpirun (or srun) runs as a child in a process group
// of its own; SIGINT/SIGTERM/SIGHUP to launch are forwarded to that group. Its stderr flows
// through launch, which relays it (less Open MPI's banners that only restate a rank's
// non-zero exit after the rank's own `error:` line: relay_filter.h) and watches for a line
// saying the job failed (is_failure_line). mpirun can hang for ever after such a failure, retrying
// a daemon on a host it cannot reach; so once the job has failed, or launch was asked to stop, and
// mpirun has not exited within --teardown-timeout seconds, launch kills the group and every
// process mpirun started on this host (SIGTERM, then SIGKILL 2 s later) and exits 1 with
// one `error:` line. Otherwise launch exits with mpirun's status (128 + N for signal N).
#include <functional>
#include <string>

#include "launch_plan.h"

namespace partita::cli {

// Runs plan.argv as described above; returns launch's exit status. Throws Error (with the
// message of stuck_message) when it had to kill a job whose mpirun did not end. When launch
// was interrupted and no rank's "interrupted..." line came through (mpirun may drop a
// rank's last words as it tears the job down), it prints the line `interrupt_notice` returns
// (if given and not empty), called once the job has ended, so that it can say what the
// job left behind (e.g. whether a checkpoint is there to resume from).
int supervise(const LaunchPlan& plan, double teardown_timeout,
              const std::function<std::string()>& interrupt_notice = {});

}  // namespace partita::cli
