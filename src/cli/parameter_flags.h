#pragma once
// Library errors in the command line's words: a ParameterError names a library parameter
// (`batch_size`, core/parameter_error.h); a command shows it as its flag (--batch-size).
// Interim mapping by rule (snake_case -> --kebab-case), until the CLI's flag-name table
// (issue 26, `words`) takes its place; every parameter train/ and sample/ name today follows
// the rule.
#include <optional>
#include <string>
#include <string_view>

#include "partita/core/parameter_error.h"

namespace partita::cli {

// The flag of a parameter name ([a-z][a-z0-9_]*); nullopt for anything else.
inline std::optional<std::string> flag_of_parameter(std::string_view name) {
  if (name.empty() || name[0] < 'a' || name[0] > 'z') return std::nullopt;
  std::string flag = "--";
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!word && c != '_') return std::nullopt;
    flag += c == '_' ? '-' : c;
  }
  return flag;
}

// Runs `body`; a ParameterError it throws becomes a UsageError in flag words, so that
// whatever reports it (this rank, a server of server-client mode) shows the flags.
template <class Body>
auto in_flag_words(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const ParameterError& e) {
    throw UsageError(describe(e, flag_of_parameter));
  }
}

}  // namespace partita::cli
