#include "partita/loader/hot_nodes.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/sample/block_builder.h"

namespace partita::loader {

void check_cache_options(double ratio, int64_t presample_batches) {
  PARTITA_CHECK_PARAM(ratio >= 0 && ratio <= 1, "cache_ratio",
                      "must be in [0, 1] (a share of the nodes a rank owns), got {}", ratio);
  PARTITA_CHECK_PARAM(presample_batches >= 1, "cache_presample_batches", "must be >= 1, got {}",
                      presample_batches);
}

int64_t cache_budget(const store::DistGraph& graph, double ratio) {
  return static_cast<int64_t>(ratio * static_cast<double>(graph.num_local_nodes()));
}

namespace {

// Counts the input nodes of every batch (remote ones only, or all) and keeps the `budget`
// most frequent, ties to the smaller id. Temporal: every seed at kLatestTime.
HotNodes hottest(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                 const std::vector<std::vector<int64_t>>& batches, const sample::Fanouts& fanouts,
                 uint64_t seed, uint64_t epoch, int64_t budget, bool remote_only,
                 int64_t remote_weight, sample::Temporal temporal) {
  PARTITA_CHECK(budget >= 0, Error, "hot nodes: budget {} < 0", budget);
  HotNodes hot;
  absl::flat_hash_map<int64_t, int64_t> count;
  sample::BlockBuilder builder;
  sample::BlockOptions options;
  options.fanouts = fanouts;
  const bool typed = graph.typed();
  std::vector<bool> featured(static_cast<size_t>(graph.num_node_types()));
  for (int t = 0; t < graph.num_node_types(); ++t)
    featured[static_cast<size_t>(t)] = graph.type_feat_dim(t) > 0;
  std::vector<int64_t> latest;  // temporal: the seeds' times
  for (size_t step = 0; step < batches.size(); ++step) {
    if (batches[step].empty()) continue;
    options.key = {seed, epoch, static_cast<uint64_t>(step)};
    if (temporal != sample::Temporal::kNone) {
      latest.assign(batches[step].size(), kLatestTime);
      options.seed_times = latest;
    }
    const sample::SampledBatch batch = builder.build(batches[step], options, sampler);
    for (int64_t gid : batch.input_nodes) {
      // A typed graph's featureless nodes have no row to cache (nor to fetch).
      if (typed && !featured[static_cast<size_t>(graph.node_type(gid))]) continue;
      const bool owned = graph.owns(gid);
      if (!owned) ++hot.remote_appearances;
      if (owned && remote_only) continue;
      ++count[gid];
      ++hot.appearances;
    }
    ++hot.batches;
  }
  // (id, score): the count, times remote_weight for a remote node.
  std::vector<std::pair<int64_t, int64_t>> ranked;
  ranked.reserve(count.size());
  for (const auto& [gid, n] : count)
    ranked.emplace_back(gid, graph.owns(gid) ? n : n * remote_weight);
  const auto hotter = [](const std::pair<int64_t, int64_t>& a,
                         const std::pair<int64_t, int64_t>& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(budget));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                    ranked.end(), hotter);
  hot.ids.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    const int64_t gid = ranked[i].first;
    const int64_t n = count.at(gid);
    hot.ids.push_back(gid);
    hot.covered += n;
    if (!graph.owns(gid)) hot.remote_covered += n;
  }
  return hot;
}

}  // namespace

HotNodes hottest_remote_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                              const std::vector<std::vector<int64_t>>& batches,
                              const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                              int64_t budget, sample::Temporal temporal) {
  return hottest(sampler, graph, batches, fanouts, seed, epoch, budget, /*remote_only=*/true,
                 /*remote_weight=*/1, temporal);
}

HotNodes hottest_input_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                             const std::vector<std::vector<int64_t>>& batches,
                             const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                             int64_t budget, int64_t remote_weight, sample::Temporal temporal) {
  PARTITA_CHECK(remote_weight >= 1, Error, "hot nodes: remote weight {} < 1", remote_weight);
  return hottest(sampler, graph, batches, fanouts, seed, epoch, budget, /*remote_only=*/false,
                 remote_weight, temporal);
}

}  // namespace partita::loader
