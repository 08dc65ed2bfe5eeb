#pragma once
// `partita launch`: the pure part. From the launch flags and the facts the caller gathered
// (environment, binary path, the hostfile's text, the partition's part count) builds the
// argv of the mpirun or srun command to exec. No I/O, no globals: every input is an
// argument, so the whole decision table is unit-testable. Errors are thrown as
// UsageError (bad flags, exit 2), FormatError (bad hostfile) or Error, with the messages
// the CLI prints.
//
// plan_launch goes in steps (launch_plan.cc): the request (flags and the command after --,
// launch_command.h), the hosts (--hosts, --hostfile or Slurm; launch_hosts.h), the partition,
// the ranks and their threads (launch_layout.h), then the command: the launcher with its
// placement flags and the ranks' command line. Quoting the result for a shell is
// shell_quote.h's; watching the job it starts is supervise.h's and relay_filter.h's.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch_binding.h"
#include "launch_command.h"
#include "launch_hosts.h"
#include "launch_layout.h"
#include "partita/core/log.h"

namespace partita::cli {

// The launch flags, as given on the command line.
struct LaunchOptions {
  std::string hosts;                   // --hosts "h1,h2"; empty: not given
  std::string hostfile;                // --hostfile path; empty: not given
  std::optional<int> procs_per_host;   // --procs-per-host; unset: derived from the parts
  bool oversubscribe = false;          // --oversubscribe (srun: --overcommit)
  std::optional<std::string> mpirun;   // --mpirun; unset: "mpirun" looked up on PATH
  std::vector<std::string> env;        // --env NAME: more variables to forward (mpirun -x)
  std::optional<Bind> bind;            // --bind; unset: kCore when every rank of a host can
                                       // have a core of its own, else kNone
  std::optional<int> cores_per_host;   // --cores-per-host; unset: LaunchFacts::host_cores
  std::optional<int> torch_threads;    // --torch-threads per rank; unset: the layout rule's
  std::optional<int> sampler_threads;  // --threads (sampler) per rank; unset: the rule's
  bool dry_run = false;                // --dry-run: problems with --parts DIR only warn
  std::vector<std::string> command;    // everything after `--`
  // What the flag parser could not place (unknown flags, and `--` itself when given).
  std::vector<std::string> unparsed;
};

// What the caller found out about the world before planning.
struct LaunchFacts {
  std::map<std::string, std::string> env;  // the launcher's environment
  std::string partita_binary;              // absolute path of this binary (/proc/self/exe)
  std::string cwd;                         // to make a relative --parts DIR absolute
  LogLevel log_level = LogLevel::kInfo;    // -q/-v of the launcher, passed on to the ranks
  // Physical cores of the launching host, assumed the same on every host (launch cannot
  // see a remote host's); 0: unknown, then no binding flags unless --bind is given.
  int host_cores = 0;
  // Sockets (or NUMA nodes, the larger count) among those cores; assumed the same on every
  // host. Ranks are spread evenly over them and none spans two.
  int host_sockets = 1;
  // Launch's CPU affinity is narrower than its cgroup's CPUs (taskset): Open MPI would map
  // local ranks onto CPUs outside it, so a local launch does not bind them (they inherit
  // launch's mask) unless --bind says otherwise.
  bool affinity_restricted = false;
  bool stderr_is_terminal = false;  // the ranks then draw a progress bar (PARTITA_PROGRESS)
  // Whether LaunchCommand::program, when there is one, can be run: an executable file (a
  // path), or an executable on PATH. False: launch refuses it (--dry-run: warns).
  bool program_found = true;
  // The --hostfile's text; unset with hostfile_error saying why it could not be read.
  std::optional<std::string> hostfile_text;
  std::string hostfile_error;
  // Parts of the --parts directory (read_meta); 0 with parts_error saying why it is unknown.
  int parts = 0;
  std::string parts_error;
};

struct LaunchPlan {
  std::vector<std::string> argv;  // argv[0]: the launcher, as given (found on PATH)
  int ranks = 0;                  // processes the launcher will start
  // Variables to set in the launcher's environment before running argv (forwarded to the
  // ranks with -x, or by srun's whole-environment default).
  std::map<std::string, std::string> env;
  // The host each rank runs on, by rank (mpirun's ppr mapping fills hosts in order);
  // empty inside Slurm, where the allocation decides. For messages about lost hosts.
  std::vector<std::string> rank_hosts;
  Layout layout;                      // ranks and threads per host (launch_layout.h)
  std::string layout_line;            // the one line that says the layout (info level)
  std::vector<std::string> notes;     // lines to log at info level
  std::vector<std::string> warnings;  // lines to log as warnings
};

// The whole plan; see `partita launch --help` and docs/launch.md for the rules.
LaunchPlan plan_launch(const LaunchOptions& options, const LaunchFacts& facts);

}  // namespace partita::cli
