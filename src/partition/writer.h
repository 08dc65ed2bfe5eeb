#pragma once
// Private to partition/: writes the arrays of a partition directory.
#include <string>
#include <vector>

#include "partita/data/dataset.h"
#include "partita/partition/edge_split.h"
#include "partita/partition/format.h"
#include "partita/partition/renumber.h"

namespace partita::partition {

struct WriteResult {
  // node_map.npy, then per part in kPartArrayNames order (typed: etype after indices and
  // feat_<TYPE> per featured type in place of feat)
  std::vector<FileEntry> files;
  std::vector<PartStats> parts;  // typed datasets: with type_nodes and relation_edges
  // Typed datasets only: TypedMeta::type_starts of the partition written.
  std::vector<std::vector<int64_t>> type_starts;
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
// Typed datasets (dataset.hetero set; in_edges must then have dataset.in_edges' rows in the
// same order): etype.npy after indices.npy, and feat_<TYPE>.npy per featured type in type
// order instead of feat.npy.
template <class Index>
WriteResult write_partition_arrays(const data::Dataset& dataset,
                                   const graph::CsrOf<Index>& in_edges,
                                   const Renumbering& numbering, const std::string& out_dir,
                                   int threads, DType feature_dtype = DType::kFloat32);

// Writes a link-prediction split (format.h kEdgeSplitFiles, part<p>/train_edges.npy) under
// `out_dir`, pairs mapped to new ids: sampled held-out sets sorted by (src, dst), the
// dataset's in their order; training pairs bucketed by the owner of their destination and
// sorted by (dst, src). Appends the files to `files`; part directories must exist.
EdgeSplitStats write_edge_split(const HeldOutEdges& held, const Renumbering& numbering,
                                const std::string& out_dir, std::vector<FileEntry>* files);

}  // namespace partita::partition
