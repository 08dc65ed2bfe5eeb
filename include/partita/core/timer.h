#pragma once
// Wall-clock stopwatch and process figures (memory, threads, file descriptors).
#include <chrono>
#include <cstdint>

namespace partita {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// Peak resident set size of this process so far (getrusage), in bytes.
int64_t peak_rss_bytes();
// Current resident set size (from /proc/self/statm), in bytes; 0 if unavailable.
int64_t current_rss_bytes();
// Threads of this process (/proc/self/task entries); 0 if unavailable.
int64_t thread_count();
// Open file descriptors of this process (/proc/self/fd entries); 0 if unavailable.
int64_t open_fd_count();

}  // namespace partita
