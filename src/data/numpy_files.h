#pragma once
// Which files of a directory make up a Partita numpy-layout dataset (docs/dataset-format.md):
// the canonical names and the ones PyG and DGL users save under (edge_index.npy, x.npy,
// y.npy, *_mask.npy, val_idx.npy), and the readers of the split files in both forms.
// Private to data/.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/data/hetero.h"

namespace partita::data {

// One split: a list of node ids (int64 [n]) or a node mask (bool or uint8 [N], 0/1).
struct NumpySplitFile {
  std::string name;  // "train", "valid", "test": for messages
  std::string path;
  bool mask = false;
};

struct NumpyLayoutFiles {
  std::string feat;   // feat.npy or x.npy
  std::string label;  // label.npy or y.npy
  std::string edges;  // edges.npy [E, 2] or edge_index.npy [2, E]
  bool edge_index = false;
  NumpySplitFile splits[3];  // train, valid, test
};

// Chooses the files of `dir`. Throws IoError "<dir>: missing feat.npy (or x.npy), ... (the
// numpy layout: docs/dataset-format.md)" listing every required file that has no accepted
// name present, and FormatError "<dir>: both A and B are present; ..." when two names of one
// file are.
NumpyLayoutFiles find_numpy_files(const std::string& dir);

// True when `dir` holds one of the names that mark the numpy layout (edges.npy,
// edge_index.npy, feat.npy or x.npy).
bool looks_like_numpy_layout(const std::string& dir);

// The numpy layout's files as both of its readers check them before reading values (one
// process: read_numpy_dataset; shares: read_dataset_shard): feat.npy float32 [N > 0, d > 0],
// label.npy int64 [N], the splits read whole (validated, sorted), the edge file int64 or
// int32 [E, 2] (edge_index.npy: [2, E]) with E > 0. FormatError naming the file.
struct NumpyLayout {
  NumpyLayoutFiles files;
  int64_t num_nodes = 0, feat_dim = 0, num_edges = 0;
  std::vector<int64_t> splits[3];  // train, valid, test
  bool columns = false;            // edges stored as all sources, then all destinations
};
NumpyLayout check_numpy_layout(const std::string& dir);

// The numpy heterogeneous layout's files besides hetero.json, as both of its readers check
// them before reading (one process: read_numpy_hetero_dataset; shares: read_dataset_shard):
// label.npy int64 [target count]; {train,valid,test}_idx.npy, read whole (ids of the target
// type, validated, sorted, homogenised); edges/<triplet>.npy int64 [E, 2] per relation, at
// least one edge in all; feat/<type>.npy float32 [type count, d > 0] per type that has one,
// feat/ holding nothing else. FormatError naming the file.
struct NumpyHeteroLayout {
  std::string label;
  std::vector<int64_t> splits[3];     // train, valid, test
  std::vector<std::string> edges;     // per relation, in schema order
  std::vector<std::string> features;  // per node type; "" when it has none
};
NumpyHeteroLayout check_numpy_hetero_layout(const std::string& dir, const HeteroSchema& schema);

// The split's node ids, validated (in [0, num_nodes), unique) and sorted. A mask must have
// num_nodes entries, each 0 or 1 (FormatError naming the file and `feat` otherwise).
std::vector<int64_t> read_numpy_split(const NumpySplitFile& file, int64_t num_nodes,
                                      const std::string& feat);

}  // namespace partita::data
