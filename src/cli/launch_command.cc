#include "launch_command.h"

#include <algorithm>
#include <filesystem>

#include "global_flags.h"
#include "launch_hosts.h"
#include "partita/core/error.h"

namespace partita::cli {
namespace {

// The subcommand that makes no sense on several ranks at once (info only reads and prints).
bool is_local_command(const std::string& word) { return word == "info"; }

// Flags of the launched command whose value is a path: made absolute against the launcher's
// directory, since a remote rank may not start there (Open MPI falls back to $HOME when it
// is missing on that host), and rank 0 may not run on the launcher's host. A program's
// flags are its own business, but for --parts, which launch reads too.
std::vector<std::string> path_flags(const LaunchCommand& command) {
  if (!command.program.empty()) return {"--parts"};
  std::vector<std::string> flags{"--parts", "--checkpoint-dir", "--metrics-out"};
  if (command.subcommand == "infer") flags.push_back("--out");  // written by rank 0
  if (command.subcommand == "partition") {                      // read and written by every rank
    flags.push_back("--dataset");
    flags.push_back("--out");
  }
  if (command.subcommand == "generate") flags.push_back("--out");  // each rank its chunks
  return flags;
}

}  // namespace

std::string absolute_dir(const std::string& dir, const std::string& cwd) {
  if (dir.empty() || dir[0] == '/') return dir;
  return (std::filesystem::path(cwd) / dir).lexically_normal().string();
}

const std::vector<std::string>& launchable_commands() {
  // Keep in step with the subcommands that run under MPI (through runtime::run_mpi_ranks).
  static const std::vector<std::string> commands{"train", "infer", "sample-bench", "partition",
                                                 "generate"};
  return commands;
}

LaunchCommand check_command(const std::vector<std::string>& command) {
  const size_t i = command_index(command);
  PARTITA_CHECK(i < command.size(), UsageError,
                "launch: nothing to launch (put the command after --, e.g. "
                "partita launch -- train --parts DIR)");
  const std::string& word = command[i];
  PARTITA_CHECK(word != "launch", UsageError,
                "launch: cannot launch `launch` itself; give {} or a program after --",
                kLaunchable);
  PARTITA_CHECK(!is_local_command(word), UsageError,
                "launch: '{}' is not a distributed command; launch runs {} or a program "
                "(run `partita {}` directly)",
                word, kLaunchable, word);
  PARTITA_CHECK(word.empty() || word[0] != '-', UsageError,
                "launch: '{}' before the command; only -q/--quiet/-v/--verbose may come "
                "before {}",
                word, kLaunchable);
  const auto& ok = launchable_commands();
  const bool partita_command = std::find(ok.begin(), ok.end(), word) != ok.end();
  PARTITA_CHECK(partita_command || i == 0, UsageError,
                "launch: '{}' is not a partita command ({}), and -q/-v before a program are "
                "partita's",
                word, kLaunchable);
  LaunchCommand result;
  if (!partita_command) {
    // Another program: its arguments are its own; only --parts tells the ranks.
    result.program = word;
    for (size_t j = 1; j < command.size(); ++j) {
      if (command[j] == "--parts" && j + 1 < command.size()) result.parts_dir = command[j + 1];
      if (command[j].rfind("--parts=", 0) == 0) result.parts_dir = command[j].substr(8);
    }
    return result;
  }
  result.subcommand = word;
  for (size_t j = i + 1; j < command.size(); ++j) {
    // The value of `flag` at word j (--flag VALUE, which moves j on, or --flag=VALUE).
    auto value_of = [&](const std::string& flag) -> std::optional<std::string> {
      if (command[j] == flag) {
        PARTITA_CHECK(j + 1 < command.size(), UsageError, "launch: {} needs a value", flag);
        return command[++j];
      }
      if (command[j].rfind(flag + "=", 0) == 0) return command[j].substr(flag.size() + 1);
      return std::nullopt;
    };
    if (std::optional<std::string> dir = value_of("--parts")) {
      result.parts_dir = std::move(dir);
    } else if (std::optional<std::string> dir = value_of("--checkpoint-dir")) {
      result.checkpoint_dir = std::move(dir);
    } else if (std::optional<std::string> device = value_of("--device")) {
      result.device = std::move(device);
    } else if (std::optional<std::string> topology = value_of("--topology")) {
      result.topology = std::move(topology);
    } else if (std::optional<std::string> servers =
                   word == "infer" ? std::nullopt : value_of("--servers")) {  // infer has none
      const std::string& value = *servers;
      PARTITA_CHECK(!value.empty() && value.size() <= 9 &&
                        value.find_first_not_of("0123456789") == std::string::npos &&
                        (value == "0" || value[0] != '0'),
                    UsageError, "--servers: '{}' is not a count of server ranks", value);
      result.servers = std::stoi(value);
    }
  }
  return result;
}

bool is_python(const std::string& program) {
  const std::string name = std::filesystem::path(program).filename().string();
  return name.rfind("python", 0) == 0 &&
         name.find_first_not_of("0123456789.", 6) == std::string::npos;
}

size_t python_script_index(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-c" || a == "-m" || a == "-" || a == "--") return args.size();
    if (a == "-W" || a == "-X" || a == "--check-hash-based-pycs") {
      ++i;  // its value follows
      continue;
    }
    if (a.empty() || a[0] != '-') return i;
  }
  return args.size();
}

std::vector<std::string> absolutize_paths(std::vector<std::string> command,
                                          const LaunchCommand& checked, const std::string& cwd) {
  const std::vector<std::string> flags = path_flags(checked);
  const size_t first = command_index(command);
  if (!checked.program.empty()) {
    if (command[0].find('/') != std::string::npos) command[0] = absolute_dir(command[0], cwd);
    if (is_python(command[0])) {
      const std::vector<std::string> args(command.begin() + 1, command.end());
      const size_t script = python_script_index(args);
      if (script < args.size()) command[script + 1] = absolute_dir(args[script], cwd);
    }
  }
  for (size_t i = first + 1; i < command.size(); ++i) {
    for (const std::string& flag : flags) {
      if (command[i] == flag && i + 1 < command.size()) {
        command[i + 1] = absolute_dir(command[i + 1], cwd);
        ++i;
        break;
      }
      if (command[i].rfind(flag + "=", 0) == 0) {
        command[i] = flag + "=" + absolute_dir(command[i].substr(flag.size() + 1), cwd);
        break;
      }
    }
  }
  return command;
}

Workload workload_of(const LaunchCommand& command) {
  if (command.subcommand == "train") return Workload::kTrain;
  if (command.subcommand == "infer") return Workload::kInfer;
  if (command.subcommand == "sample-bench") return Workload::kSampleBench;
  if (command.subcommand == "partition" || command.subcommand == "generate")
    return Workload::kWorkers;
  return Workload::kProgram;
}

std::vector<std::pair<std::string, int>> given_flag_values(const std::vector<std::string>& command,
                                                           const std::vector<std::string>& flags) {
  std::vector<std::pair<std::string, int>> out;
  if (flags.empty()) return out;
  auto number = [](const std::string& word) {
    const std::optional<int> n = parse_positive(word);
    return n ? *n : (word == "0" ? 0 : -1);
  };
  for (size_t i = command_index(command) + 1; i < command.size(); ++i) {
    for (const std::string& flag : flags) {
      if (command[i] == flag)
        out.emplace_back(flag, i + 1 < command.size() ? number(command[i + 1]) : -1);
      else if (command[i].rfind(flag + "=", 0) == 0)
        out.emplace_back(flag, number(command[i].substr(flag.size() + 1)));
    }
  }
  return out;
}

}  // namespace partita::cli
