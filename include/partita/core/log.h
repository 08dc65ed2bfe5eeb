#pragma once
// Minimal leveled logging to stderr. The level is process-wide and set once by the CLI
// before any work starts; logging calls are thread-safe (one write per line).
#include <fmt/format.h>

#include <string>

namespace partita {

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
// Warnings are printed unless the level is kQuiet.
template <class... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() >= LogLevel::kInfo)
    log_line(LogLevel::kInfo, "warning: " + fmt::format(f, std::forward<Args>(args)...));
}

// "1.23 GiB" style byte counts for human-readable output.
std::string format_bytes(double bytes);

}  // namespace partita
