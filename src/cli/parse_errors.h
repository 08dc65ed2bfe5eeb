#pragma once
// CLI11's parse errors in Partita's form: one line `<flag>: <what>` that says what to do,
// e.g. "--epoch: unknown flag of train; did you mean --epochs?" instead of CLI11's
// "The following arguments were not expected: 3 --epoch".
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace partita::cli {

// The message (without "error: ") for `error`, raised by parsing `args` (the words after
// the program name) with `root`, whose subcommands are the commands.
std::string describe_parse_error(const CLI::ParseError& error, CLI::App& root,
                                 const std::vector<std::string>& args);

// The option names of `app` closest to `word` (edit distance at most 2, or `word` a prefix
// of at least 3 characters), best first; at most 3. Shared with the unknown-command check.
std::vector<std::string> closest_names(const std::string& word,
                                       const std::vector<std::string>& names);

}  // namespace partita::cli
