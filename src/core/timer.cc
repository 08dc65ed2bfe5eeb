#include "partita/core/timer.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace partita {

int64_t peak_rss_bytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

int64_t current_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages_total = 0, pages_resident = 0;
  int n = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

namespace {

// Entries of a /proc directory, without "." and ".."; 0 if it cannot be read.
int64_t count_entries(const char* dir) {
  DIR* d = ::opendir(dir);
  if (d == nullptr) return 0;
  int64_t n = 0;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
  ::closedir(d);
  return n;
}

}  // namespace

int64_t thread_count() { return count_entries("/proc/self/task"); }

// The directory stream itself holds one descriptor while counting: not counted.
int64_t open_fd_count() { return std::max<int64_t>(0, count_entries("/proc/self/fd") - 1); }

}  // namespace partita
