#pragma once
// A node-classification dataset in memory (or mapped): graph as in-edge CSC, features,
// labels and split ids. Produced by the readers in data/, consumed by partition/.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partita/core/npy.h"
#include "partita/graph/csr.h"

namespace partita::data {

// Row-major float32 [rows, cols] features, either owned or mapped from a .npy file.
class FeatureMatrix {
 public:
  FeatureMatrix() = default;
  static FeatureMatrix owned(std::vector<float> values, int64_t rows, int64_t cols);
  static FeatureMatrix mapped(NpyArray array);  // array must be float32 [rows, cols]

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const float* row(int64_t r) const { return data_ + r * cols_; }
  const float* data() const { return data_; }
  // For mapped features: lets the kernel drop pages of rows [begin, end) after a pass.
  void release_rows(int64_t begin, int64_t end) const;

 private:
  std::vector<float> owned_;
  std::optional<NpyArray> mapped_;
  const float* data_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
};

struct Dataset {
  std::string path;    // directory it was read from
  std::string layout;  // "ogb" or "numpy"
  int64_t num_nodes = 0;
  graph::Csr in_edges;  // CSC; no self loops, no duplicates
  int64_t input_edges = 0;         // edges as listed in the input
  int64_t self_loops_dropped = 0;
  int64_t duplicates_dropped = 0;
  FeatureMatrix features;          // [num_nodes, feat_dim]
  std::vector<int64_t> labels;     // [num_nodes], each in [0, num_classes)
  int64_t num_classes = 0;         // max label + 1
  std::vector<int64_t> train_idx;  // sorted ascending, unique, in [0, num_nodes)
  std::vector<int64_t> valid_idx;
  std::vector<int64_t> test_idx;
};

struct LoadOptions {
  bool undirected = false;  // add reverse edges
  int threads = 0;          // <= 0: all hardware threads
  std::string split;        // OGB split folder under split/; empty: the only one present
};

// Per-phase figures of a load, for progress output and benchmarks.
struct LoadStats {
  double read_edges_s = 0, read_features_s = 0, read_rest_s = 0, build_graph_s = 0;
  int64_t text_bytes = 0;  // decompressed CSV bytes parsed (OGB layout)
  double text_s = 0;       // seconds spent decompressing + parsing them
};

// Reads `dir`, detecting the layout: OGB raw node-property (raw/edge.csv.gz ...) or the
// Partita numpy layout (edges.npy ...; see docs/dataset-format.md). Every file is
// validated; problems throw IoError/FormatError naming the file.
Dataset load_dataset(const std::string& dir, const LoadOptions& options, LoadStats* stats = nullptr);

}  // namespace partita::data
