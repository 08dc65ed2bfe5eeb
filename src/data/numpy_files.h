#pragma once
// Which files of a directory make up a Partita numpy-layout dataset (docs/dataset-format.md):
// the canonical names and the ones PyG and DGL users save under (edge_index.npy, x.npy,
// y.npy, *_mask.npy, val_idx.npy), and the readers of the split files in both forms.
// Private to data/.
#include <cstdint>
#include <string>
#include <vector>

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

// The split's node ids, validated (in [0, num_nodes), unique) and sorted. A mask must have
// num_nodes entries, each 0 or 1 (FormatError naming the file and `feat` otherwise).
std::vector<int64_t> read_numpy_split(const NumpySplitFile& file, int64_t num_nodes,
                                      const std::string& feat);

}  // namespace partita::data
