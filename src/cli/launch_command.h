#pragma once
// `partita launch`: the command after `--`, pure. Which commands launch runs, the check of
// the words after -- (a partita command and the few of its flags launch reads, or another
// program), and what the ranks get instead of the words as given: relative paths made
// absolute. No I/O; planning (launch_plan.h) uses it.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch_layout.h"

namespace partita::cli {

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

// The launchable subcommands as messages list them.
inline constexpr const char* kLaunchable = "train, infer, sample-bench, partition, generate";

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

// `command` (which check_command made `checked`) with the relative values of its path flags
// made absolute against `cwd`: --parts, --checkpoint-dir, --metrics-out, and what the
// command writes (infer's --out; partition's --dataset and --out; generate's --out). A
// remote rank may not start in the launcher's directory. For a program, only --parts, the
// program when it is a relative path (./run.sh), and the script a Python interpreter runs.
std::vector<std::string> absolutize_paths(std::vector<std::string> command,
                                          const LaunchCommand& checked, const std::string& cwd);

// Whether `program` is a Python interpreter (python, python3, python3.11, /usr/bin/python3).
bool is_python(const std::string& program);

// The index in `args` (a Python interpreter's arguments) of the script it runs, or
// args.size() when it runs none (-c, -m, or stdin).
size_t python_script_index(const std::vector<std::string>& args);

// What the command's ranks run, for their threads (launch_layout.h).
Workload workload_of(const LaunchCommand& command);

// The values of `flags` given in `command` after its subcommand (`--flag V` or `--flag=V`),
// in order; a value that is not a number is left to the command to reject (-1).
std::vector<std::pair<std::string, int>> given_flag_values(const std::vector<std::string>& command,
                                                           const std::vector<std::string>& flags);

}  // namespace partita::cli
