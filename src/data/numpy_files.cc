// The file names of the numpy layout and its split files, in both forms (numpy_files.h).
#include "numpy_files.h"

#include <filesystem>

#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

bool present(const std::string& dir, const std::string& name) {
  std::error_code ec;
  return fs::exists(dir + "/" + name, ec);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The name of one required file present in `dir`, among `names` (the canonical one first).
// None present: returns "" and appends "first (or second, ...)" to `missing`. Two present:
// FormatError naming both.
std::string choose(const std::string& dir, const std::vector<std::string>& names,
                   std::string& missing) {
  std::string chosen;
  for (const std::string& name : names) {
    if (!present(dir, name)) continue;
    PARTITA_CHECK(chosen.empty(), FormatError,
                  "{}: both {} and {} are present (two forms of one file); keep one", dir, chosen,
                  name);
    chosen = name;
  }
  if (chosen.empty()) {
    missing += (missing.empty() ? "" : ", ") + names[0];
    for (size_t i = 1; i < names.size(); ++i) missing += (i == 1 ? " (or " : ", ") + names[i];
    if (names.size() > 1) missing += ")";
  }
  return chosen;
}

}  // namespace

bool looks_like_numpy_layout(const std::string& dir) {
  for (const char* name : {"edges.npy", "edge_index.npy", "feat.npy", "x.npy"})
    if (present(dir, name)) return true;
  return false;
}

NumpyLayoutFiles find_numpy_files(const std::string& dir) {
  std::string missing;
  const std::string feat = choose(dir, {"feat.npy", "x.npy"}, missing);
  const std::string label = choose(dir, {"label.npy", "y.npy"}, missing);
  const std::string edges = choose(dir, {"edges.npy", "edge_index.npy"}, missing);
  const std::string splits[3] = {
      choose(dir, {"train_idx.npy", "train_mask.npy"}, missing),
      choose(dir, {"valid_idx.npy", "val_idx.npy", "val_mask.npy", "valid_mask.npy"}, missing),
      choose(dir, {"test_idx.npy", "test_mask.npy"}, missing),
  };
  PARTITA_CHECK(missing.empty(), IoError,
                "{}: missing {} (the numpy layout: docs/dataset-format.md)", dir, missing);

  NumpyLayoutFiles files;
  files.feat = dir + "/" + feat;
  files.label = dir + "/" + label;
  files.edges = dir + "/" + edges;
  files.edge_index = edges == "edge_index.npy";
  const char* names[3] = {"train", "valid", "test"};
  for (int s = 0; s < 3; ++s) {
    files.splits[s].name = names[s];
    files.splits[s].path = dir + "/" + splits[s];
    files.splits[s].mask = ends_with(splits[s], "_mask.npy");
  }
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
    PARTITA_CHECK(mask[v] <= 1, FormatError, "{}: entry {} is {}; a mask holds 0 or 1", file.path,
                  v, static_cast<int>(mask[v]));
    if (mask[v] == 1) ids.push_back(v);
  }
  return ids;
}

NumpyLayout check_numpy_layout(const std::string& dir) {
  NumpyLayout out;
  out.files = find_numpy_files(dir);
  const NumpyLayoutFiles& files = out.files;
  const MappedNpy feat = MappedNpy::open(files.feat);
  feat.expect(DType::kFloat32, 2);
  out.num_nodes = feat.dim(0);
  out.feat_dim = feat.dim(1);
  PARTITA_CHECK(out.num_nodes > 0, FormatError, "{}: no rows (the dataset has no nodes)",
                files.feat);
  PARTITA_CHECK(out.feat_dim > 0, FormatError, "{}: shape {} has no feature columns", files.feat,
                feat.shape());
  const MappedNpy label = MappedNpy::open(files.label);
  label.expect(DType::kInt64, 1);
  PARTITA_CHECK(label.dim(0) == out.num_nodes, FormatError, "{}: {} labels, but {} has {} rows",
                files.label, label.dim(0), files.feat, out.num_nodes);
  for (int i = 0; i < 3; ++i)
    out.splits[i] = read_numpy_split(files.splits[i], out.num_nodes, files.feat);
  const MappedNpy edges = MappedNpy::open(files.edges);
  PARTITA_CHECK(edges.dtype() == DType::kInt64 || edges.dtype() == DType::kInt32, FormatError,
                "{}: expected dtype int64 (or int32), found {}", files.edges,
                dtype_name(edges.dtype()));
  PARTITA_CHECK(edges.ndim() == 2, FormatError, "{}: expected 2 dimension(s), found shape {}",
                files.edges, edges.shape());
  if (files.edge_index) {
    PARTITA_CHECK(edges.dim(0) == 2, FormatError,
                  "{}: expected shape (2, E) (PyG's edge_index: sources, then destinations), "
                  "found {}",
                  files.edges, edges.shape());
  } else {
    PARTITA_CHECK(
        edges.dim(1) == 2, FormatError, "{}: expected shape (E, 2), found {}{}", files.edges,
        edges.shape(),
        edges.dim(0) == 2 ? " (a PyG edge_index of shape (2, E) goes in edge_index.npy)" : "");
  }
  // C-order edge_index and Fortran-order (E, 2) both hold all sources, then all destinations.
  out.columns = files.edge_index != edges.header().fortran_order;
  out.num_edges = files.edge_index ? edges.dim(1) : edges.dim(0);
  if (out.num_edges == 0) throw_no_edges(files.edges);
  return out;
}

}  // namespace partita::data
