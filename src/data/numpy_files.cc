// The file names of the numpy layout and its split files, in both forms (numpy_files.h).
#include "numpy_files.h"

#include <filesystem>

#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "readers.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

// One required file and the names it may have, the canonical one first.
struct Choice {
  std::vector<std::string> names;
  std::string* path;  // set to the name present
  size_t* chosen;     // index of that name in `names`
};

bool present(const std::string& dir, const std::string& name) {
  std::error_code ec;
  return fs::exists(dir + "/" + name, ec);
}

std::string alternatives(const std::vector<std::string>& names) {
  std::string s = names[0];
  for (size_t i = 1; i < names.size(); ++i) s += (i == 1 ? " (or " : ", ") + names[i];
  return names.size() > 1 ? s + ")" : s;
}

}  // namespace

bool looks_like_numpy_layout(const std::string& dir) {
  for (const char* name : {"edges.npy", "edge_index.npy", "feat.npy", "x.npy"})
    if (present(dir, name)) return true;
  return false;
}

NumpyLayoutFiles find_numpy_files(const std::string& dir) {
  NumpyLayoutFiles files;
  size_t feat = 0, label = 0, edges = 0, split_kind[3] = {0, 0, 0};
  files.splits[0].name = "train";
  files.splits[1].name = "valid";
  files.splits[2].name = "test";
  std::vector<Choice> choices = {
      {{"feat.npy", "x.npy"}, &files.feat, &feat},
      {{"label.npy", "y.npy"}, &files.label, &label},
      {{"edges.npy", "edge_index.npy"}, &files.edges, &edges},
      {{"train_idx.npy", "train_mask.npy"}, &files.splits[0].path, &split_kind[0]},
      {{"valid_idx.npy", "val_idx.npy", "val_mask.npy", "valid_mask.npy"},
       &files.splits[1].path,
       &split_kind[1]},
      {{"test_idx.npy", "test_mask.npy"}, &files.splits[2].path, &split_kind[2]},
  };
  std::string missing;
  for (const Choice& c : choices) {
    std::vector<size_t> found;
    for (size_t i = 0; i < c.names.size(); ++i)
      if (present(dir, c.names[i])) found.push_back(i);
    if (found.empty()) {
      missing += (missing.empty() ? "" : ", ") + alternatives(c.names);
      continue;
    }
    PARTITA_CHECK(found.size() == 1, FormatError,
                  "{}: both {} and {} are present (two forms of one file); keep one", dir,
                  c.names[found[0]], c.names[found[1]]);
    *c.path = dir + "/" + c.names[found[0]];
    *c.chosen = found[0];
  }
  PARTITA_CHECK(missing.empty(), IoError,
                "{}: missing {} (the numpy layout: docs/dataset-format.md)", dir, missing);
  files.edge_index = edges == 1;
  for (int s = 0; s < 3; ++s)
    files.splits[s].mask = files.splits[s].path.size() >= 9 &&
                           files.splits[s].path.compare(files.splits[s].path.size() - 9, 9,
                                                        "_mask.npy") == 0;
  return files;
}

std::vector<int64_t> read_numpy_split(const NumpySplitFile& file, int64_t num_nodes,
                                      const std::string& feat) {
  NpyArray array = NpyArray::open(file.path);
  if (!file.mask) {
    array.expect(DType::kInt64, 1);
    ArrayView<const int64_t> v = array.view<int64_t>();
    std::vector<int64_t> ids(v.begin(), v.end());
    validate_split(ids, num_nodes, file.path, /*lines=*/false);
    return ids;
  }
  PARTITA_CHECK(array.dtype() == DType::kBool || array.dtype() == DType::kUInt8, FormatError,
                "{}: expected dtype bool (or uint8 0/1) for a node mask, found {}", file.path,
                dtype_name(array.dtype()));
  PARTITA_CHECK(array.ndim() == 1, FormatError, "{}: expected 1 dimension(s), found shape {}",
                file.path, array.header().shape_string());
  PARTITA_CHECK(array.dim(0) == num_nodes, FormatError,
                "{}: a mask of {} entries, but {} has {} rows (one entry per node)", file.path,
                array.dim(0), feat, num_nodes);
  const unsigned char* mask = array.data();
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < num_nodes; ++v) {
    PARTITA_CHECK(mask[v] <= 1, FormatError, "{}: entry {} is {}; a mask holds 0 or 1",
                  file.path, v, static_cast<int>(mask[v]));
    if (mask[v] == 1) ids.push_back(v);
  }
  return ids;
}

}  // namespace partita::data
