#pragma once
// Warming the hot-feature cache before training (torch-free; trainer.h, "Cache").
//
// Each rank pre-samples the first presample_batches steps of an epoch no training step uses
// (its own shares of `plan`'s global batches, blocks only: loader/hot_nodes.h), picks the
// remote nodes those batches need most (at most ratio x the nodes it owns) and fetches their
// rows into a store::FeatureCache through `fetcher`. The caller hands the cache to the
// fetcher (FeatureFetcher::set_cache) and keeps it alive while the fetcher uses it.
// Results of training do not change; only the traffic does (with a temporal sampler too:
// CacheWarmupOptions::temporal). With edge features (CacheWarmupOptions::edge_features,
// issue 41) the same pre-sampling also picks the remote edges those batches' blocks need
// most (at most ratio x the edges this rank's part stores: hot_nodes.h edge_cache_budget)
// and fetches their rows (FeatureCache::fetch_edges) into a second cache, keyed by edge id,
// for FeatureFetcher::set_edge_cache. Blocks on the sampler's and
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
#include "partita/store/resident_rows.h"

namespace partita::loader {

struct CacheWarmupOptions {
  double ratio = 0;                // cache_ratio: 0 = no cache, at most 1
  int64_t presample_batches = 10;  // >= 1
  sample::Fanouts fanouts;         // the training fanouts
  uint64_t seed = 0;
  uint64_t epoch = 0;  // sampling-key epoch of the pre-sampling: one no training pass uses
  int trainers = 1;    // ranks that train (no cache on one)
  // warm_device_rows only: the row budget in rows, instead of ratio x the nodes this rank
  // owns (-1: ratio's). Rows the pre-sampling did not see then fill what the hottest ones
  // leave of it: this rank's own, in id order (gpu_cache_ratio auto: every owned row when
  // they all fit).
  int64_t rows = -1;
  // The sampler's temporal strategy (kNone: it does not sample by time). A temporal sampler
  // needs a time per seed; the pre-sampling gives every seed the latest time there is
  // (hot_nodes.h), so the cache is chosen from neighbourhoods without times. Which rows are
  // cached changes no result of training, only how many rows hit.
  sample::Temporal temporal = sample::Temporal::kNone;
  // Also cache edge feature rows (the training fetches them: --edge-features). The sampler
  // must then return edge ids, as the training's does.
  bool edge_features = false;
};

struct CacheWarmup {
  bool built = false;             // false: no cache for these options (see below)
  store::FeatureCache cache;      // empty unless built
  int64_t presample_batches = 0;  // batches pre-sampled
  // Share of the pre-sampled batches' remote rows the cache covers (its expected hit rate).
  double expected_hit_rate = 0;
  // options.edge_features: the cache of remote edge rows (empty otherwise, or when not
  // built), and the share of the pre-sampled batches' remote edge rows it covers.
  store::FeatureCache edge_cache;
  double edge_expected_hit_rate = 0;
  double seconds = 0;  // choosing and fetching
};

// Builds the cache, or an empty one when ratio is 0, the graph is replicated or a client's
// (a server-client trainer owns no node: its budget is 0) or one rank trains. On a typed
// graph the cache is a typed one (FeatureCache::fetch_typed): the hottest remote rows of
// featured types, the budget in rows (loader/hot_nodes.h cache_budget).
CacheWarmup warm_feature_cache(sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher,
                               const store::DistGraph& graph, const GlobalBatches& plan,
                               const SeedShare& share, const CacheWarmupOptions& options);

// The rows of the device feature cache (train/device_feature_cache.h, issue 24), chosen by
// the same pre-sampling: the hottest input nodes, local or remote, a remote one counted
// twice (hottest_input_nodes; cache_warmup.cc says why),
// at most ratio x the nodes this rank owns, and their rows fetched through `fetcher` (the
// normal path) in the stored dtype. Unlike warm_feature_cache it builds one on a single
// trainer and on a replicated graph (the rows then are all local). options.trainers unused.
struct DeviceRowsWarmup {
  store::ResidentRows resident;  // the chosen ids (empty for ratio 0)
  // [resident.size(), feature_row_bytes] in slot order (ascending ids), as stored.
  std::vector<uint8_t> rows;
  int64_t remote_rows = 0;        // chosen ids owned by other ranks
  int64_t presample_batches = 0;  // batches pre-sampled
  // Share of the pre-sampled batches' input rows the chosen ids cover (the expected hit
  // rate), and of their remote input rows.
  double expected_hit_rate = 0;
  double expected_remote_hit_rate = 0;
  double seconds = 0;  // choosing and fetching
};

// Throws ParameterError(gpu_cache_ratio) for a budget > 0 on a typed graph (not supported yet)
// or a server-client trainer's view (it owns no node: no budget). Blocks as
// warm_feature_cache.
DeviceRowsWarmup warm_device_rows(sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher,
                                  const store::DistGraph& graph, const GlobalBatches& plan,
                                  const SeedShare& share, const CacheWarmupOptions& options);

}  // namespace partita::loader
