#pragma once
// The `partita` command line: every command registered on one CLI11 app. main() parses the
// process's arguments with it; `partita launch` parses the command it will start on the
// ranks with a fresh one, so that a misspelled flag is reported before mpirun starts.
#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"

namespace partita::cli {

struct CommandLine {
  CLI::App app;
  std::map<CLI::App*, Action> actions;  // one per command
  bool quiet = false;                   // -q, accepted before or after the command
  bool verbose = false;                 // -v, likewise
};

// All commands and the global flags, with the decimal-integer check on every integer flag.
std::unique_ptr<CommandLine> make_command_line();

// Parses `args` (without the program name) as `partita <args>` would, runs no command, and
// returns "" when they parse, else the one-line error main() would print (after "error: ").
// `partita launch` checks its command with it.
std::string check_arguments(const std::vector<std::string>& args);

}  // namespace partita::cli
