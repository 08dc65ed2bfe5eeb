#pragma once
// `--help` text wrapped to the terminal's usual width: CLI11 prints every description as
// one line however long; this formatter breaks them at word boundaries, keeping the
// option column aligned.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <map>
#include <string>

namespace partita::cli {

// `text` with each paragraph (split at '\n') broken at spaces into lines of at most `width`
// characters; a word longer than `width` stays whole on its own line.
std::string wrap_text(const std::string& text, std::size_t width);

// How every command treats a flag given twice (make_command_line sets the policy).
inline constexpr const char* kRepeatedFlagsNote =
    "A flag given more than once keeps its last value (--dropout 0.5 --dropout 0 is --dropout "
    "0), so that a script can append overrides to its flags; flags that collect a list (launch's "
    "--env) keep every value.";

class WrappingFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kLineWidth = 92;  // whole help line, option column included

  WrappingFormatter();
  // The one-line summary of `command` in the list of commands (its --help has the long
  // description); commands without one are listed with their description's first line.
  void set_summary(const CLI::App* command, std::string summary);

  std::string make_description(const CLI::App* app) const override;
  std::string make_subcommand(const CLI::App* command) const override;
  std::string make_option_desc(const CLI::Option* option) const override;
  // The command's footer, then kRepeatedFlagsNote: every help page says it.
  std::string make_footer(const CLI::App* app) const override;

 private:
  std::map<const CLI::App*, std::string> summaries_;
};

}  // namespace partita::cli
