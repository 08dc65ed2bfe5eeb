#pragma once
// `partita launch`: the pure part. From the launch flags and the facts the caller gathered
// (environment, binary path, the hostfile's text, the partition's part count) builds the
// argv of the mpirun or srun command to exec. No I/O, no globals: every input is an
// argument, so the whole decision table is unit-testable. Errors are thrown as
// UsageError (bad flags, exit 2), FormatError (bad hostfile) or Error, with the messages
// the CLI prints.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch_layout.h"
#include "partita/core/log.h"

namespace partita::cli {

// How ranks are pinned to CPUs (--bind). kCore: each rank gets cores/ranks-per-host cores
// of its own; kSocket: a socket each (ranks on a socket share it); kNone: no pinning.
enum class Bind { kCore, kSocket, kNone };

// "core", "socket" or "none"; throws UsageError naming --bind otherwise.
Bind parse_bind(const std::string& word);

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

// The checked command after `--`: a partita command, or another program.
struct LaunchCommand {
  std::string subcommand;  // "train", "infer", "sample-bench" or "partition"; or empty
  std::string program;     // else the program: "python3", "./run.sh", ...
  std::optional<std::string> parts_dir;       // the --parts value as given, if any
  std::optional<std::string> checkpoint_dir;  // the --checkpoint-dir value as given, if any
  int servers = 0;                            // --servers P (server-client mode), 0 if absent
  std::optional<std::string> device;          // the --device value as given, if any
  std::optional<std::string> topology;        // the --topology value as given, if any
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

// One host line of an Open MPI hostfile.
struct HostfileEntry {
  std::string host;
  int slots = 0;  // slots=N on the line; 0: not given (Open MPI then counts cores)
  int line = 0;   // 1-based line number, for messages
};

// The distributed subcommands launch accepts (train, infer, sample-bench, partition,
// generate).
const std::vector<std::string>& launchable_commands();

// Checks the command after `--`: optional -q/-v flags, then a launchable command;
// or, first, a word that names no partita command: a program to run on every rank instead
// of partita (`python3 script.py ...`), whose arguments are not checked, beyond a
// `--parts DIR` that gives the ranks as for partita's commands. Throws UsageError
// ("launch: nothing to launch ...", "launch: 'x' is not ...").
LaunchCommand check_command(const std::vector<std::string>& command);

// `dir` made absolute against `cwd`. Lexical, not canonical: a symlink here may be a real
// directory on another host, and the ranks must use the same path as the user.
std::string absolute_dir(const std::string& dir, const std::string& cwd);

// "h1,h2" -> {"h1", "h2"}. Throws UsageError naming --hosts on an empty or malformed name
// or a host listed twice.
std::vector<std::string> parse_hosts(const std::string& list);

// Open MPI hostfile text: one host per line, optional `slots=N` and other key=value
// fields, `#` comments. Throws FormatError "<path>:<line>: ..." or "<path>: lists no hosts".
std::vector<HostfileEntry> parse_hostfile(const std::string& text, const std::string& path);

// The whole plan; see `partita launch --help` and docs/launch.md for the rules.
LaunchPlan plan_launch(const LaunchOptions& options, const LaunchFacts& facts);

// `partita launch` watching mpirun (cmd_launch.cc): whether one line of the job's stderr
// says the job failed: a rank's `error: ...` line, or Open MPI's own report of a rank that
// exited non-zero or was killed, or of a daemon it lost.
bool is_failure_line(const std::string& line);

// Whether failure line `line` should replace `kept` as the line stuck_message explains: the
// first line of all, unless a rank's own `error:` line comes after Open MPI's banner (it
// names the rank that did not answer; MPI_ABORT's banner can arrive before it).
bool replaces_failure_line(const std::string& kept, const std::string& line);

// The `error:` line launch prints when it had to kill mpirun `waited_s` seconds after the
// job failed with `first_failure` (a line for which is_failure_line holds; may be empty
// when launch itself was interrupted). Names the hosts of the ranks `first_failure`
// mentions besides the reporting one, as the likely unreachable hosts.
std::string stuck_message(const LaunchPlan& plan, const std::string& first_failure,
                          double waited_s);

// POSIX shell quoting: words made only of safe characters stay bare, others are
// single-quoted ('' for the empty word, ' as '\'').
std::string shell_quote(const std::string& word);
// The words quoted and joined by single spaces: one line a shell runs as `argv`.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace partita::cli
