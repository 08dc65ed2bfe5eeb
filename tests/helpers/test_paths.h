#pragma once
// Paths and scratch directories for tests.
#include <string>

namespace partita::testing {

// ../shared/datasets beside the repository (configurable with -DPARTITA_SHARED_DATASETS).
std::string shared_datasets_dir();
// Absolute path of the built `partita` executable.
std::string partita_binary();

// A fresh empty directory under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes `bytes` to `path` (creating parent directories).
void write_file(const std::string& path, const std::string& bytes);
// Reads a whole file.
std::string read_file(const std::string& path);
// Writes `text` gzip-compressed to `path`.
void write_gz(const std::string& path, const std::string& text);

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};
// Runs a shell command line, capturing stdout+stderr.
CommandResult run_command(const std::string& command_line);
// Runs `partita <args>` (the built binary; `args` as a shell would split them).
CommandResult run_partita(const std::string& args);

}  // namespace partita::testing
