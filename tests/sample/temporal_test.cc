// Temporal sampling (neighbor_kernel.h, block_builder.h): the kernel against the brute-force
// reference of temporal_test_util.h in every mode (uniform / weighted, without / with
// replacement, recent; strict or not; typed or not; fanouts -1, 0, small, >= degree), the
// exact choice of kRecent, uniformity among the allowed entries (chi-square), blocks on
// (node, time) pairs, and the leakage proof: over every hop of many batches, no sampled
// edge is later than the time of the entry it was sampled for.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "partita/core/error.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "temporal_test_util.h"

namespace partita::sample {
namespace {

using testing::all_temporal_modes;
using testing::kTimeRange;
using testing::TemporalMode;
using testing::TimedGraph;
using testing::typed_graph;
using testing::TypedFanouts;
using testing::untyped_graph;

KernelOptions kernel_options(const TemporalMode& mode, int64_t k) {
  KernelOptions o;
  o.fanout = k;
  o.temporal = mode.temporal;
  o.strict = mode.strict;
  o.replacement = mode.replacement;
  o.weighting = mode.weighting;
  return o;
}

std::string describe(const TemporalMode& m) {
  return std::string(m.temporal == Temporal::kRecent ? "recent" : "uniform") +
         (m.strict ? " strict" : "") + (m.replacement == Replacement::kWith ? " with" : "") +
         (m.weighting == Weighting::kEdgeWeight ? " weighted" : "");
}

// Every row once, hub rows and some others again at other times.
void kernel_nodes(int64_t n, std::vector<int64_t>* nodes, std::vector<int64_t>* times) {
  Rng rng(stream_key(3, 4));
  for (int64_t v = 0; v < n; ++v) {
    nodes->push_back(v);
    times->push_back(static_cast<int64_t>(rng.below(kTimeRange + 2)) - 1);
    if (v < 6 || v % 7 == 0) {
      nodes->push_back(v);
      times->push_back(static_cast<int64_t>(rng.below(kTimeRange)));
    }
  }
}

void expect_kernel_matches_reference(const TimedGraph& t, const std::vector<int64_t>& fanouts,
                                     const std::vector<int64_t>& per_relation) {
  std::vector<int64_t> nodes, times;
  kernel_nodes(t.g.num_rows(), &nodes, &times);
  const uint64_t hop = hop_key({9, 2, 5}, 1);
  NeighborSample s;
  for (const TemporalMode& mode : all_temporal_modes()) {
    for (int64_t k : fanouts) {
      for (int threads : {1, 3}) {
        SCOPED_TRACE(::testing::Message()
                     << describe(mode) << " k=" << k << " threads=" << threads);
        KernelOptions o = kernel_options(mode, k);
        o.threads = threads;
        o.chunk = 37;
        o.relation_fanouts = per_relation;
        sample_neighbors(t.view(), nodes, times, hop, o, &s);
        ASSERT_EQ(s.counts.size(), nodes.size());
        int64_t offset = 0;
        for (size_t i = 0; i < nodes.size(); ++i) {
          const auto want = testing::reference_temporal_sample(
              t.g, t.relations, t.num_relations, t.w, t.times, nodes[i], times[i], hop,
              TypedFanouts{k, per_relation}, mode);
          ASSERT_EQ(s.counts[i], static_cast<int64_t>(want.size()))
              << "node " << nodes[i] << " at " << times[i];
          for (size_t j = 0; j < want.size(); ++j) {
            ASSERT_EQ(s.neighbors[offset + j], want[j].first) << "node " << nodes[i];
            if (!t.relations.empty()) {
              ASSERT_EQ(s.relations[offset + j], want[j].second);
            }
          }
          offset += s.counts[i];
        }
        EXPECT_EQ(offset, static_cast<int64_t>(s.neighbors.size()));
        EXPECT_EQ(s.relations.size(), t.relations.empty() ? 0u : s.neighbors.size());
      }
    }
  }
}

const std::vector<int64_t> kKernelFanouts = {-1, 0, 1, 3, 7, 20, 1000};

TEST(TemporalKernel, UntypedMatchesReference) {
  for (bool repeats : {false, true}) {
    SCOPED_TRACE(repeats ? "repeated pairs" : "simple");
    expect_kernel_matches_reference(untyped_graph(repeats, 21), kKernelFanouts, {});
  }
}

TEST(TemporalKernel, TypedMatchesReference) {
  for (bool repeats : {false, true}) {
    SCOPED_TRACE(repeats ? "repeated pairs" : "simple");
    const TimedGraph t = typed_graph(repeats, 22);
    expect_kernel_matches_reference(t, kKernelFanouts, {});
    expect_kernel_matches_reference(t, {2}, {4, -1, 0});  // per-relation fanouts
  }
}

// Entries ids 10..15 with times 5, 3, 9, 9, 1, 7.
struct SmallRow {
  graph::Csr g;
  std::vector<int64_t> times{5, 3, 9, 9, 1, 7};
  SmallRow() {
    g.indptr = {0, 6};
    g.indices = {10, 11, 12, 13, 14, 15};
  }
  std::vector<int64_t> recent(int64_t k, int64_t time, bool strict = false) const {
    CscView v = csc_view_of(g);
    v.times = ArrayView<const int64_t>(times);
    KernelOptions o;
    o.fanout = k;
    o.temporal = Temporal::kRecent;
    o.strict = strict;
    NeighborSample s;
    std::vector<int64_t> node{0}, at{time};
    sample_neighbors(v, node, at, 1, o, &s);
    return s.neighbors;
  }
};

TEST(TemporalKernel, RecentTakesTheMostRecentAllowedInStoredOrder) {
  const SmallRow row;
  using V = std::vector<int64_t>;
  EXPECT_EQ(row.recent(2, 8), (V{10, 15}));       // allowed 5, 3, 1, 7: takes 7 and 5
  EXPECT_EQ(row.recent(1, 7), (V{15}));           // 7 <= 7
  EXPECT_EQ(row.recent(1, 7, true), (V{10}));     // strict: 7 is not < 7
  EXPECT_EQ(row.recent(2, 9), (V{12, 13}));       // the two 9s
  EXPECT_EQ(row.recent(3, 9), (V{12, 13, 15}));   //
  EXPECT_EQ(row.recent(10, 4), (V{11, 14}));      // k >= allowed: every allowed entry
  EXPECT_EQ(row.recent(-1, 6), (V{10, 11, 14}));  // -1: every allowed entry
  EXPECT_EQ(row.recent(0, 9), (V{}));             //
  EXPECT_EQ(row.recent(3, 1, true), (V{}));       // nothing before time 1
  EXPECT_EQ(row.recent(3, -5), (V{}));            //
  EXPECT_EQ(row.recent(1, 100), (V{12}));         // tie of 9s: the one stored first
}

// On random rows: what kRecent takes is never older than an allowed entry it leaves out,
// and on equal times it leaves out only entries stored after every one it takes.
TEST(TemporalKernel, RecentIsExactlyTheKMostRecent) {
  const TimedGraph t = untyped_graph(true, 23);
  std::vector<int64_t> nodes, times;
  kernel_nodes(t.g.num_rows(), &nodes, &times);
  NeighborSample s;
  for (bool strict : {false, true}) {
    for (int64_t k : {1, 4, 9}) {
      KernelOptions o = kernel_options({Temporal::kRecent, strict}, k);
      sample_neighbors(t.view(), nodes, times, 77, o, &s);
      int64_t offset = 0;
      for (size_t i = 0; i < nodes.size(); ++i) {
        // Positions of the row's allowed entries; the taken ones matched in stored order.
        const int64_t b = t.g.indptr[nodes[i]], e = t.g.indptr[nodes[i] + 1];
        std::vector<int64_t> allowed;
        for (int64_t p = b; p < e; ++p)
          if (testing::allowed(t.times[p], times[i], strict)) allowed.push_back(p);
        ASSERT_EQ(s.counts[i], std::min<int64_t>(k, allowed.size()));
        // Every (time, -position) taken beats every one left out.
        std::vector<std::pair<int64_t, int64_t>> keys;
        for (int64_t p : allowed) keys.emplace_back(t.times[p], -p);
        std::sort(keys.rbegin(), keys.rend());
        std::vector<int64_t> want;
        for (int64_t j = 0; j < s.counts[i]; ++j) want.push_back(-keys[j].second);
        std::sort(want.begin(), want.end());
        for (int64_t j = 0; j < s.counts[i]; ++j) {
          ASSERT_EQ(s.neighbors[offset + j], t.g.indices[want[j]]);
        }
        offset += s.counts[i];
      }
    }
  }
}

TEST(TemporalKernel, RejectsWhatItCannotDo) {
  const TimedGraph t = untyped_graph(false, 24);
  std::vector<int64_t> nodes{1, 2}, times{3, 4}, one_time{3};
  NeighborSample s;
  KernelOptions o = kernel_options({Temporal::kUniform}, 3);
  CscView untimed = t.view();
  untimed.times = {};
  EXPECT_THROW(sample_neighbors(untimed, nodes, times, 1, o, &s), Error);
  EXPECT_THROW(sample_neighbors(t.view(), nodes, one_time, 1, o, &s), Error);
  EXPECT_THROW(sample_neighbors(t.view(), nodes, 1, o, &s), Error);  // no times at all
  KernelOptions none = kernel_options({Temporal::kNone}, 3);
  EXPECT_THROW(sample_neighbors(t.view(), nodes, times, 1, none, &s), Error);
  EXPECT_THROW(
      sample_neighbors(t.view(), nodes, times, 1,
                       kernel_options({Temporal::kRecent, false, Replacement::kWith}, 3), &s),
      Error);
  EXPECT_THROW(sample_neighbors(t.view(), nodes, times, 1,
                                kernel_options({Temporal::kRecent, false, Replacement::kWithout,
                                                Weighting::kEdgeWeight},
                                               3),
                                &s),
               Error);
  EXPECT_THROW(LocalSampler(untimed, {Replacement::kWithout, Weighting::kUniform, 1, 2048,
                                      Temporal::kUniform}),
               Error);
  CscView short_times = t.view();
  short_times.times = ArrayView<const int64_t>(t.times.data(), 5);
  EXPECT_THROW(validate(short_times, "test"), Error);
  // Without temporal options the old call and the new one with no times agree.
  NeighborSample a, b;
  sample_neighbors(t.view(), nodes, 1, none, &a);
  sample_neighbors(t.view(), nodes, {}, 1, none, &b);
  EXPECT_EQ(a.neighbors, b.neighbors);
}

// kUniform is uniform over the allowed entries alone: a star whose leaf u (1..20) has time
// u, sampled at time 12, takes leaves 1..12 (strict: 1..11) equally often and no other.
// Chi-square at p = 0.001 (df 11: 31.26, df 10: 29.59); deterministic trials as in
// distribution_test.cc.
TEST(TemporalDistribution, UniformAmongAllowedEntries) {
  graph::Csr star = testing::star_graph(20);
  std::vector<int64_t> times(20);
  for (int64_t u = 1; u <= 20; ++u) times[u - 1] = u;
  CscView view = csc_view_of(star);
  view.times = ArrayView<const int64_t>(times);
  constexpr int kTrials = 20000;
  for (bool strict : {false, true}) {
    for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
      const int64_t cells = strict ? 11 : 12;
      std::vector<double> counts(static_cast<size_t>(cells), 0.0);
      KernelOptions o = kernel_options({Temporal::kUniform, strict, r}, 4);
      std::vector<int64_t> center{0}, at{12};
      NeighborSample s;
      for (int trial = 0; trial < kTrials; ++trial) {
        sample_neighbors(view, center, at, hop_key({2024, 3, uint64_t(trial)}, 0), o, &s);
        ASSERT_EQ(s.neighbors.size(), 4u);
        for (int64_t u : s.neighbors) {
          ASSERT_GE(u, 1);
          ASSERT_LE(u, cells) << "a leaf later than the node's time";
          counts[u - 1] += 1;
        }
      }
      double x = 0;
      const double expected = kTrials * 4.0 / cells;
      for (double c : counts) x += (c - expected) * (c - expected) / expected;
      std::printf("chi-square %.2f over %lld cells\n", x, static_cast<long long>(cells));
      EXPECT_LT(x, strict ? 29.59 : 31.26);
    }
  }
}

// ---- Blocks ----------------------------------------------------------------------------

BlockOptions block_options(std::vector<int64_t> fanouts, uint64_t batch) {
  BlockOptions o;
  o.fanouts = std::move(fanouts);
  o.key = {/*seed=*/7, /*epoch=*/1, batch};
  return o;
}

LocalSamplerOptions sampler_options(const TemporalMode& mode, int threads = 1) {
  LocalSamplerOptions o;
  o.replacement = mode.replacement;
  o.weighting = mode.weighting;
  o.temporal = mode.temporal;
  o.strict = mode.strict;
  o.threads = threads;
  o.chunk = 29;
  return o;
}

const std::vector<std::vector<int64_t>> kFanoutLists = {{},      {3},       {5, 3},
                                                        {-1, 2}, {4, 0, 6}, {30, 2}};

TEST(TemporalBlocks, MatchReferenceForEveryModeAndFanoutList) {
  for (bool typed : {false, true}) {
    const TimedGraph t = typed ? typed_graph(true, 31) : untyped_graph(true, 31);
    std::vector<int64_t> seeds, seed_times;
    testing::temporal_seeds(t.g.num_rows(), 40, kTimeRange, 5, &seeds, &seed_times);
    BlockBuilder builder;  // reused across batches on purpose
    for (const TemporalMode& mode : all_temporal_modes()) {
      LocalSampler sampler(t.view(), sampler_options(mode, typed ? 2 : 1));
      for (size_t f = 0; f < kFanoutLists.size(); ++f) {
        SCOPED_TRACE(::testing::Message()
                     << (typed ? "typed " : "") << describe(mode) << " fanout list " << f);
        BlockOptions o = block_options(kFanoutLists[f], f);
        o.seed_times = seed_times;
        testing::expect_same_temporal_batch(
            builder.build(seeds, o, sampler),
            testing::reference_temporal_blocks(t.g, t.relations, t.num_relations, t.w, t.times,
                                               seeds, seed_times, o, mode));
      }
    }
  }
}

// The same node at two times is two entries; at one time, one.
TEST(TemporalBlocks, EntriesArePairsOfNodeAndTime) {
  // Rows 0 and 1 each have in-neighbor 2 (time 1); row 2 has in-neighbor 3 (time 5).
  graph::Csr g;
  g.indptr = {0, 1, 2, 3, 3};
  g.indices = {2, 2, 3};
  std::vector<int64_t> times{1, 1, 5};
  CscView view = csc_view_of(g);
  view.times = ArrayView<const int64_t>(times);
  LocalSampler sampler(view, sampler_options({Temporal::kUniform}));
  std::vector<int64_t> seeds{0, 1};
  std::vector<int64_t> same{10, 10}, differ{10, 4};
  BlockOptions o = block_options({-1, -1}, 0);
  o.seed_times = same;
  SampledBatch a = sample_blocks(seeds, o, sampler);
  EXPECT_EQ(a.blocks[0].src_nodes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(a.blocks[0].src_times, (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(a.blocks[0].indices, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.blocks[1].src_nodes, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(a.seed_times, same);
  o.seed_times = differ;
  SampledBatch b = sample_blocks(seeds, o, sampler);
  EXPECT_EQ(b.blocks[0].src_nodes, (std::vector<int64_t>{0, 1, 2, 2}));
  EXPECT_EQ(b.blocks[0].src_times, (std::vector<int64_t>{10, 4, 10, 4}));
  EXPECT_EQ(b.blocks[0].indices, (std::vector<int64_t>{2, 3}));
  // Hop 1: node 2 at time 10 reaches 3 (time 5 <= 10); at time 4 it does not.
  EXPECT_EQ(b.blocks[1].src_nodes, (std::vector<int64_t>{0, 1, 2, 2, 3}));
  EXPECT_EQ(b.blocks[1].src_times, (std::vector<int64_t>{10, 4, 10, 4, 10}));
  EXPECT_EQ(b.blocks[1].indptr, (std::vector<int64_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(b.input_nodes, b.blocks[1].src_nodes);
  // One node as a seed at two times is fine; the same (node, time) twice is not.
  std::vector<int64_t> twice{2, 2}, twice_times{3, 3}, two_times{3, 6};
  o.seed_times = two_times;
  EXPECT_EQ(sample_blocks(twice, o, sampler).blocks[0].num_dst, 2);
  o.seed_times = twice_times;
  EXPECT_THROW(sample_blocks(twice, o, sampler), Error);
  o.seed_times = ArrayView<const int64_t>(two_times.data(), 1);
  EXPECT_THROW(sample_blocks(twice, o, sampler), Error);
  // A non-temporal sampler refuses times; a temporal one needs them.
  LocalSampler plain(view, LocalSamplerOptions{});
  o.seed_times = same;
  EXPECT_THROW(sample_blocks(seeds, o, plain), Error);
  o.seed_times = {};
  EXPECT_THROW(sample_blocks(seeds, o, sampler), Error);
  EXPECT_TRUE(sample_blocks(seeds, o, plain).blocks[0].src_times.empty());
}

// The leakage proof (testing::check_no_leakage) over every hop of many batches.
void expect_no_leakage(const TimedGraph& t, const TemporalMode& mode,
                       const std::vector<int64_t>& fanouts, int batches) {
  const testing::EdgeTimes edge_time = testing::edge_times_of(t);
  LocalSampler sampler(t.view(), sampler_options(mode, 2));
  BlockBuilder builder;
  int64_t checked = 0;
  for (int batch = 0; batch < batches; ++batch) {
    std::vector<int64_t> seeds, seed_times;
    testing::temporal_seeds(t.g.num_rows(), 32, kTimeRange, 100 + batch, &seeds, &seed_times);
    BlockOptions o = block_options(fanouts, batch);
    o.seed_times = seed_times;
    checked += testing::check_no_leakage(edge_time, builder.build(seeds, o, sampler), mode.strict);
  }
  EXPECT_GT(checked, 1000);  // the proof covers many edges
}

TEST(TemporalBlocks, NoSampledEdgeIsLaterThanItsEntryUntyped) {
  const TimedGraph t = untyped_graph(false, 41);
  for (const TemporalMode& mode : all_temporal_modes()) {
    SCOPED_TRACE(describe(mode));
    expect_no_leakage(t, mode, {10, 5, 3}, 25);
    expect_no_leakage(t, mode, {-1, 2}, 5);
  }
}

TEST(TemporalBlocks, NoSampledEdgeIsLaterThanItsEntryTyped) {
  const TimedGraph t = typed_graph(false, 42);
  for (const TemporalMode& mode : all_temporal_modes()) {
    SCOPED_TRACE(describe(mode));
    expect_no_leakage(t, mode, {6, 4, 2}, 25);
  }
}

// Reruns are bit-identical, whatever the thread count; a fresh builder agrees.
TEST(TemporalBlocks, RerunsAreBitIdentical) {
  const TimedGraph t = typed_graph(true, 43);
  std::vector<int64_t> seeds, seed_times;
  testing::temporal_seeds(t.g.num_rows(), 64, kTimeRange, 9, &seeds, &seed_times);
  for (const TemporalMode& mode : all_temporal_modes()) {
    LocalSampler one(t.view(), sampler_options(mode, 1));
    LocalSampler four(t.view(), sampler_options(mode, 4));
    BlockOptions o = block_options({8, 4, 2}, 3);
    o.seed_times = seed_times;
    BlockBuilder builder;
    const SampledBatch a = builder.build(seeds, o, one);
    testing::expect_same_temporal_batch(a, builder.build(seeds, o, one));
    testing::expect_same_temporal_batch(a, sample_blocks(seeds, o, four));
  }
}

}  // namespace
}  // namespace partita::sample
