// libFuzzer target: the gzip layer (GzLineReader) and the line splitting on top of it.
// The input is a whole .csv.gz file; it is written to a memory file and read back through
// GzLineReader in 64-byte blocks, so lines cross block boundaries and blocks grow.
// Property of an accepted file: the lines delivered account for the text inflated.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_check.h"
#include "gz_reader.h"
#include "partita/core/error.h"

namespace {

using partita::fuzz::fuzz_require;

// One memory file for the whole run, rewritten for each input.
int memory_file() {
  static const int fd = [] {
    const int f = ::memfd_create("gz_lines_fuzz", MFD_CLOEXEC);
    if (f < 0) std::abort();
    return f;
  }();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memory_file();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    std::abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    partita::data::GzLineReader reader(path, 64);
    int64_t line_bytes = 0, last = 0;
    partita::data::for_each_line(reader, [&](const char* b, const char* e, int64_t number) {
      fuzz_require(number > last, "line numbers increase");
      fuzz_require(e > b && e[-1] != '\n', "lines are non-empty and exclude the newline");
      last = number;
      line_bytes += e - b;
    });
    fuzz_require(line_bytes <= reader.text_bytes(), "lines lie within the inflated text");
    fuzz_require(reader.text_bytes() <= reader.max_text_bytes(), "deflate expands at most 1032:1");
  } catch (const partita::Error&) {
    return 0;  // rejected, as it should be
  }
  return 0;
}
