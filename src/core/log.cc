#include "partita/core/log.h"

#include <unistd.h>

#include <atomic>
#include <utility>

#include "partita/core/log_rewrite.h"

namespace partita {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
// Never destroyed: a line may be logged while statics are torn down at exit.
LogRewriter& rewriter() {
  static LogRewriter* rewrite = new LogRewriter;
  return *rewrite;
}
}  // namespace

void set_log_rewriter(LogRewriter rewrite) { rewriter() = std::move(rewrite); }

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

void log_line(LogLevel, const std::string& line) {
  const LogRewriter& rewrite = rewriter();
  std::string out = (rewrite ? rewrite(line) : line) + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());  // one write: no interleaving
  (void)ignored;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

}  // namespace partita
