// The device sampler (train/device_sampler.h) on the CPU: its random streams equal
// core/random.h's bit for bit; its samples equal the host kernel's (sample/neighbor_kernel.h)
// and its blocks every field of what the host pipeline (sample::BlockBuilder, then
// nn::to_block_tensors) builds, untyped and typed, over one view or several; a brute-force
// check of the contract itself (distinct in-neighbours, all of them at degree <= k, only
// in-edges, per-relation fanouts); chi-square uniformity; reruns identical; and the host
// reads it makes, counted by torch's profiler callbacks.
#include "partita/train/device_sampler.h"

#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "device_random.h"
#include "device_sampler_test_util.h"
#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/block_transfer.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/sample_key.h"
#include "sample_test_util.h"

namespace partita::train {
namespace {

using namespace device_test;  // the shared test helpers

// The device sample of `seeds` equals the host pipeline's: every block, every field, and the
// input nodes.
void expect_equal_to_host(const TestGraph& g, const std::vector<sample::CscView>& views,
                          const std::vector<int64_t>& seeds, const sample::Fanouts& fanouts) {
  const sample::BlockOptions options = block_options(fanouts);
  const HostBatch want = host_batch(g, seeds, options);
  const DeviceTopology topology(views, g.num_relations, torch::kCPU);
  DeviceSampleOptions so;
  so.degrees = true;
  so.edge_ids = true;
  const DeviceSample got = DeviceSampler(topology).sample(ids(seeds), options, so);
  EXPECT_EQ(to_vector(got.input_nodes), want.sampled.input_nodes);
  EXPECT_EQ(got.num_edges, want.sampled.num_sampled_edges());
  ASSERT_TRUE(got.edge_ids.defined());
  EXPECT_EQ(got.edge_ids.scalar_type(), torch::kInt64);
  EXPECT_EQ(to_vector(got.edge_ids), host_edge_ids(want)) << "edge ids";
  ASSERT_EQ(got.blocks.size(), want.tensors.size());
  for (size_t b = 0; b < got.blocks.size(); ++b)
    expect_same_block(got.blocks[b], want.tensors[b], "block " + std::to_string(b));
}

TEST(DeviceRandom, MatchesTheScalarStreamsBitForBit) {
  Rng rng(99);
  std::vector<int64_t> x, a, n;
  for (int i = 0; i < 4096; ++i) {
    x.push_back(static_cast<int64_t>(rng.next()));
    a.push_back(static_cast<int64_t>(rng.next() >> (i % 64)));
    n.push_back(1 + static_cast<int64_t>(rng.below((uint64_t{1} << 31) - 1)));
  }
  n[0] = 1, n[1] = (int64_t{1} << 31) - 1, x[2] = -1, x[3] = 0;  // the edges of the ranges
  const std::vector<int64_t> mix = to_vector(device_random::mix64(ids(x)));
  const std::vector<int64_t> keyed = to_vector(device_random::stream_key(ids(x), ids(a)));
  const uint64_t hop = sample::hop_key({5, 6, 7}, 1);
  const std::vector<int64_t> node = to_vector(device_random::stream_key(hop, ids(a)));
  const std::vector<int64_t> draws = to_vector(device_random::draw(ids(x), ids(n).remainder(40)));
  const std::vector<int64_t> below = to_vector(device_random::below(ids(x), ids(n)));
  for (size_t i = 0; i < x.size(); ++i) {
    const auto u = static_cast<uint64_t>(x[i]);
    ASSERT_EQ(static_cast<uint64_t>(mix[i]), mix64(u)) << i;
    ASSERT_EQ(static_cast<uint64_t>(keyed[i]), stream_key(u, static_cast<uint64_t>(a[i]))) << i;
    ASSERT_EQ(static_cast<uint64_t>(node[i]), sample::node_key(hop, a[i])) << i;
    Rng stream(u);
    uint64_t value = 0;
    for (int64_t c = 0; c <= n[i] % 40; ++c) value = stream.next();
    ASSERT_EQ(static_cast<uint64_t>(draws[i]), value) << i;
    const uint64_t want = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(u) * static_cast<uint64_t>(n[i])) >> 64);
    ASSERT_EQ(static_cast<uint64_t>(below[i]), want) << i;
    ASSERT_LT(below[i], n[i]);
  }
}

TEST(DeviceSampler, EqualsTheHostPipelineOnAnUntypedGraph) {
  const TestGraph g = random_graph(600, 0, 150, 1);
  const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 40, 2);
  expect_equal_to_host(g, {g.view()}, seeds, {5, 3});
  expect_equal_to_host(g, {g.view()}, seeds, {15, 10, 5});  // Floyd's chains at width 15
  expect_equal_to_host(g, {g.view()}, seeds, {1});          // width 1: no chains
  expect_equal_to_host(g, {g.view()}, seeds, {-1, 2});      // every neighbour, then 2
  expect_equal_to_host(g, {g.view()}, seeds, {0, 4});       // nothing: block 1 has no edge
  expect_equal_to_host(g, {g.view()}, seeds, {70});         // wider than most rows
  expect_equal_to_host(g, {g.view()}, seeds, {});           // no hop: the seeds
}

TEST(DeviceSampler, ViewsOfSeveralPartsEqualOneViewOfTheGraph) {
  const TestGraph g = random_graph(500, 0, 80, 3);
  const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 30, 4);
  // Three parts, the last one empty: offsets into the whole arrays (indptr[0] != 0).
  expect_equal_to_host(g, {g.rows(0, 170), g.rows(170, 500), g.rows(500, 500)}, seeds, {6, 4});
  const TestGraph typed = random_graph(500, 3, 80, 5);
  expect_equal_to_host(typed, {typed.rows(0, 250), typed.rows(250, 500)}, seeds, {6, 4});
}

// Edge ids are each view's first_edge + the entry's position in it, whatever the views'
// layout: parts stored at other edge slots (first_edge past the parts before, as a
// partition's parts are not, to give each view its own shift) get theirs; without asking,
// no ids.
TEST(DeviceSampler, EdgeIdsAreEachViewsFirstEdgePlusThePosition) {
  for (const int relations : {0, 2}) {
    const TestGraph g = random_graph(400, relations, 60, 30 + relations);
    const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 40, 31);
    const sample::BlockOptions options = block_options({6, 4});
    const HostBatch want = host_batch(g, seeds, options);
    const int64_t cut = 150, moved = 100000;  // rows [cut, N) stored from slot `moved` on
    sample::CscView low = g.rows(0, cut), high = g.rows(cut, g.num_nodes());
    high.first_edge = moved;  // entry e of `high` (offsets into the whole arrays) is moved + e
    const DeviceTopology topology({low, high}, g.num_relations, torch::kCPU);
    DeviceSampleOptions so;
    so.edge_ids = true;
    const DeviceSample got = DeviceSampler(topology).sample(ids(seeds), options, so);
    std::vector<int64_t> expected = host_edge_ids(want);
    for (int64_t& e : expected)
      if (e >= g.indptr[cut]) e += moved;
    EXPECT_EQ(to_vector(got.edge_ids), expected);
    ASSERT_EQ(got.edge_ids.numel(), got.num_edges);
    EXPECT_FALSE(DeviceSampler(topology).sample(ids(seeds), options).edge_ids.defined());
    // No hop: none, but defined.
    EXPECT_EQ(DeviceSampler(topology).sample(ids(seeds), block_options({}), so).edge_ids.numel(),
              0);
  }
}

TEST(DeviceSampler, EqualsTheHostPipelineOnATypedGraph) {
  const TestGraph g = random_graph(700, 4, 120, 6);
  const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 50, 7);
  expect_equal_to_host(g, {g.view()}, seeds, {4, 3});
  // Per relation: relation 1 takes none, relation 3 all; the second hop one fanout for all.
  expect_equal_to_host(g, {g.view()}, seeds, sample::Fanouts({4, 2}, {{2, 0, 5, -1}, {}}));
  expect_equal_to_host(g, {g.view()}, seeds, sample::Fanouts({3}, {{1, 9, 3, 2}}));
  const TestGraph one = random_graph(300, 1, 40, 8);  // a single relation
  expect_equal_to_host(one, {one.view()}, distinct_seeds(300, 20, 9), {5, 5});
}

// The contract itself, without the host kernel: per frontier node (and relation), min(d, k)
// distinct in-neighbours (all of them when d <= k), each an in-edge of that node.
TEST(DeviceSampler, TakesDistinctInNeighboursAllOfThemUpToTheFanout) {
  for (const int relations : {0, 3}) {
    const TestGraph g = random_graph(400, relations, 60, 10 + relations);
    const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 60, 11);
    const sample::Fanouts fanouts =
        relations == 0 ? sample::Fanouts({7, 4}) : sample::Fanouts({7, 4}, {{7, 0, 2}, {4, 4, -1}});
    const DeviceTopology topology({g.view()}, g.num_relations, torch::kCPU);
    const DeviceSample s = DeviceSampler(topology).sample(ids(seeds), block_options(fanouts));
    const std::vector<int64_t> input = to_vector(s.input_nodes);
    ASSERT_EQ(std::set<int64_t>(input.begin(), input.end()).size(), input.size());
    for (size_t hop = 0; hop < s.blocks.size(); ++hop) {
      const nn::BlockTensors& b = s.blocks[hop];
      const std::vector<int64_t> ptr = to_vector(b.indptr), idx = to_vector(b.indices);
      const std::vector<int64_t> et = b.typed() ? to_vector(b.etypes) : std::vector<int64_t>();
      ASSERT_EQ(b.num_src, hop + 1 < s.blocks.size() ? s.blocks[hop + 1].num_dst
                                                     : static_cast<int64_t>(input.size()));
      for (int64_t i = 0; i < b.num_dst; ++i) {
        const int64_t v = input[static_cast<size_t>(i)];
        // The row's in-neighbours by relation, and the picks.
        std::map<int64_t, std::multiset<int64_t>> row, picked;
        for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
          row[relations > 0 ? g.relations[e] : 0].insert(g.indices[e]);
        for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e)
          picked[et.empty() ? 0 : et[e]].insert(input[static_cast<size_t>(idx[e])]);
        for (const auto& [r, sources] : row) {
          const std::vector<int64_t>& per = fanouts.relations_of(hop);
          const int64_t k = per.empty() ? fanouts.hops[hop] : per[static_cast<size_t>(r)];
          const std::multiset<int64_t>& got = picked[r];
          const int64_t d = static_cast<int64_t>(sources.size());
          ASSERT_EQ(static_cast<int64_t>(got.size()), k < 0 || d <= k ? d : k)
              << "node " << v << " relation " << r << " hop " << hop;
          if (k < 0 || d <= k) {
            EXPECT_EQ(got, sources) << "node " << v << ": every in-neighbour";
          } else {
            EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size()) << "distinct";
            for (int64_t u : got)
              EXPECT_EQ(sources.count(u), 1u) << u << " -> " << v << ": no such edge";
          }
        }
        for (const auto& [r, got] : picked)
          EXPECT_TRUE(row.count(r) > 0 || got.empty()) << "node " << v << ": relation " << r;
      }
    }
  }
}

// Uniform without replacement: over 600 rows of 20 entries (each its own stream) and 8 batch
// keys, every position is taken k/d of the time; Pearson's statistic (19 degrees of freedom)
// stays below the 0.999 quantile, 43.82. Deterministic: the streams are counter-based.
TEST(DeviceSampler, PicksEveryPositionUniformly) {
  constexpr int64_t kRows = 600, kDegree = 20, kFanout = 5, kKeys = 8;
  TestGraph g;
  for (int64_t v = 0; v < kRows; ++v) {
    for (int64_t i = 0; i < kDegree; ++i) g.indices.push_back(kRows + v * kDegree + i);
    g.indptr.push_back(static_cast<int64_t>(g.indices.size()));
  }
  for (int64_t v = kRows; v < kRows + kRows * kDegree; ++v) g.indptr.push_back(g.indptr.back());
  const DeviceTopology topology({g.view()}, 0, torch::kCPU);
  std::vector<int64_t> seeds(kRows);
  std::iota(seeds.begin(), seeds.end(), int64_t{0});
  std::vector<double> counts(kDegree, 0);
  std::vector<double> pairs(kDegree * kDegree, 0);  // positions taken together
  for (uint64_t key = 0; key < kKeys; ++key) {
    const DeviceSample s =
        DeviceSampler(topology).sample(ids(seeds), block_options({kFanout}, key));
    const std::vector<int64_t> input = to_vector(s.input_nodes);
    const std::vector<int64_t> ptr = to_vector(s.blocks[0].indptr),
                               idx = to_vector(s.blocks[0].indices);
    for (int64_t v = 0; v < kRows; ++v) {
      ASSERT_EQ(ptr[v + 1] - ptr[v], kFanout);
      std::vector<int64_t> pos;
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e)
        pos.push_back(input[idx[e]] - kRows - v * kDegree);
      for (int64_t p : pos) counts[static_cast<size_t>(p)] += 1;
      for (int64_t a : pos)
        for (int64_t b : pos)
          if (a < b) pairs[static_cast<size_t>(a * kDegree + b)] += 1;
    }
  }
  const double expected = static_cast<double>(kRows * kKeys * kFanout) / kDegree;
  double chi2 = 0;
  for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 43.82) << "positions are not drawn uniformly";
  // Every pair of positions is taken together k(k-1) / (d(d-1)) of the time; over the 190
  // pairs the same statistic stays below the chi-square(189) 0.999 quantile, 255.2.
  const double pair_expected =
      static_cast<double>(kRows * kKeys) * kFanout * (kFanout - 1) / (kDegree * (kDegree - 1));
  double pair_chi2 = 0;
  for (int64_t a = 0; a < kDegree; ++a)
    for (int64_t b = a + 1; b < kDegree; ++b) {
      const double c = pairs[static_cast<size_t>(a * kDegree + b)];
      pair_chi2 += (c - pair_expected) * (c - pair_expected) / pair_expected;
    }
  EXPECT_LT(pair_chi2, 255.2) << "pairs of positions are not drawn uniformly";
  std::printf("chi2 positions %.1f (19 df), pairs %.1f (189 df)\n", chi2, pair_chi2);
}

TEST(DeviceSampler, RerunsAreIdenticalAndKeysChangeTheSample) {
  const TestGraph g = random_graph(500, 0, 90, 12);
  const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 64, 13);
  const DeviceTopology topology({g.view()}, 0, torch::kCPU);
  const DeviceSampler sampler(topology);
  const DeviceSample a = sampler.sample(ids(seeds), block_options({10, 5}, 1));
  const DeviceSample b = sampler.sample(ids(seeds), block_options({10, 5}, 1));
  const DeviceSample c = sampler.sample(ids(seeds), block_options({10, 5}, 2));
  EXPECT_TRUE(torch::equal(a.input_nodes, b.input_nodes));
  for (size_t i = 0; i < a.blocks.size(); ++i)
    expect_same_block(b.blocks[i], a.blocks[i], "rerun block " + std::to_string(i));
  EXPECT_FALSE(a.input_nodes.sizes() == c.input_nodes.sizes() &&
               torch::equal(a.input_nodes, c.input_nodes));
}

// Counts the record_function scopes this thread enters, by name.
class ScopeCounter {
 public:
  ScopeCounter() {
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&ScopeCounter::enter)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  }
  ~ScopeCounter() { at::removeCallback(handle_); }
  static std::map<std::string, int>& counts() {
    thread_local std::map<std::string, int> c;
    return c;
  }

 private:
  static std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& fn) {
    ++counts()[fn.name()];
    return nullptr;
  }
  at::CallbackHandle handle_;
};

// One host read per hop (two for a hop of fanout -1), and no op that reads device memory on
// the host besides them: what a GPU would wait for.
TEST(DeviceSampler, ReadsTheHostOncePerHop) {
  for (const int relations : {0, 3}) {
    const TestGraph g = random_graph(300, relations, 50, 14);
    const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 32, 15);
    const DeviceTopology topology({g.view()}, g.num_relations, torch::kCPU);
    for (const sample::Fanouts& fanouts :
         {sample::Fanouts({15, 10, 5}), sample::Fanouts({4, -1})}) {
      const int expected = static_cast<int>(
          fanouts.num_hops() + std::count(fanouts.hops.begin(), fanouts.hops.end(), -1));
      ScopeCounter counter;
      ScopeCounter::counts().clear();
      DeviceSampleOptions so;
      so.degrees = true;
      so.edge_ids = true;  // derived on the device: no read of its own
      const DeviceSample s = DeviceSampler(topology).sample(ids(seeds), block_options(fanouts), so);
      const std::map<std::string, int> seen = ScopeCounter::counts();
      EXPECT_EQ(s.host_reads, expected);
      EXPECT_EQ(seen.count(kHostReadScope) ? seen.at(kHostReadScope) : 0, expected);
      for (const char* sync :
           {"aten::_local_scalar_dense", "aten::item", "aten::nonzero", "aten::unique",
            "aten::_unique", "aten::_unique2", "aten::unique_consecutive", "aten::masked_select",
            "aten::bincount", "aten::is_nonzero"})
        EXPECT_EQ(seen.count(sync), 0u) << sync << " reads device memory on the host";
    }
  }
}

// On a GPU (scripts/device-check.sh, phase gpu-sampling): CUDA's samples and blocks equal the
// CPU's, field for field (the streams' int64 arithmetic wraps there as on the CPU).
TEST(DeviceSamplerCuda, EqualsTheCpuSampler) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (const int relations : {0, 4}) {
    const TestGraph g = random_graph(20000, relations, 300, 20 + relations);
    const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 1024, 21);
    const sample::Fanouts fanouts = relations == 0 ? sample::Fanouts({15, 10, 5})
                                                   : sample::Fanouts({15, 10}, {{5, 0, -1, 3}, {}});
    DeviceSampleOptions so;
    so.degrees = true;
    so.edge_ids = true;
    const DeviceTopology cpu({g.view()}, g.num_relations, torch::kCPU);
    const DeviceTopology cuda({g.rows(0, 7000), g.rows(7000, 20000)}, g.num_relations,
                              torch::Device(torch::kCUDA, 0));
    const DeviceSample want = DeviceSampler(cpu).sample(ids(seeds), block_options(fanouts), so);
    const DeviceSample got = DeviceSampler(cuda).sample(
        ids(seeds).to(torch::Device(torch::kCUDA, 0)), block_options(fanouts), so);
    EXPECT_EQ(to_vector(got.input_nodes), to_vector(want.input_nodes));
    EXPECT_EQ(to_vector(got.edge_ids), to_vector(want.edge_ids));
    ASSERT_EQ(got.blocks.size(), want.blocks.size());
    for (size_t b = 0; b < got.blocks.size(); ++b) {
      nn::BlockTensors moved = got.blocks[b];
      nn::for_each_tensor(
          [](const char*, torch::Tensor& x) {
            if (x.defined()) x = x.to(torch::kCPU);
          },
          moved);
      expect_same_block(moved, want.blocks[b], "cuda block " + std::to_string(b));
    }
  }
}

// ---- Weighted (DeviceSampleOptions::weighted): Efraimidis-Spirakis on every run ----------

// `rows` rows of the same weights `w` (row v's entry i the source rows + v * d + i, its own
// stream), then the leaves (no in-edges).
struct WeightedRows {
  TestGraph g;
  std::vector<float> weights;
};

WeightedRows weighted_rows(int64_t rows, const std::vector<float>& w) {
  WeightedRows r;
  const auto d = static_cast<int64_t>(w.size());
  for (int64_t v = 0; v < rows; ++v) {
    for (int64_t i = 0; i < d; ++i) r.g.indices.push_back(rows + v * d + i);
    r.weights.insert(r.weights.end(), w.begin(), w.end());
    r.g.indptr.push_back(static_cast<int64_t>(r.g.indices.size()));
  }
  for (int64_t v = 0; v < rows * d; ++v) r.g.indptr.push_back(r.g.indptr.back());
  return r;
}

DeviceSampleOptions weighted_options() {
  DeviceSampleOptions so;
  so.weighted = true;
  so.edge_ids = true;
  return so;
}

// One chi-square experiment: rows of the same weights, sampled with fanout k (temporal:
// every entry at its time, every seed at seed_time).
struct ChiSquareCase {
  std::vector<float> weights;  // each row's weights, as sampled
  int64_t k = 0;
  std::vector<int64_t> times;  // temporal (not empty): each row entry's time
  int64_t seed_time = 0;
  bool strict = false;
  // The weights the frequencies are judged against (empty: `weights`), so that a test can
  // show the statistic catches picks that ignore them.
  std::vector<float> expected;
};

// A case without times, judged against its own weights.
ChiSquareCase untimed_case(std::vector<float> weights, int64_t k) {
  ChiSquareCase c;
  c.weights = std::move(weights);
  c.k = k;
  return c;
}

// 10^5 draws (2000 rows, each its own stream, times 50 batch keys) of k of a row's entries:
// each position's count against successive sampling's exact inclusion probability
// (tests/sample's helper) of the expected weights, Pearson's statistic (returned; the
// callers hold it below the chi-square 0.99 quantile, p > 0.01) over the entries it gives a
// positive probability; zero, negative and NaN weights, and (temporal) entries later than
// the seed's time (strict: not earlier), are never picked: their probability is 0.
double device_weighted_chi_square(const ChiSquareCase& c) {
  constexpr int64_t kRows = 2000, kKeys = 50;
  const auto d = static_cast<int64_t>(c.weights.size());
  const bool temporal = !c.times.empty();
  WeightedRows r = weighted_rows(kRows, c.weights);
  sample::CscView view = r.g.view();
  view.weights = r.weights;
  std::vector<int64_t> times;
  for (int64_t v = 0; temporal && v < kRows; ++v)
    times.insert(times.end(), c.times.begin(), c.times.end());
  view.times = times;
  const DeviceTopology topology({view}, 0, torch::kCPU, /*weights=*/true, temporal);
  std::vector<int64_t> seeds(kRows);
  std::iota(seeds.begin(), seeds.end(), int64_t{0});
  DeviceSampleOptions so = weighted_options();
  if (temporal) {
    so.temporal = sample::Temporal::kUniform;
    so.strict = c.strict;
    so.seed_times = torch::full({kRows}, c.seed_time, torch::kInt64);
  }
  // The expected weights, 0 where the time excludes the entry.
  std::vector<float> expected = c.expected.empty() ? c.weights : c.expected;
  for (int64_t i = 0; temporal && i < d; ++i) {
    const int64_t t = c.times[static_cast<size_t>(i)];
    if (c.strict ? !(t < c.seed_time) : !(t <= c.seed_time)) expected[i] = 0;
  }
  const std::vector<double> pi = sample::testing::inclusion_probabilities(expected, c.k);
  int64_t picks = 0;  // per row: k, or every entry of positive probability when fewer
  for (double p : pi) picks += p > 0 ? 1 : 0;
  picks = std::min(picks, c.k);
  std::vector<double> counts(static_cast<size_t>(d), 0);
  for (uint64_t key = 0; key < kKeys; ++key) {
    const DeviceSample s =
        DeviceSampler(topology).sample(ids(seeds), block_options({c.k}, key), so);
    const std::vector<int64_t> ptr = to_vector(s.blocks[0].indptr), eid = to_vector(s.edge_ids);
    for (int64_t v = 0; v < kRows; ++v) {
      EXPECT_EQ(ptr[v + 1] - ptr[v], picks) << "row " << v;
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
        const int64_t pos = eid[e] - v * d;
        EXPECT_TRUE(e == ptr[v] || eid[e - 1] < eid[e]) << "stored order, distinct";
        counts[static_cast<size_t>(pos)] += 1;
      }
    }
  }
  double chi2 = 0;
  for (int64_t i = 0; i < d; ++i) {
    if (pi[i] == 0) {
      EXPECT_EQ(counts[i], 0) << "entry " << i << " of weight " << c.weights[i]
                              << (temporal ? " at time " + std::to_string(c.times[i]) : "")
                              << " was picked";
      continue;
    }
    const double expected_count = pi[i] * kRows * kKeys;
    chi2 += (counts[i] - expected_count) * (counts[i] - expected_count) / expected_count;
  }
  std::printf("device weighted chi-square %.2f (k %lld%s)\n", chi2, static_cast<long long>(c.k),
              temporal ? (c.strict ? ", temporal strict" : ", temporal") : "");
  return chi2;
}

TEST(DeviceSamplerWeighted, PicksFollowSuccessiveSamplingsInclusionProbabilities) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Six positive entries (df 5: 15.09) among a zero, a negative and a NaN weight.
  const std::vector<float> mild{1, 8, 0, 4, 0.5f, -2, 6, nan, 5};
  EXPECT_LT(device_weighted_chi_square(untimed_case(mild, 2)), 15.09);
  EXPECT_LT(device_weighted_chi_square(untimed_case(mild, 3)), 15.09);
  // A skewed row (one heavy entry; the host takes Efraimidis-Spirakis too), df 11: 24.72.
  const std::vector<float> skewed{8, 0.1f, 0.2f, 1, 0.5f, 3, 0.7f, 0.9f, 0.3f, 2, 1.5f, 0.6f};
  EXPECT_LT(device_weighted_chi_square(untimed_case(skewed, 3)), 24.72);
}

// Temporal and weighted (the host's temporal weighted distribution): the weights of the
// entries the seed's time allows only. The heaviest entry is later than the seed, as are two
// others; a zero weight among the allowed ones. Not strict: 6 positive allowed entries (df 5:
// 15.09); strict drops the two at the seed's time (4, df 3: 11.34). The same statistic of
// picks that ignore the weights (every positive weight 1) is far above the quantile: the test sees
// them.
TEST(DeviceSamplerWeighted, TemporalPicksFollowTheAllowedEntriesWeights) {
  const std::vector<float> w{1, 8, 3, 4, 0.5f, 2, 6, 1.5f, 5, 0};
  const std::vector<int64_t> times{3, 9, 0, 5, 7, 5, 2, 12, 4, 1};
  for (const bool strict : {false, true}) {
    ChiSquareCase c{w, 3, times, /*seed_time=*/5, strict, /*expected=*/{}};
    EXPECT_LT(device_weighted_chi_square(c), strict ? 11.34 : 15.09);
    for (float& x : c.weights) x = x > 0 ? 1.0f : 0.0f;
    c.expected = w;
    EXPECT_GT(device_weighted_chi_square(c), strict ? 11.34 : 15.09);
  }
}

// A random weighted graph (some weights zero), untyped and typed with per-relation fanouts
// (0 and -1 among them): per (node, relation) run, min(k, positive entries) distinct
// positive in-edges (every positive one for k = -1 or at most k of them), in stored order,
// edge ids naming them; reruns identical, another key another sample; one more host read
// per hop than uniform sampling.
TEST(DeviceSamplerWeighted, TakesDistinctPositiveInEdgesPerRelationAndRerunsIdentically) {
  for (const int relations : {0, 3}) {
    const TestGraph g = random_graph(500, relations, 70, 40 + relations);
    std::vector<float> weights(g.indices.size());
    Rng rng(41);
    for (float& w : weights)
      w = rng.below(5) == 0 ? 0.0f : static_cast<float>(rng.uniform() * 4 + 0.01);
    sample::CscView view = g.view();
    view.weights = weights;
    const DeviceTopology topology({view}, g.num_relations, torch::kCPU, /*weights=*/true);
    const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 60, 42);
    const sample::Fanouts fanouts = relations == 0
                                        ? sample::Fanouts({6, -1, 3})
                                        : sample::Fanouts({6, 4}, {{5, 0, -1}, {2, 2, 2}});
    const DeviceSampler sampler(topology);
    const DeviceSample s = sampler.sample(ids(seeds), block_options(fanouts), weighted_options());
    const std::vector<int64_t> input = to_vector(s.input_nodes), eid = to_vector(s.edge_ids);
    int64_t offset = 0;  // of the block's edges in edge_ids
    for (size_t hop = 0; hop < s.blocks.size(); ++hop) {
      const nn::BlockTensors& b = s.blocks[hop];
      const std::vector<int64_t> ptr = to_vector(b.indptr), idx = to_vector(b.indices);
      for (int64_t i = 0; i < b.num_dst; ++i) {
        const int64_t v = input[static_cast<size_t>(i)];
        std::map<int64_t, std::vector<int64_t>> positive, picked;  // relation -> entries
        for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
          if (weights[e] > 0) positive[relations > 0 ? g.relations[e] : 0].push_back(e);
        for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
          const int64_t id = eid[offset + e];
          ASSERT_GE(id, g.indptr[v]);
          ASSERT_LT(id, g.indptr[v + 1]) << "edge " << id << " is not an in-edge of " << v;
          EXPECT_GT(weights[id], 0) << "edge " << id << " of weight 0 picked";
          EXPECT_EQ(input[static_cast<size_t>(idx[e])], g.indices[id]);
          picked[relations > 0 ? g.relations[id] : 0].push_back(id);
        }
        for (const auto& [r, got] : picked) {
          EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
          EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size());
        }
        for (int64_t r = 0; r < std::max(relations, 1); ++r) {
          const std::vector<int64_t>& per = fanouts.relations_of(hop);
          const int64_t k = per.empty() ? fanouts.hops[hop] : per[static_cast<size_t>(r)];
          const std::vector<int64_t>& all = positive[r];
          const std::vector<int64_t>& got = picked[r];
          const int64_t count = static_cast<int64_t>(all.size());
          if (k < 0 || count <= k)
            EXPECT_EQ(got, all) << "node " << v << " relation " << r << ": every positive one";
          else
            EXPECT_EQ(static_cast<int64_t>(got.size()), k) << "node " << v << " relation " << r;
        }
      }
      offset += b.num_edges();
    }
    EXPECT_EQ(offset, s.num_edges);
    // Two reads per hop (its entry count, then its sizes), fanout -1 or not.
    EXPECT_EQ(s.host_reads, static_cast<int>(2 * fanouts.num_hops()));
    const DeviceSample again =
        sampler.sample(ids(seeds), block_options(fanouts), weighted_options());
    EXPECT_TRUE(torch::equal(again.edge_ids, s.edge_ids));
    EXPECT_TRUE(torch::equal(again.input_nodes, s.input_nodes));
    for (size_t i = 0; i < s.blocks.size(); ++i)
      expect_same_block(again.blocks[i], s.blocks[i], "weighted rerun " + std::to_string(i));
    const DeviceSample other =
        sampler.sample(ids(seeds), block_options(fanouts, 9), weighted_options());
    EXPECT_FALSE(other.edge_ids.sizes() == s.edge_ids.sizes() &&
                 torch::equal(other.edge_ids, s.edge_ids));
  }
}

// Asking for weights of a topology that holds none, or holding the weights of views without
// any, is an Error.
TEST(DeviceSamplerWeighted, NeedsTheWeights) {
  const TestGraph g = random_graph(100, 0, 20, 43);
  const DeviceTopology topology({g.view()}, 0, torch::kCPU);
  EXPECT_THROW(DeviceSampler(topology).sample(ids({1, 2}), block_options({3}), weighted_options()),
               Error);
  EXPECT_THROW(DeviceTopology({g.view()}, 0, torch::kCPU, /*weights=*/true), Error);
}

// On a GPU: weighted sampling reruns bit for bit there, and takes as many picks per block
// as the CPU (min(k, positive entries) per run does not depend on the keys' last bits).
TEST(DeviceSamplerCuda, WeightedRerunsIdenticallyWithTheCpusCounts) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const TestGraph g = random_graph(20000, 0, 300, 44);
  std::vector<float> weights(g.indices.size());
  Rng rng(45);
  for (float& w : weights) w = rng.below(5) == 0 ? 0.0f : static_cast<float>(rng.uniform() + 0.01);
  sample::CscView view = g.view();
  view.weights = weights;
  const torch::Device gpu(torch::kCUDA, 0);
  const DeviceTopology cpu({view}, 0, torch::kCPU, /*weights=*/true);
  const DeviceTopology cuda({view}, 0, gpu, /*weights=*/true);
  const std::vector<int64_t> seeds = distinct_seeds(g.num_nodes(), 1024, 46);
  const sample::BlockOptions options = block_options({15, 10});
  const DeviceSample want = DeviceSampler(cpu).sample(ids(seeds), options, weighted_options());
  const DeviceSample a =
      DeviceSampler(cuda).sample(ids(seeds).to(gpu), options, weighted_options());
  const DeviceSample b =
      DeviceSampler(cuda).sample(ids(seeds).to(gpu), options, weighted_options());
  EXPECT_TRUE(torch::equal(a.edge_ids, b.edge_ids));
  EXPECT_TRUE(torch::equal(a.input_nodes, b.input_nodes));
  EXPECT_EQ(to_vector(a.blocks[0].indptr), to_vector(want.blocks[0].indptr));
}

TEST(DeviceSampler, RefusesBadFanoutsAndViews) {
  const TestGraph g = random_graph(100, 2, 20, 16);
  const DeviceTopology topology({g.view()}, 2, torch::kCPU);
  const DeviceSampler sampler(topology);
  EXPECT_THROW(sampler.sample(ids({1, 2}), block_options({-2})), Error);
  EXPECT_THROW(sampler.sample(ids({1, 2}), block_options(sample::Fanouts({3}, {{1, 2, 3}}))),
               Error);  // three relation fanouts for two relations
  // Views that leave a gap, or a relation id past the graph's.
  EXPECT_THROW(DeviceTopology({g.rows(0, 40), g.rows(50, 100)}, 2, torch::kCPU), Error);
  EXPECT_THROW(DeviceTopology({g.view()}, 1, torch::kCPU), Error);
}

}  // namespace
}  // namespace partita::train
