#pragma once
// Private to partition/: writes the arrays of a partition directory.
#include <string>
#include <vector>

#include "partita/data/dataset.h"
#include "partita/partition/format.h"
#include "partita/partition/renumber.h"

namespace partita::partition {

struct WriteResult {
  std::vector<FileEntry> files;  // node_map.npy, then per part in kPartArrayNames order
  std::vector<PartStats> parts;
  int64_t edge_cut = 0;    // stored in-edges whose source is owned by another part
  double structure_s = 0;  // node_map, indptr, indices, labels, splits
  double features_s = 0;   // feat.npy of every part
};

// Writes node_map.npy and part<p>/{indptr,indices,feat,label,train_idx,valid_idx,test_idx}.npy
// under `out_dir` (which must exist), each through NpyWriter (temp file + rename), parts in
// order. Memory beyond the inputs: per-part indptr and labels plus fixed-size block buffers.
// A part's rows are gathered in increasing original id, so the (possibly mapped) features
// are read in one forward pass per part, releasing pages behind it.
// `in_edges` is the graph to write: dataset.in_edges, or a copy with the same rows in other
// index types (int32_t and int64_t are instantiated).
template <class Index>
WriteResult write_partition_arrays(const data::Dataset& dataset,
                                   const graph::CsrOf<Index>& in_edges,
                                   const Renumbering& numbering, const std::string& out_dir,
                                   int threads, DType feature_dtype = DType::kFloat32);

}  // namespace partita::partition
