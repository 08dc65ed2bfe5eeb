// Warming the hot-feature cache: see partita/loader/cache_warmup.h.
#include "partita/loader/cache_warmup.h"

#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/loader/hot_nodes.h"

namespace partita::loader {

CacheWarmup warm_feature_cache(sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher,
                               const store::DistGraph& graph, const GlobalBatches& plan,
                               const SeedShare& share, const CacheWarmupOptions& options) {
  PARTITA_CHECK_PARAM(!graph.typed() || options.ratio == 0, "cache_ratio",
                      "the hot-feature cache does not support typed partitions yet");
  CacheWarmup out;
  if (options.ratio <= 0 || graph.replicated() || graph.client() || options.trainers == 1)
    return out;
  Stopwatch watch;
  std::vector<std::vector<int64_t>> batches =
      plan.epoch_batches(options.seed, options.epoch, share);
  if (static_cast<int64_t>(batches.size()) > options.presample_batches)
    batches.resize(static_cast<size_t>(options.presample_batches));
  const HotNodes hot = hottest_remote_nodes(sampler, graph, batches, options.fanouts, options.seed,
                                            options.epoch, cache_budget(graph, options.ratio));
  out.built = true;
  out.cache = store::FeatureCache::fetch(fetcher, hot.ids, graph.feature_row_bytes());
  out.presample_batches = hot.batches;
  out.expected_hit_rate =
      hot.remote_appearances > 0
          ? static_cast<double>(hot.covered) / static_cast<double>(hot.remote_appearances)
          : 0.0;
  out.seconds = watch.seconds();
  return out;
}

}  // namespace partita::loader
