#pragma once
// Errors that name a library parameter in the library's own words.
//
// A library layer never speaks the command line's language: a fanout out of range is
// reported against the parameter `fanouts`, not the flag `--fanouts`. Each front end (the
// CLI, the Python package) maps parameter names to its own words with one table
// (src/cli/flag_names.cc, python/src/keyword_names.cc) and rewrites the message before
// showing it.
//
// Message contract: ParameterError::what() is "<parameter>: <detail>". Inside the detail,
// any other parameter the message refers to is written between backquotes (`layers`), so
// that a front end can rename it too (rename_parameters); a backquoted word that is not a
// parameter name is left as it is.
#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "partita/core/error.h"

namespace partita {

class ParameterError : public UsageError {
 public:
  ParameterError(std::string parameter, std::string detail)
      : UsageError(parameter + ": " + detail),
        parameter_(std::move(parameter)),
        detail_(std::move(detail)) {}

  // The parameter at fault, in the library's words (`fanouts`, `cache_ratio`).
  const std::string& parameter() const { return parameter_; }
  // What is wrong with it; other parameters appear backquoted.
  const std::string& detail() const { return detail_; }

 private:
  std::string parameter_;
  std::string detail_;
};

// Maps a parameter name to a front end's word for it, or nullopt to leave it as it is.
using ParameterNamer = std::function<std::optional<std::string>(std::string_view)>;

// `text` with every backquoted parameter name `name` replaced by namer(name) (backquotes
// dropped); backquoted words the namer does not know keep their backquotes.
inline std::string rename_parameters(std::string_view text, const ParameterNamer& namer) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('`', i);
    if (open == std::string_view::npos) break;
    const size_t close = text.find('`', open + 1);
    if (close == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    const std::string_view name = text.substr(open + 1, close - open - 1);
    if (std::optional<std::string> word = namer(name)) {
      out += *word;
    } else {
      out.append(text.substr(open, close - open + 1));
    }
    i = close + 1;
  }
  out.append(text.substr(i));
  return out;
}

// The whole message of `e` in a front end's words: "<word for parameter>: <detail, its
// backquoted parameters renamed>".
inline std::string describe(const ParameterError& e, const ParameterNamer& namer) {
  std::optional<std::string> word = namer(e.parameter());
  return (word ? *word : e.parameter()) + ": " + rename_parameters(e.detail(), namer);
}

// Throws ParameterError(parameter, fmt-formatted detail) when `cond` is false.
#define PARTITA_CHECK_PARAM(cond, parameter, ...)                                      \
  do {                                                                                 \
    if (!(cond)) throw ::partita::ParameterError(parameter, fmt::format(__VA_ARGS__)); \
  } while (0)

}  // namespace partita
