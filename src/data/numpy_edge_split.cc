// The numpy layout's optional link-prediction split (docs/dataset-format.md): train_edges.npy,
// valid_edges.npy, test_edges.npy, valid_neg.npy, test_neg.npy, all or none.
#include <filesystem>
#include <system_error>

#include "partita/core/error.h"
#include "readers.h"

namespace partita::data {
namespace {

constexpr const char* kEdgeSplitFiles[] = {"train_edges.npy", "valid_edges.npy", "test_edges.npy",
                                           "valid_neg.npy", "test_neg.npy"};

// An int64 [k, 2] array of (src, dst) pairs, each id in [0, num_nodes), no self loop.
std::vector<int64_t> read_pairs(const std::string& path, int64_t num_nodes) {
  NpyArray array = NpyArray::open(path);
  array.expect(DType::kInt64, 2);
  PARTITA_CHECK(array.dim(1) == 2, FormatError, "{}: expected shape (k, 2), found {}", path,
                array.header().shape_string());
  ArrayView<const int64_t> v = array.view<int64_t>();
  std::vector<int64_t> pairs(v.begin(), v.end());
  for (size_t i = 0; i < pairs.size(); i += 2) {
    for (size_t j = i; j < i + 2; ++j)
      PARTITA_CHECK(pairs[j] >= 0 && pairs[j] < num_nodes, FormatError,
                    "{}: row {}: node id {} is outside [0, {})", path, i / 2, pairs[j], num_nodes);
    PARTITA_CHECK(pairs[i] != pairs[i + 1], FormatError, "{}: row {}: self loop ({}, {})", path,
                  i / 2, pairs[i], pairs[i]);
  }
  return pairs;
}

}  // namespace

std::optional<EdgeSplitArrays> read_numpy_edge_split(const std::string& dir, int64_t num_nodes) {
  std::error_code ec;
  int present = 0;
  for (const char* name : kEdgeSplitFiles)
    present += std::filesystem::exists(dir + "/" + name, ec) ? 1 : 0;
  if (present == 0) return std::nullopt;
  for (const char* name : kEdgeSplitFiles)
    PARTITA_CHECK(std::filesystem::exists(dir + "/" + name, ec), FormatError,
                  "{}/{}: missing (an edge split needs train_edges.npy, valid_edges.npy, "
                  "test_edges.npy, valid_neg.npy and test_neg.npy)",
                  dir, name);
  EdgeSplitArrays split;
  std::vector<int64_t>* targets[] = {&split.train, &split.valid, &split.test, &split.valid_neg,
                                     &split.test_neg};
  for (size_t i = 0; i < 5; ++i)
    *targets[i] = read_pairs(dir + "/" + kEdgeSplitFiles[i], num_nodes);
  for (size_t i = 1; i < 5; ++i)
    PARTITA_CHECK(!targets[i]->empty(), FormatError, "{}/{}: no rows", dir, kEdgeSplitFiles[i]);
  return split;
}

}  // namespace partita::data
