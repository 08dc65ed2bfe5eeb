#include "torch_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "exit_codes.h"

namespace partita::cli {
namespace {

// The folder of the running executable (links resolved), or "" when /proc cannot say.
std::string own_folder() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return "";
  const std::string exe(path.data(), static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

}  // namespace

int hand_over_to_torch_executable(char** argv) {
  const std::string folder = own_folder();
  if (folder.empty()) {
    std::fprintf(stderr, "error: cannot find the folder of this executable (/proc/self/exe): %s\n",
                 std::strerror(errno));
    return kExitFailure;
  }
  const std::string path = folder + "/" + kTorchExecutable;
  std::fflush(stdout);
  std::fflush(stderr);
  execv(path.c_str(), argv);
  const int error = errno;
  std::fprintf(stderr,
               "error: %s: %s; this command runs in %s, which is built and installed beside "
               "partita (cmake --build <build> --target partita builds both)\n",
               path.c_str(), std::strerror(error), kTorchExecutable);
  return kExitFailure;
}

}  // namespace partita::cli
