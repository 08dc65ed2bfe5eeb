// The numpy layout's optional link-prediction split (docs/dataset-format.md): train_edges.npy,
// valid_edges.npy, test_edges.npy, valid_neg.npy, test_neg.npy, all or none. One reader for
// one process (all rows) and for shares (data/shard.h: a row range of each file).
#include <filesystem>
#include <system_error>

#include "partita/core/error.h"
#include "partita/data/shard.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {
namespace {

// Rows [b, e) of an int64 [k, 2] array of (src, dst) pairs (C or Fortran order), each id in
// [0, num_nodes), no self loop; appended interleaved to `out`.
void read_pairs(const MappedNpy& f, int64_t b, int64_t e, int64_t num_nodes,
                std::vector<int64_t>* out) {
  const int64_t k = f.dim(0);
  std::vector<int64_t> pairs(static_cast<size_t>(2 * (e - b)));
  if (f.header().fortran_order) {  // all sources, then all destinations
    std::vector<int64_t> src(static_cast<size_t>(e - b)), dst(src.size());
    f.copy_elements(b, e, src.data());
    f.copy_elements(k + b, k + e, dst.data());
    for (size_t i = 0; i < src.size(); ++i) pairs[2 * i] = src[i], pairs[2 * i + 1] = dst[i];
  } else {
    f.copy_elements(2 * b, 2 * e, pairs.data());
  }
  for (size_t i = 0; i < pairs.size(); i += 2) {
    const int64_t row = b + static_cast<int64_t>(i / 2);
    for (size_t j = i; j < i + 2; ++j)
      PARTITA_CHECK(pairs[j] >= 0 && pairs[j] < num_nodes, FormatError,
                    "{}: row {}: node id {} is outside [0, {})", f.path(), row, pairs[j],
                    num_nodes);
    PARTITA_CHECK(pairs[i] != pairs[i + 1], FormatError, "{}: row {}: self loop ({}, {})", f.path(),
                  row, pairs[i], pairs[i]);
  }
  out->insert(out->end(), pairs.begin(), pairs.end());
}

}  // namespace

std::optional<EdgeSplitArrays> read_numpy_edge_split(const std::string& dir, int64_t num_nodes,
                                                     int rank, int ranks) {
  std::error_code ec;
  int present = 0;
  for (const char* name : kEdgeSplitArrayFiles)
    present += std::filesystem::exists(dir + "/" + name, ec) ? 1 : 0;
  if (present == 0) return std::nullopt;
  for (const char* name : kEdgeSplitArrayFiles)
    PARTITA_CHECK(std::filesystem::exists(dir + "/" + name, ec), FormatError,
                  "{}/{}: missing (an edge split needs train_edges.npy, valid_edges.npy, "
                  "test_edges.npy, valid_neg.npy and test_neg.npy)",
                  dir, name);
  EdgeSplitArrays split;
  std::vector<int64_t>* targets[] = {&split.train, &split.valid, &split.test, &split.valid_neg,
                                     &split.test_neg};
  for (size_t i = 0; i < 5; ++i) {
    const MappedNpy f = MappedNpy::open(dir + "/" + kEdgeSplitArrayFiles[i]);
    f.expect(DType::kInt64, 2);
    PARTITA_CHECK(f.dim(1) == 2, FormatError, "{}: expected shape (k, 2), found {}", f.path(),
                  f.shape());
    PARTITA_CHECK(i == 0 || f.dim(0) > 0, FormatError, "{}: no rows", f.path());
    const auto [b, e] = node_block(f.dim(0), rank, ranks);
    read_pairs(f, b, e, num_nodes, targets[i]);
  }
  return split;
}

}  // namespace partita::data
