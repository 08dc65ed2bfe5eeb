#pragma once
// Multi-hop sampling into blocks (message-flow graphs). Hop i samples fanouts[i]
// in-neighbors of its frontier; hop 0's frontier is the seeds, hop i+1's is every src
// node of block i.
//
// Block i is a CSC over dst = hop i's frontier and src = the dst nodes first, in the same
// order, then the nodes newly reached at hop i in order of first appearance in the
// sampled neighbor list. blocks are in HOP order: blocks[0] has dst = seeds, and
// blocks.back() holds the input (outermost) layer, so a GNN applies its first layer to
// blocks.back() and its last to blocks[0].
//
// Typed graphs (the sampler returns relations): each hop samples every relation of a
// frontier node's in-edges on its own (neighbor_kernel.h), and Block::etypes holds the
// relation of each block edge.
//
// Seeds must be distinct: a repeated seed throws partita::Error (dedupe or reject in the
// loader, where the labels are).
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/sample/fanouts.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/neighbor_sampler.h"
#include "partita/sample/node_relabeler.h"
#include "partita/sample/sample_key.h"

namespace partita::sample {

struct Block {
  int64_t num_dst = 0;
  int64_t num_src = 0;             // >= num_dst
  std::vector<int64_t> indptr;     // num_dst + 1 offsets into indices
  std::vector<int64_t> indices;    // local src ids in [0, num_src); edge src -> dst
  std::vector<int64_t> src_nodes;  // num_src global ids; the first num_dst are the dst nodes
  // Typed graphs only (empty otherwise): the relation id of each edge, aligned with
  // indices; inside a dst row the edges are grouped by relation, in increasing relation id.
  std::vector<int32_t> etypes;

  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
};

struct SampledBatch {
  std::vector<int64_t> seeds;        // global ids, as given
  std::vector<Block> blocks;         // hop order: blocks[0].dst = seeds
  std::vector<int64_t> input_nodes;  // blocks.back().src_nodes (the seeds if no hops)

  int64_t num_sampled_edges() const;
};

struct BlockOptions {
  // Per hop (hop 0 first; -1: all neighbors), and on typed graphs optionally per relation
  // (fanouts.h; fanout_spec.h builds them from text).
  Fanouts fanouts;
  SampleKey key;  // (seed, epoch, batch) of this batch
};

// Keeps its relabelling table and buffers between batches. Not thread-safe: one builder
// per sampler thread (the sampler it is given may itself use threads).
class BlockBuilder {
 public:
  // Samples a batch through `sampler`. Throws partita::Error on a repeated seed, a fanout
  // < -1, per-relation fanouts whose size is not the hop count, a sampler that returns
  // inconsistent counts or relations, or whatever the sampler throws.
  SampledBatch build(ArrayView<const int64_t> seeds, const BlockOptions& options,
                     NeighborSampler& sampler);

 private:
  NodeRelabeler relabeler_;
  NeighborSample sample_;
};

// One-shot convenience: BlockBuilder().build(...).
SampledBatch sample_blocks(ArrayView<const int64_t> seeds, const BlockOptions& options,
                           NeighborSampler& sampler);

}  // namespace partita::sample
