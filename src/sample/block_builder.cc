#include "partita/sample/block_builder.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "partita/core/error.h"

namespace partita::sample {

int64_t SampledBatch::num_sampled_edges() const {
  int64_t total = 0;
  for (const Block& b : blocks) total += b.num_edges();
  return total;
}

namespace {

// Throws unless the fanouts are valid for `options`' hop count.
void check_fanouts(const BlockOptions& options) {
  const std::vector<int64_t>& fanouts = options.fanouts.hops;
  const std::vector<std::vector<int64_t>>& relation_fanouts = options.fanouts.relations;
  const int num_hops = static_cast<int>(fanouts.size());
  PARTITA_CHECK(relation_fanouts.empty() || relation_fanouts.size() == fanouts.size(), Error,
                "sample: relation fanouts are given for {} hops, fanouts for {}",
                relation_fanouts.size(), fanouts.size());
  for (int hop = 0; hop < num_hops; ++hop) {
    PARTITA_CHECK(fanouts[hop] >= -1, Error,
                  "sample: fanout {} of hop {} is invalid (use k >= 0, or -1 for all)",
                  fanouts[hop], hop);
    if (relation_fanouts.empty()) continue;
    const std::vector<int64_t>& per_relation = relation_fanouts[hop];
    for (size_t r = 0; r < per_relation.size(); ++r) {
      PARTITA_CHECK(per_relation[r] >= -1, Error,
                    "sample: fanout {} of relation {} at hop {} is invalid (use k >= 0, or -1 "
                    "for all)",
                    per_relation[r], r, hop);
    }
  }
}

HopRequest hop_request(const BlockOptions& options, int hop, ArrayView<const int64_t> frontier) {
  HopRequest request;
  request.frontier = frontier;
  request.hop = hop;
  request.hop_key = hop_key(options.key, hop);
  request.fanout = options.fanouts.hops[hop];
  if (!options.fanouts.relations.empty()) {
    request.relation_fanouts = ArrayView<const int64_t>(options.fanouts.relations[hop]);
  }
  return request;
}

// Checks the sampler's answer for block.num_dst frontier nodes and fills block.indptr.
void fill_indptr(const NeighborSample& sample, int hop, const std::vector<int64_t>& frontier,
                 Block& block) {
  PARTITA_CHECK(static_cast<int64_t>(sample.counts.size()) == block.num_dst, Error,
                "sample: hop {}: the sampler returned {} counts for {} frontier nodes", hop,
                sample.counts.size(), block.num_dst);
  block.indptr.resize(static_cast<size_t>(block.num_dst) + 1);
  block.indptr[0] = 0;
  for (int64_t i = 0; i < block.num_dst; ++i) {
    PARTITA_CHECK(sample.counts[i] >= 0, Error,
                  "sample: hop {}: the sampler returned count {} for node {}", hop,
                  sample.counts[i], frontier[i]);
    block.indptr[i + 1] = block.indptr[i] + sample.counts[i];
  }
  PARTITA_CHECK(block.indptr.back() == static_cast<int64_t>(sample.neighbors.size()), Error,
                "sample: hop {}: the sampler's counts sum to {} but it returned {} ids", hop,
                block.indptr.back(), sample.neighbors.size());
}

void check_relations(const NeighborSample& sample, int hop, const Block& block) {
  PARTITA_CHECK(sample.relations.empty() || sample.relations.size() == block.indices.size(), Error,
                "sample: hop {}: the sampler returned {} relations for {} ids", hop,
                sample.relations.size(), block.indices.size());
  PARTITA_CHECK(sample.edge_ids.empty() || sample.edge_ids.size() == block.indices.size(), Error,
                "sample: hop {}: the sampler returned {} edge ids for {} ids", hop,
                sample.edge_ids.size(), block.indices.size());
}

// Moves the sample's relations and edge ids (checked) into `block`.
void take_edge_arrays(NeighborSample& sample, int hop, Block& block) {
  check_relations(sample, hop, block);
  block.etypes = std::move(sample.relations);
  sample.relations.clear();
  block.edge_ids = std::move(sample.edge_ids);
  sample.edge_ids.clear();
}

}  // namespace

SampledBatch BlockBuilder::build(ArrayView<const int64_t> seeds, const BlockOptions& options,
                                 NeighborSampler& sampler) {
  SampledBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  if (!options.seed_times.empty()) {
    build_temporal(options, sampler, batch);
    return batch;
  }
  relabeler_.clear();
  relabeler_.reserve(seeds.size());
  for (int64_t i = 0; i < seeds.size(); ++i) {
    if (relabeler_.insert(seeds[i]) != i) {
      throw Error(fmt::format("sample: seed {} appears more than once (positions {} and {})",
                              seeds[i], relabeler_.insert(seeds[i]), i));
    }
  }
  check_fanouts(options);

  const int num_hops = static_cast<int>(options.fanouts.hops.size());
  batch.blocks.resize(static_cast<size_t>(num_hops));
  for (int hop = 0; hop < num_hops; ++hop) {
    Block& block = batch.blocks[hop];
    block.num_dst = relabeler_.size();
    sampler.sample_hop(hop_request(options, hop, relabeler_.nodes()), &sample_);
    fill_indptr(sample_, hop, relabeler_.nodes(), block);

    // The sampled ids become the block's indices, relabelled in place.
    block.indices = std::move(sample_.neighbors);
    sample_.neighbors.clear();
    relabeler_.relabel(block.indices.data(), block.num_edges());
    take_edge_arrays(sample_, hop, block);
    block.num_src = relabeler_.size();
    block.src_nodes = relabeler_.nodes();
  }
  batch.input_nodes = num_hops == 0 ? batch.seeds : batch.blocks.back().src_nodes;
  return batch;
}

void BlockBuilder::build_temporal(const BlockOptions& options, NeighborSampler& sampler,
                                  SampledBatch& batch) {
  const std::vector<int64_t>& seeds = batch.seeds;
  const ArrayView<const int64_t> seed_times = options.seed_times;
  PARTITA_CHECK(seed_times.size() == static_cast<int64_t>(seeds.size()), Error,
                "sample: {} seed times for {} seeds", seed_times.size(), seeds.size());
  batch.seed_times.assign(seed_times.begin(), seed_times.end());
  pairs_.clear();
  pair_nodes_.clear();
  pair_times_.clear();
  for (size_t i = 0; i < seeds.size(); ++i) {
    const auto [it, added] =
        pairs_.try_emplace(std::make_pair(seeds[i], seed_times[i]), static_cast<int64_t>(i));
    if (!added) {
      throw Error(
          fmt::format("sample: seed {} at time {} appears more than once (positions {} and {})",
                      seeds[i], seed_times[i], it->second, i));
    }
    pair_nodes_.push_back(seeds[i]);
    pair_times_.push_back(seed_times[i]);
  }
  check_fanouts(options);
  const int num_hops = static_cast<int>(options.fanouts.hops.size());
  batch.blocks.resize(static_cast<size_t>(num_hops));
  for (int hop = 0; hop < num_hops; ++hop) {
    Block& block = batch.blocks[hop];
    block.num_dst = static_cast<int64_t>(pair_nodes_.size());
    HopRequest request = hop_request(options, hop, pair_nodes_);
    request.times = pair_times_;
    sampler.sample_hop(request, &sample_);
    fill_indptr(sample_, hop, pair_nodes_, block);

    // Each sampled id, at its dst entry's time, relabelled in place as a (node, time) pair.
    // The table is probed kPairPrefetch edges ahead (the probes are random over a big
    // table), so each edge's time is laid out first.
    block.indices = std::move(sample_.neighbors);
    sample_.neighbors.clear();
    const int64_t num_edges = block.num_edges();
    std::vector<int64_t> edge_times(static_cast<size_t>(num_edges));
    for (int64_t i = 0; i < block.num_dst; ++i) {
      std::fill(edge_times.begin() + block.indptr[i], edge_times.begin() + block.indptr[i + 1],
                pair_times_[i]);
    }
    pairs_.reserve(pair_nodes_.size() + static_cast<size_t>(num_edges));
    constexpr int64_t kPairPrefetch = 16;
    for (int64_t j = 0; j < num_edges; ++j) {
      if (j + kPairPrefetch < num_edges) {
        pairs_.prefetch(
            std::make_pair(block.indices[j + kPairPrefetch], edge_times[j + kPairPrefetch]));
      }
      const int64_t node = block.indices[j];
      const auto [it, added] = pairs_.try_emplace(std::make_pair(node, edge_times[j]),
                                                  static_cast<int64_t>(pair_nodes_.size()));
      if (added) {
        pair_nodes_.push_back(node);
        pair_times_.push_back(edge_times[j]);
      }
      block.indices[j] = it->second;
    }
    take_edge_arrays(sample_, hop, block);
    block.num_src = static_cast<int64_t>(pair_nodes_.size());
    block.src_nodes = pair_nodes_;
    block.src_times = pair_times_;
  }
  batch.input_nodes = num_hops == 0 ? batch.seeds : batch.blocks.back().src_nodes;
}

SampledBatch sample_blocks(ArrayView<const int64_t> seeds, const BlockOptions& options,
                           NeighborSampler& sampler) {
  BlockBuilder builder;
  return builder.build(seeds, options, sampler);
}

}  // namespace partita::sample
