#pragma once
// Warming the hot-feature cache before training (torch-free; trainer.h, "Cache").
//
// Each rank pre-samples the first presample_batches steps of an epoch no training step uses
// (its own shares of `plan`'s global batches, blocks only: loader/hot_nodes.h), picks the
// remote nodes those batches need most (at most ratio x the nodes it owns) and fetches their
// rows into a store::FeatureCache through `fetcher`. The caller hands the cache to the
// fetcher (FeatureFetcher::set_cache) and keeps it alive while the fetcher uses it.
// Results of training do not change; only the traffic does. Blocks on the sampler's and
// fetcher's remote requests (their timeouts apply); no collective.
#include <cstdint>
#include <vector>

#include "partita/loader/seed_plans.h"
#include "partita/loader/seeds.h"
#include "partita/sample/fanouts.h"
#include "partita/sample/neighbor_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_cache.h"
#include "partita/store/feature_store.h"

namespace partita::loader {

struct CacheWarmupOptions {
  double ratio = 0;                // cache_ratio: 0 = no cache, at most 1
  int64_t presample_batches = 10;  // >= 1
  sample::Fanouts fanouts;         // the training fanouts
  uint64_t seed = 0;
  uint64_t epoch = 0;  // sampling-key epoch of the pre-sampling: one no training pass uses
  int trainers = 1;    // ranks that train (no cache on one)
};

struct CacheWarmup {
  bool built = false;             // false: no cache for these options (see below)
  store::FeatureCache cache;      // empty unless built
  int64_t presample_batches = 0;  // batches pre-sampled
  // Share of the pre-sampled batches' remote rows the cache covers (its expected hit rate).
  double expected_hit_rate = 0;
  double seconds = 0;  // choosing and fetching
};

// Builds the cache, or an empty one when ratio is 0, the graph is replicated or a client's
// (a server-client trainer owns no node: its budget is 0) or one rank trains. Throws
// ParameterError(cache_ratio) for a typed graph with ratio > 0 (not supported yet).
CacheWarmup warm_feature_cache(sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher,
                               const store::DistGraph& graph, const GlobalBatches& plan,
                               const SeedShare& share, const CacheWarmupOptions& options);

}  // namespace partita::loader
