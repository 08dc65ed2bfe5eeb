// partita <subcommand>: the single entry point of the engine.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>

#include "commands.h"
#include "flags.h"
#include "partita/core/error.h"
#include "partita/core/log.h"

namespace {

constexpr int kExitFailure = 1;  // bad input data, I/O failure, internal error
constexpr int kExitUsage = 2;    // bad flags

// This process's rank in a job started by mpirun or srun, from the launcher's environment
// (flags are checked before MPI starts); 0 when no launcher started it.
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::atoi(value);
  }
  return 0;
}

// Prints `error: <message>` and returns `code`. A usage error is the same on every rank of
// a job, so only rank 0 prints it: the job shows it once.
int print_error(const std::string& message, int code) {
  if (code == kExitUsage && launcher_rank() != 0) return code;
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Partita: partition large graphs and train graph neural networks on them across "
      "machines.\nRun `partita <command> --help` for the options of each command."};
  app.set_version_flag("--version", "partita 0.1.0");
  app.require_subcommand(1);
  bool quiet = false;
  bool verbose = false;
  app.add_flag("-q,--quiet", quiet, "Print only results and errors, no progress");
  app.add_flag("-v,--verbose", verbose, "Print debugging detail");

  std::map<CLI::App*, partita::cli::Action> actions;
  auto add = [&](const char* name, const char* help, auto registrar) {
    CLI::App* sub = app.add_subcommand(name, help);
    actions[sub] = registrar(*sub);
  };
  add("generate", "Write a synthetic graph dataset (numpy layout)",
      partita::cli::add_generate_command);
  add("partition", "Partition a dataset into a partition directory",
      partita::cli::add_partition_command);
  add("info", "Print the summary of a partition directory, optionally verifying it",
      partita::cli::add_info_command);
  add("sample-bench", "Measure distributed sampling and feature fetching (JSON)",
      partita::cli::add_sample_bench_command);
  add("train", "Train a GNN data-parallel on a partition directory",
      partita::cli::add_train_command);
  add("infer", "Full-neighbourhood inference with a trained model: embeddings and predictions",
      partita::cli::add_infer_command);
  add("launch", "Run train or sample-bench on several ranks or hosts (mpirun or srun)",
      partita::cli::add_launch_command);
  // Every integer flag of every command: decimal only ("010" is not 8, "-1" is not 2^64-1).
  partita::cli::require_decimal_integers(app);

  // CLI11 reports an unknown command as "A subcommand is required"; name it instead. The
  // command is the first word after the global flags.
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "-q" || word == "--quiet" || word == "-v" || word == "--verbose") continue;
    if (word.empty() || word[0] == '-') break;
    bool known = false;
    for (auto& [sub, action] : actions) known = known || sub->get_name() == word;
    if (!known) return print_error(word + ": unknown command (see partita --help)", kExitUsage);
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // Either no command was given, or a required option of the command is missing.
    if (app.get_subcommands().empty())
      return print_error(
          "no command given; commands: generate, partition, info, sample-bench, train, launch "
          "(see --help)",
          kExitUsage);
    return print_error(e.what(), kExitUsage);
  } catch (const CLI::ParseError& e) {
    return print_error(e.what(), kExitUsage);
  }

  partita::set_log_level(quiet     ? partita::LogLevel::kQuiet
                         : verbose ? partita::LogLevel::kDebug
                                   : partita::LogLevel::kInfo);
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
    return print_error("no command given (see --help)", kExitUsage);
  } catch (const partita::UsageError& e) {
    return print_error(e.what(), kExitUsage);
  } catch (const partita::Error& e) {
    return print_error(e.what(), kExitFailure);
  } catch (const std::bad_alloc&) {
    return print_error("out of memory", kExitFailure);
  } catch (const std::exception& e) {
    // Not a partita error (e.g. torch's c10::Error, whose what() carries a backtrace): its
    // first line, so that the error stays one line.
    const std::string what = e.what();
    return print_error("internal: " + what.substr(0, what.find('\n')), kExitFailure);
  }
}
