// Warming the hot-feature cache: see partita/loader/cache_warmup.h.
#include "partita/loader/cache_warmup.h"

#include <algorithm>

#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/loader/hot_nodes.h"

namespace partita::loader {
namespace {

// The device cache ranks an input node by how many pre-sampled batches need it, a remote one
// counted twice: a remote row costs its owner's gather and the wire besides the gather and
// the device copy that a local row costs. Measured (synth200k, 2 METIS ranks, R = 0.2, 10
// pre-sampled batches): most hot rows are needed by all 10 batches, so counted once the
// ties went to the smaller, local ids and rank 0 cached 20600 local rows (expected hit rate
// 0.121, no remote row saved); counted twice it caches 20600 remote rows with the same
// expected hit rate and 25.3% of the remote rows (a training step's remote reply bytes
// 97.3 -> 74.2 MB), what the host cache's remote-only ranking covers at that budget.
constexpr int64_t kDeviceCacheRemoteWeight = 2;

}  // namespace

CacheWarmup warm_feature_cache(sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher,
                               const store::DistGraph& graph, const GlobalBatches& plan,
                               const SeedShare& share, const CacheWarmupOptions& options) {
  CacheWarmup out;
  if (options.ratio <= 0 || graph.replicated() || graph.client() || options.trainers == 1)
    return out;
  Stopwatch watch;
  std::vector<std::vector<int64_t>> batches =
      plan.epoch_batches(options.seed, options.epoch, share);
  if (static_cast<int64_t>(batches.size()) > options.presample_batches)
    batches.resize(static_cast<size_t>(options.presample_batches));
  const bool edges = options.edge_features && graph.has_edge_features();
  HotNodes hot_edges;
  const HotNodes hot = hottest_remote_nodes(sampler, graph, batches, options.fanouts, options.seed,
                                            options.epoch, cache_budget(graph, options.ratio),
                                            options.temporal, edges ? &hot_edges : nullptr,
                                            edges ? edge_cache_budget(graph, options.ratio) : 0);
  out.built = true;
  out.cache = graph.typed()
                  ? store::FeatureCache::fetch_typed(fetcher, hot.ids)
                  : store::FeatureCache::fetch(fetcher, hot.ids, graph.feature_row_bytes());
  if (edges) out.edge_cache = store::FeatureCache::fetch_edges(fetcher, hot_edges.ids);
  out.presample_batches = hot.batches;
  const auto share_of = [](int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  out.expected_hit_rate = share_of(hot.covered, hot.remote_appearances);
  out.edge_expected_hit_rate = share_of(hot_edges.covered, hot_edges.remote_appearances);
  out.seconds = watch.seconds();
  return out;
}

DeviceRowsWarmup warm_device_rows(sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher,
                                  const store::DistGraph& graph, const GlobalBatches& plan,
                                  const SeedShare& share, const CacheWarmupOptions& options) {
  DeviceRowsWarmup out;
  if (options.rows < 0 && options.ratio <= 0) return out;  // no cache asked for
  PARTITA_CHECK_PARAM(!graph.typed(), "gpu_cache_ratio",
                      "the device feature cache does not support typed partitions yet");
  PARTITA_CHECK_PARAM(!graph.client(), "gpu_cache_ratio",
                      "a server-client trainer owns no node, and the device feature cache holds "
                      "a share of the nodes a rank owns; run in worker mode (no `servers`)");
  const int64_t budget = options.rows >= 0 ? options.rows : cache_budget(graph, options.ratio);
  if (budget <= 0) return out;
  Stopwatch watch;
  std::vector<std::vector<int64_t>> batches =
      plan.epoch_batches(options.seed, options.epoch, share);
  if (static_cast<int64_t>(batches.size()) > options.presample_batches)
    batches.resize(static_cast<size_t>(options.presample_batches));
  HotNodes hot =
      hottest_input_nodes(sampler, graph, batches, options.fanouts, options.seed, options.epoch,
                          budget, kDeviceCacheRemoteWeight, options.temporal);
  if (options.rows >= 0) {
    // What the hottest rows leave of the budget: owned rows the pre-sampling did not see.
    std::vector<bool> chosen(static_cast<size_t>(graph.num_local_nodes()), false);
    for (int64_t gid : hot.ids)
      if (graph.owns(gid)) chosen[static_cast<size_t>(gid - graph.first_node())] = true;
    for (int64_t gid = graph.first_node();
         gid < graph.end_node() && static_cast<int64_t>(hot.ids.size()) < budget; ++gid)
      if (!chosen[static_cast<size_t>(gid - graph.first_node())]) hot.ids.push_back(gid);
  }
  out.resident = store::ResidentRows(graph.num_nodes(), hot.ids);
  const std::vector<int64_t>& ids = out.resident.ids();  // slot order
  const size_t row_bytes = static_cast<size_t>(graph.feature_row_bytes());
  out.rows.resize(ids.size() * row_bytes);
  constexpr size_t kChunkRows = 65536;
  for (size_t first = 0; first < ids.size(); first += kChunkRows) {
    const size_t n = std::min(ids.size() - first, kChunkRows);
    fetcher.fetch_features(ArrayView<const int64_t>(ids.data() + first, static_cast<int64_t>(n)),
                           out.rows.data() + first * row_bytes);
  }
  for (int64_t gid : ids)
    if (!graph.owns(gid)) ++out.remote_rows;
  out.presample_batches = hot.batches;
  const auto share_of = [](int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  out.expected_hit_rate = share_of(hot.covered, hot.appearances);
  out.expected_remote_hit_rate = share_of(hot.remote_covered, hot.remote_appearances);
  out.seconds = watch.seconds();
  return out;
}

}  // namespace partita::loader
