#include "partita/sample/block_builder.h"

#include <utility>

#include "partita/core/error.h"

namespace partita::sample {

int64_t SampledBatch::num_sampled_edges() const {
  int64_t total = 0;
  for (const Block& b : blocks) total += b.num_edges();
  return total;
}

SampledBatch BlockBuilder::build(ArrayView<const int64_t> seeds, const BlockOptions& options,
                                 NeighborSampler& sampler) {
  SampledBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  relabeler_.clear();
  relabeler_.reserve(seeds.size());
  for (int64_t i = 0; i < seeds.size(); ++i) {
    if (relabeler_.insert(seeds[i]) != i) {
      throw Error(fmt::format("sample: seed {} appears more than once (positions {} and {})",
                              seeds[i], relabeler_.insert(seeds[i]), i));
    }
  }

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
  batch.blocks.resize(static_cast<size_t>(num_hops));
  for (int hop = 0; hop < num_hops; ++hop) {
    Block& block = batch.blocks[hop];
    block.num_dst = relabeler_.size();
    HopRequest request;
    request.frontier = ArrayView<const int64_t>(relabeler_.nodes());
    request.hop = hop;
    request.hop_key = hop_key(options.key, hop);
    request.fanout = fanouts[hop];
    if (!relation_fanouts.empty()) {
      request.relation_fanouts = ArrayView<const int64_t>(relation_fanouts[hop]);
    }
    sampler.sample_hop(request, &sample_);

    PARTITA_CHECK(static_cast<int64_t>(sample_.counts.size()) == block.num_dst, Error,
                  "sample: hop {}: the sampler returned {} counts for {} frontier nodes", hop,
                  sample_.counts.size(), block.num_dst);
    block.indptr.resize(static_cast<size_t>(block.num_dst) + 1);
    block.indptr[0] = 0;
    for (int64_t i = 0; i < block.num_dst; ++i) {
      PARTITA_CHECK(sample_.counts[i] >= 0, Error,
                    "sample: hop {}: the sampler returned count {} for node {}", hop,
                    sample_.counts[i], relabeler_.nodes()[i]);
      block.indptr[i + 1] = block.indptr[i] + sample_.counts[i];
    }
    PARTITA_CHECK(block.indptr.back() == static_cast<int64_t>(sample_.neighbors.size()), Error,
                  "sample: hop {}: the sampler's counts sum to {} but it returned {} ids", hop,
                  block.indptr.back(), sample_.neighbors.size());

    // The sampled ids become the block's indices, relabelled in place.
    block.indices = std::move(sample_.neighbors);
    sample_.neighbors.clear();
    relabeler_.relabel(block.indices.data(), block.num_edges());
    PARTITA_CHECK(sample_.relations.empty() || sample_.relations.size() == block.indices.size(),
                  Error, "sample: hop {}: the sampler returned {} relations for {} ids", hop,
                  sample_.relations.size(), block.indices.size());
    block.etypes = std::move(sample_.relations);
    sample_.relations.clear();
    block.num_src = relabeler_.size();
    block.src_nodes = relabeler_.nodes();
  }
  batch.input_nodes = num_hops == 0 ? batch.seeds : batch.blocks.back().src_nodes;
  return batch;
}

SampledBatch sample_blocks(ArrayView<const int64_t> seeds, const BlockOptions& options,
                           NeighborSampler& sampler) {
  BlockBuilder builder;
  return builder.build(seeds, options, sampler);
}

}  // namespace partita::sample
