#pragma once
// Seed-edge exclusion for link prediction: the edges a batch is asked to predict must not
// carry messages to its own endpoints (DGL's exclude='self' / 'reverse_id').
//
// A link batch samples its blocks around the distinct endpoints of its pairs (the seeds;
// sample/block_builder.h). Every block's dst nodes begin with the seeds, in seed order, and
// so do its src nodes, so an edge between two seeds has local ids < seeds.size() in every
// block. Exclusion runs after sampling: from every block it removes every edge src -> dst
// (all its copies, as sampling with replacement may repeat one) where, for some pair
// (a, b) given by seed positions:
//   kSelf     src = a and dst = b;
//   kReverse  (src, dst) = (a, b) or (b, a);
//   kNone     nothing is removed.
// Nothing else changes: the blocks keep their dst and src node lists (every endpoint is a
// seed, so no node becomes unreachable), and the remaining edges keep their order. With
// fanout -1 the result equals sampling a graph without those edges; with a finite fanout
// a row may end up with fewer than `fanout` neighbors (as DGL's post-sampling removal).
//
// Degrees (GCN's graph in-degrees, loader::Batch::degrees, aligned with input_nodes, whose
// first seeds.size() entries are the seeds): each distinct excluded directed edge a -> b
// lowers the degree of b by one, never below 0. The caller asserts that every excluded
// directed edge is an edge of the graph (the training pairs of an edge split are; their
// reverses are when the partition is undirected).
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/sample/block_builder.h"

namespace partita::sample {

enum class Exclude { kNone, kSelf, kReverse };

// One pair of a link batch as positions into SampledBatch::seeds: the edge src -> dst.
struct SeedPair {
  int64_t src = 0;
  int64_t dst = 0;
};

// Removes the excluded edges from `batch` in place (see above) and returns how many block
// edges were removed over all blocks. `degrees`: nullptr, or the batch's input-node degrees
// to lower. Throws partita::Error if a pair position is outside [0, seeds.size()) or
// `degrees` is given with a size other than input_nodes.size().
int64_t exclude_seed_edges(SampledBatch& batch, ArrayView<const SeedPair> pairs, Exclude mode,
                           std::vector<int64_t>* degrees = nullptr);

}  // namespace partita::sample
