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
// Edge ids: when the sampler returns them (NeighborSample::edge_ids), Block::edge_ids holds
// each block edge's id, in the order of indices; the sampler's option is the switch, so
// blocks without them are built exactly as before.
//
// Seeds must be distinct: a repeated seed throws partita::Error (dedupe or reject in the
// loader, where the labels are).
//
// Temporal sampling (BlockOptions::seed_times given; the sampler samples temporally, e.g.
// LocalSamplerOptions::temporal): a frontier entry is a (node, time) PAIR. Hop 0's
// frontier is the seeds with their times; every neighbor sampled for an entry inherits
// that entry's time; the dst-first order and first-appearance rule above apply to pairs,
// so the same node reached at two times is two src entries, and at one time one (its
// sample is the same anyway). Block::src_times holds each src entry's time and
// SampledBatch::seed_times the seeds'; HopRequest::times carries the frontier's times to
// the sampler. Seeds must then be distinct as pairs: one node may be a seed at several
// times. Without seed_times, blocks are exactly as above and src_times stays empty.
#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <utility>
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
  // Temporal sampling only (empty otherwise): the time of each src entry, aligned with
  // src_nodes; every edge's src entry has the time of its dst entry.
  std::vector<int64_t> src_times;
  // Edge ids only (the sampler returns them, e.g. LocalSamplerOptions::edge_ids; empty
  // otherwise): the global edge id of each block edge, aligned with indices (csc_view.h:
  // a part's slot in the parts' concatenated CSC). An edge's features are the row of its
  // id (store::EdgeFeatureStore).
  std::vector<int64_t> edge_ids;

  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
};

struct SampledBatch {
  std::vector<int64_t> seeds;        // global ids, as given
  std::vector<int64_t> seed_times;   // temporal sampling: one per seed, as given; else empty
  std::vector<Block> blocks;         // hop order: blocks[0].dst = seeds
  std::vector<int64_t> input_nodes;  // blocks.back().src_nodes (the seeds if no hops)

  int64_t num_sampled_edges() const;
};

struct BlockOptions {
  // Per hop (hop 0 first; -1: all neighbors), and on typed graphs optionally per relation
  // (fanouts.h; fanout_spec.h builds them from text).
  Fanouts fanouts;
  SampleKey key;  // (seed, epoch, batch) of this batch
  // Temporal sampling: the time of each seed (node task: its node_time; link task: the seed
  // edge's time), borrowed for the call; empty: not temporal.
  ArrayView<const int64_t> seed_times{};  // {}: BlockOptions{fanouts, key} does not warn
};

// Keeps its relabelling table and buffers between batches. Not thread-safe: one builder
// per sampler thread (the sampler it is given may itself use threads).
class BlockBuilder {
 public:
  // Samples a batch through `sampler`. Throws partita::Error on a repeated seed (temporal:
  // a repeated (seed, time) pair), seed_times neither empty nor one per seed, a fanout
  // < -1, per-relation fanouts whose size is not the hop count, a sampler that returns
  // inconsistent counts or relations, or whatever the sampler throws.
  SampledBatch build(ArrayView<const int64_t> seeds, const BlockOptions& options,
                     NeighborSampler& sampler);

 private:
  void build_temporal(const BlockOptions& options, NeighborSampler& sampler, SampledBatch& batch);

  NodeRelabeler relabeler_;
  NeighborSample sample_;
  // Temporal sampling: (node, time) -> local id, and the frontier's nodes and times.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> pairs_;
  std::vector<int64_t> pair_nodes_, pair_times_;
};

// One-shot convenience: BlockBuilder().build(...).
SampledBatch sample_blocks(ArrayView<const int64_t> seeds, const BlockOptions& options,
                           NeighborSampler& sampler);

}  // namespace partita::sample
