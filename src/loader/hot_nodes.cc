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

int64_t edge_cache_budget(const store::DistGraph& graph, double ratio) {
  return static_cast<int64_t>(ratio * static_cast<double>(graph.indices().size()));
}

namespace {

// The `budget` ids of `count` with the highest score(id, count), ties to the smaller id,
// into hot->ids; hot->covered (and remote_covered for ids not owned when `graph` is
// given) sum their counts.
template <class Score>
void keep_hottest(const absl::flat_hash_map<int64_t, int64_t>& count, int64_t budget,
                  const store::DistGraph* graph, Score score, HotNodes* hot) {
  std::vector<std::pair<int64_t, int64_t>> ranked;
  ranked.reserve(count.size());
  for (const auto& [id, n] : count) ranked.emplace_back(id, score(id, n));
  const auto hotter = [](const std::pair<int64_t, int64_t>& a,
                         const std::pair<int64_t, int64_t>& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(budget));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                    ranked.end(), hotter);
  hot->ids.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    const int64_t id = ranked[i].first;
    const int64_t n = count.at(id);
    hot->ids.push_back(id);
    hot->covered += n;
    if (graph != nullptr && !graph->owns(id)) hot->remote_covered += n;
  }
}

// Counts the input nodes of every batch (remote ones only, or all) and keeps the `budget`
// most frequent, ties to the smaller id. Temporal: every seed at kLatestTime.
HotNodes hottest(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                 const std::vector<std::vector<int64_t>>& batches, const sample::Fanouts& fanouts,
                 uint64_t seed, uint64_t epoch, int64_t budget, bool remote_only,
                 int64_t remote_weight, sample::Temporal temporal, HotNodes* edges,
                 int64_t edge_budget) {
  PARTITA_CHECK(budget >= 0, Error, "hot nodes: budget {} < 0", budget);
  PARTITA_CHECK(edge_budget >= 0, Error, "hot edges: budget {} < 0", edge_budget);
  HotNodes hot;
  if (edges != nullptr) *edges = HotNodes();
  absl::flat_hash_map<int64_t, int64_t> count, edge_count;
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
    if (edges != nullptr) {
      for (size_t l = 0; l < batch.blocks.size(); ++l) {
        const sample::Block& block = batch.blocks[l];
        PARTITA_CHECK(block.edge_ids.size() == block.indices.size(), Error,
                      "hot edges: block {} carries {} edge ids for {} edges (the sampler must "
                      "return edge ids)",
                      l, block.edge_ids.size(), block.indices.size());
        for (int64_t e : block.edge_ids) {
          if (graph.stores_edge(e)) continue;
          ++edges->remote_appearances;
          ++edges->appearances;
          ++edge_count[e];
        }
      }
      ++edges->batches;
    }
    ++hot.batches;
  }
  // Score: the count, times remote_weight for a remote node.
  keep_hottest(
      count, budget, &graph,
      [&](int64_t gid, int64_t n) { return graph.owns(gid) ? n : n * remote_weight; }, &hot);
  if (edges != nullptr) {
    keep_hottest(
        edge_count, edge_budget, nullptr, [](int64_t, int64_t n) { return n; }, edges);
    edges->remote_covered = edges->covered;
  }
  return hot;
}

}  // namespace

HotNodes hottest_remote_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                              const std::vector<std::vector<int64_t>>& batches,
                              const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                              int64_t budget, sample::Temporal temporal, HotNodes* edges,
                              int64_t edge_budget) {
  return hottest(sampler, graph, batches, fanouts, seed, epoch, budget, /*remote_only=*/true,
                 /*remote_weight=*/1, temporal, edges, edge_budget);
}

HotNodes hottest_input_nodes(sample::NeighborSampler& sampler, const store::DistGraph& graph,
                             const std::vector<std::vector<int64_t>>& batches,
                             const sample::Fanouts& fanouts, uint64_t seed, uint64_t epoch,
                             int64_t budget, int64_t remote_weight, sample::Temporal temporal) {
  PARTITA_CHECK(remote_weight >= 1, Error, "hot nodes: remote weight {} < 1", remote_weight);
  return hottest(sampler, graph, batches, fanouts, seed, epoch, budget, /*remote_only=*/false,
                 remote_weight, temporal, /*edges=*/nullptr, /*edge_budget=*/0);
}

}  // namespace partita::loader
