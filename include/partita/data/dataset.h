#pragma once
// A node-classification dataset in memory (or mapped): graph as in-edge CSC, features,
// labels and split ids. Produced by the readers in data/, consumed by partition/.
// The accepted on-disk layouts and every check made on them: docs/dataset-format.md.
// A Dataset is move-only (mapped features); it is not modified after load_dataset returns,
// so concurrent reads from several threads are safe.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partita/core/npy.h"
#include "partita/data/edge_arrays.h"
#include "partita/data/feature_matrix.h"
#include "partita/data/hetero.h"
#include "partita/graph/csr.h"

namespace partita::data {

// A link-prediction split given with the dataset (numpy layout: train_edges.npy, ...; see
// docs/dataset-format.md). Each vector holds interleaved (src, dst) pairs of original ids,
// in the order of the file; every id lies in [0, num_nodes) and no pair is a self loop.
struct EdgeSplitArrays {
  std::vector<int64_t> train, valid, test;   // positive edges
  std::vector<int64_t> valid_neg, test_neg;  // non-edges scored against valid / test
};
// The numpy layout's files of those arrays, in their order.
inline constexpr const char* kEdgeSplitArrayFiles[5] = {
    "train_edges.npy", "valid_edges.npy", "test_edges.npy", "valid_neg.npy", "test_neg.npy"};

struct Dataset {
  std::string path;    // directory it was read from
  std::string layout;  // "ogb" or "numpy"
  std::string split;   // OGB: the split/<name> folder used; numpy layout: empty
  int64_t num_nodes = 0;
  graph::Csr in_edges;      // CSC; no self loops, no duplicates
  int64_t input_edges = 0;  // edges as listed in the input
  int64_t self_loops_dropped = 0;
  int64_t duplicates_dropped = 0;
  FeatureMatrix features;          // [num_nodes, feat_dim]
  std::vector<int64_t> labels;     // [num_nodes], each in [0, num_classes), or -1 (unlabelled:
                                   // a node in no split (the numpy layout) or outside
                                   // the target type (heterogeneous datasets)
  int64_t num_classes = 0;         // data/class_count.h: stated, given, or max label + 1
  std::vector<int64_t> train_idx;  // sorted ascending, unique, in [0, num_nodes)
  std::vector<int64_t> valid_idx;
  std::vector<int64_t> test_idx;

  // Heterogeneous datasets only (data/hetero.h); homogeneous ones leave both empty.
  // Then `features` is empty (per-type features live in hetero->node_types), labels are -1
  // outside the target type, the splits hold target-type ids only, and edge_relation has one
  // relation id per entry of in_edges.indices, each row sorted by (relation, source).
  std::optional<HeteroSchema> hetero;
  std::vector<int32_t> edge_relation;

  // Numpy layout with train_edges.npy etc. only: the dataset's own link-prediction split.
  std::optional<EdgeSplitArrays> edge_split;

  // Datasets with edge_time etc. (data/edge_arrays.h; any layout but the heterogeneous OGB
  // one): edge_arrays hold one row per
  // entry of in_edges.indices (a reverse entry repeats its edge's values), node_arrays one per
  // node. With edge_time, repeated pairs are kept (duplicates_dropped is 0).
  std::vector<ExtraArray> edge_arrays;
  std::vector<ExtraArray> node_arrays;

  int64_t num_edges() const { return in_edges.num_entries(); }  // after dedup (+ reverse)
  int64_t feat_dim() const { return features.cols(); }
};

struct LoadOptions {
  bool undirected = false;        // homogeneous: add the reverse of every edge
  int threads = 0;                // <= 0: all hardware threads (graph build, feature scan)
  std::string split;              // OGB split folder under split/; empty: the only one present
  bool reverse_relations = true;  // heterogeneous: add "rev_<name>" for every relation
  // The number of classes, for layouts that do not state it (data/class_count.h); every
  // label must be below it. 0: max label + 1, refused when most of those classes are empty.
  int64_t num_classes = 0;
};

// Per-phase figures of a load, for progress output and benchmarks. Numpy layout: edges.npy
// is read while the graph is built, so its time is in build_graph_s (read_edges_s = 0) and
// read_features_s is the NaN/Inf scan of the mapped features.
struct LoadStats {
  double read_edges_s = 0, read_features_s = 0, read_rest_s = 0, build_graph_s = 0;
  int64_t text_bytes = 0;        // decompressed CSV bytes parsed (OGB layout)
  int64_t compressed_bytes = 0;  // size of the .csv.gz files they came from
  double text_s = 0;  // seconds spent decompressing + parsing them (text_bytes / text_s: MB/s)
};

// Whether `dir` looks like a dataset load_dataset would read (it tells the layouts apart by
// the same files): raw/ (OGB), hetero.json or edges/features .npy files (Partita numpy).
bool looks_like_dataset(const std::string& dir);

// Reads `dir`, detecting the layout: OGB raw node-property (raw/edge.csv.gz ...) or the
// Partita numpy layout (edges.npy ...; see docs/dataset-format.md). Every file is
// validated; problems throw IoError/FormatError whose message starts with the offending
// path. `stats` (optional) is overwritten. Uses up to options.threads threads; blocks for as
// long as reading takes (a products-scale OGB directory: tens of seconds).
Dataset load_dataset(const std::string& dir, const LoadOptions& options,
                     LoadStats* stats = nullptr);

}  // namespace partita::data
