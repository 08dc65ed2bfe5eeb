#pragma once
// What the command line prints after "error: " for an exception: the library's message in
// the command line's words (flag_names.h).
#include <exception>
#include <string>

namespace partita::cli {

// One line:
//  - a ParameterError: describe(e, flag_name) ("--batch-size: must be >= 1, got 0");
//  - a runtime::SetupError on the rank that reports it: the text of its cause, the rank's
//    own error;
//  - any other partita::Error: what(), its backquoted parameters as flags;
//  - std::bad_alloc: "out of memory"; any other exception: "internal: " and the first line
//    of what() (torch's errors carry a backtrace).
std::string error_text(const std::exception& e);

}  // namespace partita::cli
