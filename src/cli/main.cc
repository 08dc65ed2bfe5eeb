// partita <subcommand>: the single entry point of the engine (torch_handoff.h: the commands
// that need torch run in partita-torch, built from this same file).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "command_line.h"
#include "error_text.h"
#include "exit_codes.h"
#include "flag_names.h"
#include "global_flags.h"
#include "launcher_env.h"
#include "parse_errors.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/log_rewrite.h"
#include "partita/store/single_process_error.h"
#include "rank_main.h"
#include "torch_handoff.h"

namespace {

using partita::cli::kExitFailure;  // the exit codes' table: exit_codes.h
using partita::cli::kExitUsage;

// Prints `error: <message>` and returns `code`. A usage error is the same on every rank of
// a job, so the job shows it once: alone it is printed here; in a job of several ranks, after
// every rank raised it, by rank 0 (report_usage_error_in_job: a rank that exited at once
// could make mpirun end the job before rank 0's line was out).
int print_error(const std::string& message, int code) {
  if (code == kExitUsage && partita::cli::launcher_size() > 1)
    return partita::cli::report_usage_error_in_job(message);
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<partita::cli::CommandLine> cli = partita::cli::make_command_line();
  CLI::App& app = cli->app;
  const std::vector<std::string> args(argv + 1, argv + argc);

  // CLI11 reports an unknown command as "A subcommand is required"; name it instead. The
  // command is the first word after the global flags.
  const size_t at = partita::cli::command_index(args);
  if (at < args.size() && !args[at].empty() && args[at][0] != '-') {
    const std::string& word = args[at];
    std::vector<std::string> commands;
    CLI::App* command = nullptr;
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      commands.push_back(sub->get_name());
      if (sub->get_name() == word) command = sub;
    }
    if (command == nullptr) {
      const std::vector<std::string> close = partita::cli::closest_names(word, commands);
      return print_error(word + ": unknown command" +
                             (close.empty() ? "" : "; did you mean " + close.front() + "?") +
                             " (see partita --help)",
                         kExitUsage);
    }
    // A command this executable only names runs in partita-torch (torch_handoff.h).
    if (cli->actions.count(command) == 0) return partita::cli::hand_over_to_torch_executable(argv);
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
          "no command given; commands: generate, partition, info, sample-bench, train, infer, "
          "launch (see --help)",
          kExitUsage);
    return print_error(partita::cli::describe_parse_error(e, app, args), kExitUsage);
  } catch (const CLI::ParseError& e) {
    return print_error(partita::cli::describe_parse_error(e, app, args), kExitUsage);
  }

  partita::set_log_level(cli->quiet     ? partita::LogLevel::kQuiet
                         : cli->verbose ? partita::LogLevel::kDebug
                                        : partita::LogLevel::kInfo);
  // Library warnings name parameters as the library does (`balance_train`): show flags.
  partita::set_log_rewriter(
      [](const std::string& line) { return partita::cli::in_flag_words(line); });
  try {
    for (auto& [sub, action] : cli->actions)
      if (sub->parsed()) return action();
    return print_error("no command given (see --help)", kExitUsage);
  } catch (const partita::store::SingleProcessError& e) {
    // The library says what is wrong; how to start one rank per part is the command line's.
    return print_error(fmt::format("{}: `partita launch -- <command>` or `mpirun -np {} partita "
                                   "<command>`",
                                   partita::cli::error_text(e), e.num_parts()),
                       kExitUsage);
  } catch (const partita::UsageError& e) {
    return print_error(partita::cli::error_text(e), kExitUsage);
  } catch (const std::exception& e) {
    // A library error in the command line's words; anything else (e.g. torch's c10::Error,
    // whose what() carries a backtrace) as "internal:" and its first line: one line.
    return print_error(partita::cli::error_text(e), kExitFailure);
  }
}
