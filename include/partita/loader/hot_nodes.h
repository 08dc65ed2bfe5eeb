#pragma once
// Choosing the rows of the hot-feature cache (store/feature_cache.h) by pre-sampling: the
// batches a rank is about to train on are sampled once (blocks only, no features) and the
// remote nodes counted by how many batches need their feature row.
#include <cstdint>
#include <vector>

#include "partita/sample/fanouts.h"
#include "partita/sample/neighbor_sampler.h"
#include "partita/store/dist_graph.h"

namespace partita::loader {

struct HotNodes {
  std::vector<int64_t> ids;        // at most `budget` remote nodes, most needed first
  int64_t batches = 0;             // batches pre-sampled
  int64_t remote_appearances = 0;  // remote input rows over those batches (with repeats)
  int64_t covered = 0;             // of which `ids` cover
};

// Throws ParameterError, naming `cache_ratio` / `cache_presample_batches`, unless
// 0 <= ratio <= 1 and presample_batches >= 1 (train and sample-bench take both).
void check_cache_options(double ratio, int64_t presample_batches);

// The cache's row budget: ratio x the nodes this rank owns (rounded down).
int64_t cache_budget(const store::DistGraph& graph, double ratio);

// Samples every batch of `batches` through `sampler` with `fanouts` under key
// {seed, epoch, step} (choose an epoch no training step uses) and returns the `budget`
// nodes not owned by this rank that appear most often among the batches' input nodes;
// ties go to the smaller id, so the choice is deterministic. budget >= 0.
HotNodes hottest_remote_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                              const std::vector<std::vector<int64_t>>& batches,
                              const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                              int64_t budget);

}  // namespace partita::loader
