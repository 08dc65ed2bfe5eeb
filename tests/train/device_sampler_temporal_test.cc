// The device sampler's temporal sampling (train/device_sampler.h) on the CPU: uniform and
// recent, strict and not, equal to the host pipeline block for block (src times and edge ids
// included), untyped and typed; no sampled edge later than its seed's time, hop to hop; reruns
// identical; temporal and weighted: allowed positive entries only, reruns identical (its
// distribution: device_sampler_test.cc); the errors of a temporal sample without times.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "device_sampler_test_util.h"
#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/train/device_sampler.h"

namespace partita::train {
namespace {

using namespace device_test;  // the shared test helpers

// `g` with a time in [0, 40) on every entry, and (untyped) some entries repeated at other
// times: a (source, destination) pair may be several edges.
TestGraph timed_graph(int64_t n, int relations, int64_t max_degree, uint64_t seed) {
  const TestGraph base = random_graph(n, relations, max_degree, seed);
  TestGraph g = base;
  Rng rng(seed + 100);
  if (relations == 0) {
    g.indptr = {0};
    g.indices.clear();
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t e = base.indptr[v]; e < base.indptr[v + 1]; ++e) {
        g.indices.push_back(base.indices[e]);
        if (rng.below(4) == 0) g.indices.push_back(base.indices[e]);  // again, later on
      }
      g.indptr.push_back(static_cast<int64_t>(g.indices.size()));
    }
  }
  for (size_t e = 0; e < g.indices.size(); ++e)
    g.times.push_back(static_cast<int64_t>(rng.below(40)));
  return g;
}

// Seed times in [0, 44): some seeds allow every in-edge, some none; the last seed is the
// first one again at another time (seeds are distinct pairs).
std::vector<int64_t> seed_times_of(std::vector<int64_t>& seeds, uint64_t seed) {
  Rng rng(seed);
  std::vector<int64_t> times;
  for (size_t i = 0; i < seeds.size(); ++i) times.push_back(static_cast<int64_t>(rng.below(44)));
  seeds.push_back(seeds[0]);
  times.push_back(times[0] + 7);
  return times;
}

// `g` with a weight on every entry: one in five 0, the others in [0.01, 4.01).
TestGraph with_weights(TestGraph g, uint64_t seed) {
  Rng rng(seed);
  g.weights.clear();
  for (size_t e = 0; e < g.indices.size(); ++e)
    g.weights.push_back(rng.below(5) == 0 ? 0.0f : static_cast<float>(rng.uniform() * 4 + 0.01));
  return g;
}

DeviceSampleOptions temporal_options(sample::Temporal temporal, bool strict,
                                     const std::vector<int64_t>& seed_times,
                                     sample::Weighting weighting = sample::Weighting::kUniform) {
  DeviceSampleOptions so;
  so.weighted = weighting == sample::Weighting::kEdgeWeight;
  so.temporal = temporal;
  so.strict = strict;
  so.seed_times = ids(seed_times);
  so.edge_ids = true;
  so.degrees = true;
  return so;
}

// The device's temporal sample of (seeds, seed_times) equals the host pipeline's: every
// block, every field, the input nodes, edge ids and every block's src times. (Weighted: where
// the picks are every allowed positive entry, fanouts -1: otherwise the two draw differently.)
void expect_temporal_equal_to_host(const TestGraph& g, const std::vector<sample::CscView>& views,
                                   const std::vector<int64_t>& seeds,
                                   const std::vector<int64_t>& seed_times,
                                   const sample::Fanouts& fanouts, sample::Temporal temporal,
                                   bool strict,
                                   sample::Weighting weighting = sample::Weighting::kUniform) {
  const bool weighted = weighting == sample::Weighting::kEdgeWeight;
  const std::string what =
      std::string(temporal == sample::Temporal::kRecent ? "recent" : "uniform") +
      (strict ? " strict" : "") + (weighted ? " weighted" : "");
  sample::BlockOptions options = block_options(fanouts);
  options.seed_times = seed_times;
  sample::LocalSamplerOptions host;
  host.temporal = temporal;
  host.strict = strict;
  host.weighting = weighting;
  const HostBatch want = host_batch(g, seeds, options, host);
  const DeviceTopology topology(views, g.num_relations, torch::kCPU, weighted, /*times=*/true);
  const DeviceSample got = DeviceSampler(topology).sample(
      ids(seeds), options, temporal_options(temporal, strict, seed_times, weighting));
  EXPECT_EQ(to_vector(got.input_nodes), want.sampled.input_nodes) << what;
  ASSERT_TRUE(got.input_times.defined()) << what;
  const std::vector<int64_t> input_times = to_vector(got.input_times);
  EXPECT_EQ(input_times.size(), want.sampled.input_nodes.size()) << what;
  EXPECT_EQ(got.num_edges, want.sampled.num_sampled_edges()) << what;
  EXPECT_EQ(to_vector(got.edge_ids), host_edge_ids(want)) << what << ": edge ids";
  ASSERT_EQ(got.blocks.size(), want.tensors.size()) << what;
  for (size_t b = 0; b < got.blocks.size(); ++b) {
    expect_same_block(got.blocks[b], want.tensors[b], what + " block " + std::to_string(b));
    const std::vector<int64_t>& src_times = want.sampled.blocks[b].src_times;
    EXPECT_EQ(
        std::vector<int64_t>(input_times.begin(),
                             input_times.begin() + std::min(input_times.size(), src_times.size())),
        src_times)
        << what << " block " << b << " src times";
  }
  if (fanouts.num_hops() == 0) {
    EXPECT_EQ(input_times, seed_times) << what;
  }
}

TEST(DeviceSamplerTemporal, UniformEqualsTheHostPipelineOnAnUntypedGraph) {
  const TestGraph g = timed_graph(600, 0, 150, 50);
  std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 40, 51);
  const std::vector<int64_t> times = seed_times_of(seeds, 52);
  for (const bool strict : {false, true}) {
    const auto uniform = sample::Temporal::kUniform;
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {5, 3}, uniform, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {15, 10, 5}, uniform, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {1}, uniform, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {-1, 2}, uniform, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {0, 4}, uniform, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {70}, uniform, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {}, uniform, strict);
    // Several parts, offsets into the whole arrays.
    expect_temporal_equal_to_host(g, {g.rows(0, 170), g.rows(170, 600)}, seeds, times, {6, 4},
                                  uniform, strict);
  }
}

TEST(DeviceSamplerTemporal, RecentEqualsTheHostPipelineOnAnUntypedGraph) {
  const TestGraph g = timed_graph(600, 0, 150, 53);
  std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 40, 54);
  const std::vector<int64_t> times = seed_times_of(seeds, 55);
  for (const bool strict : {false, true}) {
    const auto recent = sample::Temporal::kRecent;
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {5, 3}, recent, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {15, 10, 5}, recent, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {-1, 2}, recent, strict);
    expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {0, 4}, recent, strict);
    expect_temporal_equal_to_host(g, {g.rows(0, 300), g.rows(300, 600)}, seeds, times, {6, 4},
                                  recent, strict);
  }
}

TEST(DeviceSamplerTemporal, EqualsTheHostPipelineOnATypedGraph) {
  const TestGraph g = timed_graph(700, 4, 120, 61);
  std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 50, 62);
  const std::vector<int64_t> times = seed_times_of(seeds, 63);
  for (const auto temporal : {sample::Temporal::kUniform, sample::Temporal::kRecent}) {
    for (const bool strict : {false, true}) {
      expect_temporal_equal_to_host(g, {g.view()}, seeds, times, {4, 3}, temporal, strict);
      // Per relation: relation 1 takes none, relation 3 all; the second hop one fanout.
      expect_temporal_equal_to_host(g, {g.view()}, seeds, times,
                                    sample::Fanouts({4, 2}, {{2, 0, 5, -1}, {}}), temporal, strict);
      expect_temporal_equal_to_host(g, {g.rows(0, 350), g.rows(350, 700)}, seeds, times, {6, 4},
                                    temporal, strict);
    }
  }
}

// No sampled edge is later than the time of the seed it descends from (strict: not
// earlier), judged edge by edge from the edge ids against the graph's own times; the times
// carried hop to hop are the seeds'; reruns are identical.
TEST(DeviceSamplerTemporal, SamplesNoLaterEdgeAndRerunsIdentically) {
  for (const int relations : {0, 3}) {
    const TestGraph g = timed_graph(500, relations, 80, 56 + relations);
    std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 50, 57);
    const std::vector<int64_t> seed_times = seed_times_of(seeds, 58);
    const DeviceTopology topology({g.view()}, g.num_relations, torch::kCPU, false, true);
    const DeviceSampler sampler(topology);
    for (const auto temporal : {sample::Temporal::kUniform, sample::Temporal::kRecent}) {
      for (const bool strict : {false, true}) {
        const DeviceSampleOptions so = temporal_options(temporal, strict, seed_times);
        const DeviceSample s = sampler.sample(ids(seeds), block_options({6, -1, 3}), so);
        const std::vector<int64_t> input = to_vector(s.input_nodes), eid = to_vector(s.edge_ids);
        const std::vector<int64_t> times = to_vector(s.input_times);
        ASSERT_EQ(times.size(), input.size());
        // The src entries are distinct (node, time) pairs, and each time is a seed's.
        std::set<std::pair<int64_t, int64_t>> pairs;
        for (size_t i = 0; i < input.size(); ++i) pairs.emplace(input[i], times[i]);
        EXPECT_EQ(pairs.size(), input.size());
        const std::set<int64_t> seed_set(seed_times.begin(), seed_times.end());
        int64_t offset = 0, checked = 0;
        for (size_t hop = 0; hop < s.blocks.size(); ++hop) {
          const nn::BlockTensors& b = s.blocks[hop];
          const std::vector<int64_t> ptr = to_vector(b.indptr), idx = to_vector(b.indices);
          for (int64_t i = 0; i < b.num_dst; ++i) {
            const int64_t v = input[static_cast<size_t>(i)], t = times[static_cast<size_t>(i)];
            EXPECT_TRUE(seed_set.count(t)) << "time " << t << " is no seed's";
            for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
              const int64_t id = eid[static_cast<size_t>(offset + e)];
              ASSERT_GE(id, g.indptr[v]);
              ASSERT_LT(id, g.indptr[v + 1]) << "edge " << id << " is not an in-edge of " << v;
              const int64_t when = g.times[static_cast<size_t>(id)];
              EXPECT_TRUE(strict ? when < t : when <= t)
                  << "edge " << id << " at time " << when << " sampled for a seed at " << t;
              EXPECT_EQ(input[static_cast<size_t>(idx[e])], g.indices[id]);
              EXPECT_EQ(times[static_cast<size_t>(idx[e])], t) << "src entry's time";
              ++checked;
            }
          }
          offset += b.num_edges();
        }
        EXPECT_GT(checked, 100);
        // Two reads per hop (its entry count, then its sizes), uniform one more at fanout -1.
        EXPECT_EQ(s.host_reads, temporal == sample::Temporal::kUniform ? 7 : 6);
        const DeviceSample again = sampler.sample(ids(seeds), block_options({6, -1, 3}), so);
        EXPECT_TRUE(torch::equal(again.edge_ids, s.edge_ids));
        EXPECT_TRUE(torch::equal(again.input_nodes, s.input_nodes));
        EXPECT_TRUE(torch::equal(again.input_times, s.input_times));
        for (size_t i = 0; i < s.blocks.size(); ++i)
          expect_same_block(again.blocks[i], s.blocks[i], "temporal rerun " + std::to_string(i));
      }
    }
  }
}

// Temporal and weighted (the uniform strategy keyed by weight, device_sampler.h), untyped and
// typed with per-relation fanouts (0 and -1 among them), strict and not: per (node,
// relation) run, min(k, allowed positive entries) distinct ones (every one for k = -1 or at
// most k of them), in stored order, none later than the seed's time (strict: not earlier)
// nor of weight 0, each src entry at its seed's time; at fanouts -1 every block equals the
// host pipeline's; reruns identical, another key another sample; two host reads per hop.
TEST(DeviceSamplerTemporal, WeightedTakesAllowedPositiveEntriesAndRerunsIdentically) {
  for (const int relations : {0, 3}) {
    const TestGraph g = with_weights(timed_graph(500, relations, 80, 64 + relations), 66);
    std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 50, 67);
    const std::vector<int64_t> seed_times = seed_times_of(seeds, 68);
    const DeviceTopology topology({g.view()}, g.num_relations, torch::kCPU, true, true);
    const DeviceSampler sampler(topology);
    const sample::Fanouts fanouts = relations == 0
                                        ? sample::Fanouts({6, -1, 3})
                                        : sample::Fanouts({6, 4}, {{5, 0, -1}, {2, 2, 2}});
    const auto uniform = sample::Temporal::kUniform;
    const auto by_weight = sample::Weighting::kEdgeWeight;
    for (const bool strict : {false, true}) {
      const std::string what =
          std::string(relations > 0 ? "typed" : "untyped") + (strict ? " strict" : "");
      const DeviceSampleOptions so = temporal_options(uniform, strict, seed_times, by_weight);
      const DeviceSample s = sampler.sample(ids(seeds), block_options(fanouts), so);
      const std::vector<int64_t> input = to_vector(s.input_nodes), eid = to_vector(s.edge_ids);
      const std::vector<int64_t> times = to_vector(s.input_times);
      ASSERT_EQ(times.size(), input.size()) << what;
      int64_t offset = 0, later = 0;  // later: entries the time excluded from a sampled run
      for (size_t hop = 0; hop < s.blocks.size(); ++hop) {
        const nn::BlockTensors& b = s.blocks[hop];
        const std::vector<int64_t> ptr = to_vector(b.indptr), idx = to_vector(b.indices);
        for (int64_t i = 0; i < b.num_dst; ++i) {
          const int64_t v = input[static_cast<size_t>(i)], t = times[static_cast<size_t>(i)];
          std::map<int64_t, std::vector<int64_t>> allowed, picked;  // relation -> entries
          for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
            const int64_t when = g.times[static_cast<size_t>(e)];
            if (!(strict ? when < t : when <= t)) {
              ++later;
            } else if (g.weights[static_cast<size_t>(e)] > 0) {
              allowed[relations > 0 ? g.relations[e] : 0].push_back(e);
            }
          }
          for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
            const int64_t id = eid[static_cast<size_t>(offset + e)];
            ASSERT_GE(id, g.indptr[v]) << what;
            ASSERT_LT(id, g.indptr[v + 1]) << what << ": edge " << id << " is no in-edge of " << v;
            const int64_t when = g.times[static_cast<size_t>(id)];
            EXPECT_TRUE(strict ? when < t : when <= t)
                << what << ": edge " << id << " at time " << when << " sampled at " << t;
            EXPECT_GT(g.weights[static_cast<size_t>(id)], 0) << what << ": edge " << id;
            EXPECT_EQ(input[static_cast<size_t>(idx[e])], g.indices[id]) << what;
            EXPECT_EQ(times[static_cast<size_t>(idx[e])], t) << what << ": src entry's time";
            picked[relations > 0 ? g.relations[id] : 0].push_back(id);
          }
          for (int64_t r = 0; r < std::max(relations, 1); ++r) {
            const std::vector<int64_t>& per = fanouts.relations_of(hop);
            const int64_t k = per.empty() ? fanouts.hops[hop] : per[static_cast<size_t>(r)];
            const std::vector<int64_t>& all = allowed[r];
            const std::vector<int64_t>& got = picked[r];
            if (k < 0 || static_cast<int64_t>(all.size()) <= k) {
              EXPECT_EQ(got, all) << what << ": node " << v << " relation " << r;
            } else {
              EXPECT_EQ(static_cast<int64_t>(got.size()), k) << what << ": node " << v;
              EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << what;
              EXPECT_TRUE(std::includes(all.begin(), all.end(), got.begin(), got.end())) << what;
            }
          }
        }
        offset += b.num_edges();
      }
      EXPECT_EQ(offset, s.num_edges) << what;
      EXPECT_GT(offset, 100) << what;
      EXPECT_GT(later, 100) << what << ": the times exclude entries";
      EXPECT_EQ(s.host_reads, static_cast<int>(2 * fanouts.num_hops())) << what;
      const DeviceSample again = sampler.sample(ids(seeds), block_options(fanouts), so);
      EXPECT_TRUE(torch::equal(again.edge_ids, s.edge_ids)) << what;
      EXPECT_TRUE(torch::equal(again.input_nodes, s.input_nodes)) << what;
      EXPECT_TRUE(torch::equal(again.input_times, s.input_times)) << what;
      for (size_t i = 0; i < s.blocks.size(); ++i)
        expect_same_block(again.blocks[i], s.blocks[i], what + " rerun " + std::to_string(i));
      const DeviceSample other = sampler.sample(ids(seeds), block_options(fanouts, 9), so);
      EXPECT_FALSE(other.edge_ids.sizes() == s.edge_ids.sizes() &&
                   torch::equal(other.edge_ids, s.edge_ids))
          << what;
      expect_temporal_equal_to_host(g, {g.view()}, seeds, seed_times, {-1, -1}, uniform, strict,
                                    by_weight);
    }
  }
}

// A temporal sample of a topology without times, or without seed times, is an Error; so is
// holding the times of views without any, and a recent sample by weight (no draw to weight).
TEST(DeviceSamplerTemporal, NeedsTheTimes) {
  const TestGraph g = random_graph(100, 0, 20, 59);
  const DeviceTopology untimed({g.view()}, 0, torch::kCPU);
  const auto uniform = sample::Temporal::kUniform;
  EXPECT_THROW(DeviceSampler(untimed).sample(ids({1, 2}), block_options({3}),
                                             temporal_options(uniform, false, {4, 5})),
               Error);
  EXPECT_THROW(DeviceTopology({g.view()}, 0, torch::kCPU, false, /*times=*/true), Error);
  const TestGraph timed = timed_graph(100, 0, 20, 60);
  const DeviceTopology topology({timed.view()}, 0, torch::kCPU, false, true);
  EXPECT_THROW(DeviceSampler(topology).sample(ids({1, 2}), block_options({3}),
                                              temporal_options(uniform, false, {4})),
               Error);
  const TestGraph both = with_weights(timed, 61);
  const DeviceTopology weights_and_times({both.view()}, 0, torch::kCPU, true, true);
  const DeviceSampler sampler(weights_and_times);
  const auto by_weight = sample::Weighting::kEdgeWeight;
  EXPECT_NO_THROW(sampler.sample(ids({1, 2}), block_options({3}),
                                 temporal_options(uniform, false, {4, 5}, by_weight)));
  EXPECT_THROW(
      sampler.sample(ids({1, 2}), block_options({3}),
                     temporal_options(sample::Temporal::kRecent, false, {4, 5}, by_weight)),
      Error);
}

}  // namespace
}  // namespace partita::train
