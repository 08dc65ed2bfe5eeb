#pragma once
// A front end's words in logged lines. Library warnings name parameters as library errors do
// (core/parameter_error.h): between backquotes (`balance_train`). A front end installs a
// rewriter once, before any work starts (like the log level), and every line is passed
// through it before it is written: the CLI turns `balance_train` into --balance-train, the
// Python package into its keyword. Without one, lines are written as they are.
#include <functional>
#include <string>

namespace partita {

using LogRewriter = std::function<std::string(const std::string&)>;

// Installs `rewrite` (empty: none). Not synchronized with logging threads: call it before
// any other thread logs. `rewrite` itself must be thread-safe and must not log.
void set_log_rewriter(LogRewriter rewrite);

}  // namespace partita
