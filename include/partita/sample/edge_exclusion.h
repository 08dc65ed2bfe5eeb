#pragma once
// Edge exclusion for link prediction: the edges a step is asked to predict must not carry
// messages in its blocks (DGL's exclude='self' / 'reverse_id').
//
// Exclusion runs after sampling. Given pairs (a, b) of global ids, it removes from every row
// of every block of a batch every edge src -> dst (all its copies, as sampling with
// replacement may repeat one) where, for some pair:
//   kSelf     (src, dst) = (a, b);
//   kReverse  (src, dst) = (a, b) or (b, a);
//   kNone     nothing is removed.
// Nothing else changes: the blocks keep their dst and src node lists (a src node may be
// left without edges: it then contributes nothing), and the remaining edges keep their
// order. Every row is checked, not only the seeds' ones, so the result for a node does not
// depend on which batch holds it: a link trainer excludes its global step's pairs from
// every rank's blocks and gets the same step on 1 and P ranks. With fanout -1 and pairs
// between seeds the result equals sampling a graph without those edges; with a finite
// fanout a row may end up with fewer than `fanout` neighbors (as DGL's post-sampling
// removal).
//
// Degrees (GCN's graph in-degrees, loader::Batch::degrees, aligned with input_nodes): each
// input node's degree is lowered by the number of distinct excluded directed edges into it,
// never below 0. The caller asserts that every excluded directed edge is an edge of the
// graph (the training pairs of an edge split are; their reverses are when the partition is
// undirected).
//
// Cost: one hash lookup per block row and one per edge of a row whose dst is a pair's
// endpoint, plus one pass that moves the kept edges down.
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/core/name_table.h"
#include "partita/sample/block_builder.h"

namespace partita::sample {

enum class Exclude { kNone, kSelf, kReverse };

// The names of the exclusions (--exclude), in the order messages list them.
inline const NameTable<Exclude>& exclude_names() {
  static const NameTable<Exclude> names{
      {"reverse", Exclude::kReverse}, {"self", Exclude::kSelf}, {"none", Exclude::kNone}};
  return names;
}

// Removes the excluded edges of `pairs` ([m, 2] row-major (a, b), global ids) from `batch`
// in place (see above) and returns how many block edges were removed over all blocks.
// A block's per-edge arrays (etypes, edge_ids), where present, stay aligned with indices.
// `degrees`: nullptr, or the batch's input-node degrees to lower. Throws partita::Error
// (before changing anything) if pairs has an odd size or a negative id, if `degrees` is
// given with a size other than input_nodes.size(), or if a block's indptr does not have
// num_dst + 1 entries.
int64_t exclude_edges(SampledBatch& batch, ArrayView<const int64_t> pairs, Exclude mode,
                      std::vector<int64_t>* degrees = nullptr);

}  // namespace partita::sample
