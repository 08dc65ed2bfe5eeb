#pragma once
// Minimal leveled logging to stderr. The level is process-wide and set once by the CLI
// before any work starts; logging calls are thread-safe (one write per line).
//
// What each level prints (issue 37: -q silences progress, never what the user must see):
//   warnings (log_warning) and notices (log_notice)  at every level, kQuiet included
//   progress and information (log_info)                kInfo and kDebug
//   details (log_debug)                                kDebug
// A notice is a line that changes what the user should expect of the run (e.g. a --resume
// that found no checkpoint and starts from epoch 1): not progress, so `-q` keeps it.
#include <fmt/format.h>

#include <string>

namespace partita {

// kQuiet: -q (warnings and notices only); kInfo: the default; kDebug: -v.
enum class LogLevel { kQuiet = 0, kInfo = 1, kDebug = 2 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_line(LogLevel level, const std::string& line);

template <class... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() >= LogLevel::kInfo)
    log_line(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() >= LogLevel::kDebug)
    log_line(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
// Warnings are printed at every level ("warning: " first).
template <class... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) {
  log_line(LogLevel::kQuiet, "warning: " + fmt::format(f, std::forward<Args>(args)...));
}
// Notices (see above) are printed at every level, as they are.
template <class... Args>
void log_notice(fmt::format_string<Args...> f, Args&&... args) {
  log_line(LogLevel::kQuiet, fmt::format(f, std::forward<Args>(args)...));
}

// "1.23 GiB" style byte counts for human-readable output.
std::string format_bytes(double bytes);

}  // namespace partita
