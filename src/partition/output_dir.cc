// The output directory policy of `partition`: see partita/partition/output_dir.h.
#include "partita/partition/output_dir.h"

#include <algorithm>
#include <filesystem>

#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/partition/format.h"

namespace partita::partition {
namespace {

namespace fs = std::filesystem;

// The absolute path of `p` with symbolic links of its existing part resolved, as a list of
// names (no empty ones: "a/b/" is "a/b").
std::vector<std::string> path_names(const std::string& p) {
  std::error_code ec;
  fs::path path = fs::absolute(p, ec);
  if (ec) path = fs::path(p);
  const fs::path resolved = fs::weakly_canonical(path, ec);
  if (!ec) path = resolved;
  std::vector<std::string> names;
  for (const fs::path& name : path.lexically_normal())
    if (!name.empty() && name != ".") names.push_back(name.string());
  return names;
}

// Whether `prefix` is `names` or one of its ancestors.
bool starts_with(const std::vector<std::string>& names, const std::vector<std::string>& prefix) {
  return prefix.size() <= names.size() && std::equal(prefix.begin(), prefix.end(), names.begin());
}

// The entries a partition writes at its top level (docs/partition-format.md).
bool is_partition_entry(const std::string& name) {
  if (name == kMetaFileName || name == kNodeMapFile || name == "edges") return true;
  return name.size() > 4 && name.compare(0, 4, "part") == 0 &&
         name.find_first_not_of("0123456789", 4) == std::string::npos;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

OutputDirState inspect_output_dir(const std::string& out, const std::string& input) {
  const std::vector<std::string> o = path_names(out), in = path_names(input);
  if (o == in) return OutputDirState::kIsInput;
  if (starts_with(o, in)) return OutputDirState::kInsideInput;
  if (starts_with(in, o)) return OutputDirState::kHoldsInput;
  std::error_code ec;
  const fs::file_status status = fs::status(out, ec);
  if (status.type() == fs::file_type::not_found) return OutputDirState::kAbsent;
  if (ec) return OutputDirState::kOther;
  if (status.type() != fs::file_type::directory) return OutputDirState::kNotADirectory;
  if (fs::exists(fs::path(out) / kMetaFileName, ec)) return OutputDirState::kPartition;
  fs::directory_iterator it(out, ec);
  if (ec) return OutputDirState::kOther;
  return it == fs::directory_iterator() ? OutputDirState::kEmpty : OutputDirState::kOther;
}

void check_output_dir(OutputDirState state, const std::string& out, const std::string& input,
                      bool force) {
  PARTITA_CHECK_PARAM(state != OutputDirState::kIsInput, "out_dir",
                      "{} is the input dataset's directory (`dataset`); a partition never "
                      "writes into its input: choose another directory",
                      out);
  PARTITA_CHECK_PARAM(state != OutputDirState::kInsideInput, "out_dir",
                      "{} lies inside the input dataset's directory {}; a partition never "
                      "writes into its input: choose a directory outside it",
                      out, input);
  PARTITA_CHECK_PARAM(state != OutputDirState::kHoldsInput, "out_dir",
                      "{} holds the input dataset's directory {}; choose a directory that does "
                      "not contain it",
                      out, input);
  PARTITA_CHECK_PARAM(state != OutputDirState::kNotADirectory, "out_dir",
                      "{} exists and is not a directory", out);
  PARTITA_CHECK_PARAM(state != OutputDirState::kOther || force, "out_dir",
                      "{} exists, is not empty and is not a partition (no {}); choose an "
                      "empty or new directory, or give `force` to write into it",
                      out, kMetaFileName);
}

OutputDir::OutputDir(const std::string& out, OutputDirState state) : out_(out) {
  std::error_code ec;
  if (state == OutputDirState::kPartition) {
    for (const std::string& name : names_in(out)) {
      if (!is_partition_entry(name)) continue;
      const fs::path path = fs::path(out) / name;
      fs::remove_all(path, ec);
      PARTITA_CHECK(!ec, IoError, "{}: cannot remove the replaced partition's entry: {}",
                    path.string(), ec.message());
    }
  }
  created_ = !fs::exists(out, ec);
  create_directory(out);
  if (!created_) before_ = names_in(out);
}

void OutputDir::discard() noexcept {
  try {
    std::error_code ec;
    if (created_) {
      fs::remove_all(out_, ec);
      return;
    }
    for (const std::string& name : names_in(out_))
      if (!std::binary_search(before_.begin(), before_.end(), name))
        fs::remove_all(fs::path(out_) / name, ec);
  } catch (...) {
    // Best effort: what could not be removed stays.
  }
}

}  // namespace partita::partition
