#pragma once
// One exception family for the whole engine. Library code throws; only the CLI catches,
// prints `error: <what()>` and exits non-zero. Messages name the file or flag first:
// "<file or flag>: <what is wrong>".
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace partita {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command-line flag or option value that makes no sense. The CLI exits with code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// A file whose content is malformed, truncated, inconsistent or out of range.
class FormatError : public Error {
 public:
  using Error::Error;
};

// Throws `Err` with a fmt-formatted message when `cond` is false.
#define PARTITA_CHECK(cond, Err, ...)                 \
  do {                                                \
    if (!(cond)) throw Err(fmt::format(__VA_ARGS__)); \
  } while (0)

}  // namespace partita
