#include <gtest/gtest.h>

#include <set>

#include "partita/core/error.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/node_relabeler.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

using testing::expect_same_batch;
using testing::random_graph;
using testing::random_weights;
using testing::reference_blocks;

std::vector<int64_t> distinct_seeds(int64_t n, int64_t count, uint64_t seed) {
  Rng rng(stream_key(seed, 5));
  std::set<int64_t> seen;
  std::vector<int64_t> seeds;
  while (static_cast<int64_t>(seeds.size()) < count) {
    int64_t v = static_cast<int64_t>(rng.below(n));
    if (seen.insert(v).second) seeds.push_back(v);
  }
  return seeds;
}

BlockOptions block_options(std::vector<int64_t> fanouts, uint64_t batch) {
  BlockOptions o;
  o.fanouts = std::move(fanouts);
  o.key = {/*seed=*/7, /*epoch=*/1, batch};
  return o;
}

const std::vector<std::vector<int64_t>> kFanoutLists = {{},      {3},     {5, 3}, {15, 10, 5},
                                                        {-1, 2}, {2, -1}, {0, 3}, {40, 1}};

TEST(BlockBuilder, MatchesReferenceForEveryModeAndFanoutList) {
  graph::Csr g = random_graph(600, 10, 6, 120, 11);
  std::vector<float> w = random_weights(g.num_entries(), 11);
  CscView view = csc_view_of(g, w);
  std::vector<int64_t> seeds = distinct_seeds(g.num_rows(), 25, 1);
  BlockBuilder builder;  // reused across batches on purpose
  for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
    for (Weighting wt : {Weighting::kUniform, Weighting::kEdgeWeight}) {
      LocalSampler sampler(view, {r, wt, /*threads=*/1, /*chunk=*/2048});
      for (size_t f = 0; f < kFanoutLists.size(); ++f) {
        SCOPED_TRACE(::testing::Message() << "fanout list " << f);
        BlockOptions o = block_options(kFanoutLists[f], f);
        expect_same_batch(builder.build(seeds, o, sampler),
                          reference_blocks(g, w, seeds, o, {r, wt}));
      }
    }
  }
}

TEST(BlockBuilder, BlocksAreConsistentAndEdgesExist) {
  graph::Csr g = random_graph(2000, 8, 10, 200, 12);
  LocalSampler sampler(csc_view_of(g), {});
  std::vector<int64_t> seeds = distinct_seeds(g.num_rows(), 64, 2);
  SampledBatch batch = sample_blocks(seeds, block_options({15, 10, 5}, 3), sampler);
  ASSERT_EQ(batch.blocks.size(), 3u);
  EXPECT_EQ(batch.seeds, seeds);
  std::vector<int64_t> dst_nodes = seeds;
  for (const Block& b : batch.blocks) {
    ASSERT_EQ(b.num_dst, static_cast<int64_t>(dst_nodes.size()));
    ASSERT_EQ(b.num_src, static_cast<int64_t>(b.src_nodes.size()));
    ASSERT_GE(b.num_src, b.num_dst);
    // dst nodes are the prefix of src nodes; the rest are new and distinct.
    EXPECT_TRUE(std::equal(dst_nodes.begin(), dst_nodes.end(), b.src_nodes.begin()));
    EXPECT_EQ(std::set<int64_t>(b.src_nodes.begin(), b.src_nodes.end()).size(), b.src_nodes.size());
    ASSERT_EQ(static_cast<int64_t>(b.indptr.size()), b.num_dst + 1);
    EXPECT_EQ(b.indptr.front(), 0);
    EXPECT_EQ(b.indptr.back(), b.num_edges());
    std::vector<bool> used(static_cast<size_t>(b.num_src), false);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      ASSERT_LE(b.indptr[i], b.indptr[i + 1]);
      EXPECT_LE(b.indptr[i + 1] - b.indptr[i], 15);
      const int64_t dst = b.src_nodes[i];
      std::set<int64_t> row(g.indices.begin() + g.indptr[dst],
                            g.indices.begin() + g.indptr[dst + 1]);
      for (int64_t j = b.indptr[i]; j < b.indptr[i + 1]; ++j) {
        ASSERT_GE(b.indices[j], 0);
        ASSERT_LT(b.indices[j], b.num_src);
        ASSERT_TRUE(row.count(b.src_nodes[b.indices[j]])) << "no edge into " << dst;
        used[b.indices[j]] = true;
      }
    }
    // Every new src node was reached by an edge; new nodes appear in first-use order.
    int64_t next_new = b.num_dst;
    for (int64_t j = 0; j < b.num_edges(); ++j) {
      if (b.indices[j] >= b.num_dst) {
        ASSERT_LE(b.indices[j], next_new);
        if (b.indices[j] == next_new) ++next_new;
      }
    }
    EXPECT_EQ(next_new, b.num_src);
    dst_nodes = b.src_nodes;
  }
  EXPECT_EQ(batch.input_nodes, batch.blocks.back().src_nodes);
  EXPECT_GT(batch.num_sampled_edges(), 0);
}

TEST(BlockBuilder, IdenticalForAnyThreadCount) {
  graph::Csr g = random_graph(5000, 12, 10, 300, 13);
  std::vector<int64_t> seeds = distinct_seeds(g.num_rows(), 100, 3);
  BlockOptions o = block_options({10, 5, 3}, 4);
  LocalSampler one(csc_view_of(g), {Replacement::kWithout, Weighting::kUniform, 1, 2048});
  SampledBatch expected = sample_blocks(seeds, o, one);
  for (int threads : {2, 3}) {
    LocalSampler many(csc_view_of(g), {Replacement::kWithout, Weighting::kUniform, threads, 5});
    expect_same_batch(sample_blocks(seeds, o, many), expected);
  }
}

// What the distributed sampler will do, in one process: group the frontier by owner,
// sample each group on its owner's view, merge in frontier order.
class RoutedSampler final : public NeighborSampler {
 public:
  RoutedSampler(std::vector<LocalSampler*> owners, std::vector<int64_t> ranges)
      : owners_(std::move(owners)), ranges_(std::move(ranges)) {}

  void sample_hop(const HopRequest& request, NeighborSample* out) override {
    const size_t parts = owners_.size();
    std::vector<std::vector<int64_t>> nodes(parts), positions(parts);
    for (int64_t i = 0; i < request.frontier.size(); ++i) {
      size_t p = std::upper_bound(ranges_.begin(), ranges_.end(), request.frontier[i]) -
                 ranges_.begin() - 1;
      nodes[p].push_back(request.frontier[i]);
      positions[p].push_back(i);
    }
    std::vector<std::vector<int64_t>> per_node(request.frontier.size());
    for (size_t p = 0; p < parts; ++p) {
      NeighborSample part;
      HopRequest sub = request;
      sub.frontier = ArrayView<const int64_t>(nodes[p]);
      owners_[p]->sample_hop(sub, &part);
      int64_t offset = 0;
      for (size_t j = 0; j < nodes[p].size(); ++j) {
        per_node[positions[p][j]].assign(part.neighbors.begin() + offset,
                                         part.neighbors.begin() + offset + part.counts[j]);
        offset += part.counts[j];
      }
    }
    out->counts.clear();
    out->neighbors.clear();
    for (const auto& n : per_node) {
      out->counts.push_back(static_cast<int64_t>(n.size()));
      out->neighbors.insert(out->neighbors.end(), n.begin(), n.end());
    }
  }

 private:
  std::vector<LocalSampler*> owners_;
  std::vector<int64_t> ranges_;
};

TEST(BlockBuilder, PartitionedSamplingEqualsSingleMachine) {
  graph::Csr g = random_graph(1500, 10, 8, 150, 14);
  std::vector<float> w = random_weights(g.num_entries(), 14);
  const std::vector<int64_t> ranges{0, 400, 1000, 1500};
  std::vector<std::vector<int64_t>> indptr(3), indices(3);
  std::vector<std::vector<float>> weights(3);
  std::vector<CscView> views(3);
  std::vector<int64_t> ids(static_cast<size_t>(g.num_rows()));  // "dataset ids": reversed
  for (int64_t v = 0; v < g.num_rows(); ++v) ids[v] = g.num_rows() - 1 - v;
  for (int p = 0; p < 3; ++p) {
    const int64_t b = g.indptr[ranges[p]], e = g.indptr[ranges[p + 1]];
    for (int64_t r = ranges[p]; r <= ranges[p + 1]; ++r) indptr[p].push_back(g.indptr[r] - b);
    indices[p].assign(g.indices.begin() + b, g.indices.begin() + e);
    weights[p].assign(w.begin() + b, w.begin() + e);
    views[p].indptr = ArrayView<const int64_t>(indptr[p]);
    views[p].indices = ArrayView<const int64_t>(indices[p]);
    views[p].first_row = ranges[p];
    views[p].weights = ArrayView<const float>(weights[p]);
    views[p].stream_ids =
        ArrayView<const int64_t>(ids).subview(ranges[p], ranges[p + 1] - ranges[p]);
  }
  std::vector<int64_t> seeds = distinct_seeds(g.num_rows(), 50, 4);
  for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
    for (Weighting wt : {Weighting::kUniform, Weighting::kEdgeWeight}) {
      LocalSamplerOptions so{r, wt, 1, 2048};
      CscView whole_view = csc_view_of(g, w);
      whole_view.stream_ids = ArrayView<const int64_t>(ids);
      LocalSampler whole(whole_view, so);
      LocalSampler p0(views[0], so), p1(views[1], so), p2(views[2], so);
      RoutedSampler routed({&p0, &p1, &p2}, ranges);
      for (const auto& fanouts : kFanoutLists) {
        BlockOptions o = block_options(fanouts, 9);
        expect_same_batch(sample_blocks(seeds, o, routed), sample_blocks(seeds, o, whole));
      }
    }
  }
}

TEST(BlockBuilder, RejectsRepeatedSeedsAndLyingSamplers) {
  graph::Csr g = random_graph(100, 5, 0, 0, 15);
  LocalSampler sampler(csc_view_of(g), {});
  std::vector<int64_t> seeds{4, 9, 4};
  try {
    sample_blocks(seeds, block_options({2}, 0), sampler);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "sample: seed 4 appears more than once (positions 0 and 2)");
  }
  struct Liar : NeighborSampler {
    void sample_hop(const HopRequest& request, NeighborSample* out) override {
      out->counts.assign(static_cast<size_t>(request.frontier.size()), 1);
      out->neighbors.clear();
    }
  } liar;
  std::vector<int64_t> ok{1, 2};
  EXPECT_THROW(sample_blocks(ok, block_options({2}, 0), liar), Error);
  EXPECT_THROW(sample_blocks(ok, block_options({2, -3}, 0), sampler), Error);
  std::vector<int64_t> outside{1, 100};
  EXPECT_THROW(sample_blocks(outside, block_options({2}, 0), sampler), Error);
}

TEST(NodeRelabeler, NumbersInFirstInsertionOrderAndSurvivesClearAndGrowth) {
  NodeRelabeler relabeler;
  for (int round = 0; round < 3; ++round) {
    relabeler.clear();
    if (round == 1) relabeler.reserve(4);
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < 5000; ++i) ids.push_back((i * 7919 + round) % 3001 * 1000003);
    std::vector<int64_t> expected_ids, expected_nodes;
    std::unordered_map<int64_t, int64_t> local;
    for (int64_t id : ids) {
      auto it = local.emplace(id, static_cast<int64_t>(local.size())).first;
      if (it->second == static_cast<int64_t>(expected_nodes.size())) expected_nodes.push_back(id);
      expected_ids.push_back(it->second);
    }
    relabeler.relabel(ids.data(), 2500);
    relabeler.relabel(ids.data() + 2500, 2500);
    EXPECT_EQ(ids, expected_ids);
    EXPECT_EQ(relabeler.nodes(), expected_nodes);
    EXPECT_EQ(relabeler.insert(expected_nodes[17]), 17);
    const int64_t before = relabeler.size();
    EXPECT_EQ(relabeler.insert(-5), before);  // any int64 is a valid key
    EXPECT_EQ(relabeler.size(), before + 1);
  }
}

}  // namespace
}  // namespace partita::sample
