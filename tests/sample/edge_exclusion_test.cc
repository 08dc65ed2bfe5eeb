#include "partita/sample/edge_exclusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

using testing::expect_same_batch;
using testing::random_graph;
using GlobalEdges = std::set<std::pair<int64_t, int64_t>>;  // (src, dst) global ids

// A pair of a link batch as positions into its seeds.
struct SeedPair {
  int64_t src = 0;
  int64_t dst = 0;
};

// `g` with every edge's reverse added: rows sorted and unique.
graph::Csr symmetric(const graph::Csr& g) {
  std::vector<std::set<int64_t>> rows(static_cast<size_t>(g.num_rows()));
  for (int64_t v = 0; v < g.num_rows(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      rows[v].insert(g.indices[e]);
      rows[g.indices[e]].insert(v);
    }
  }
  graph::Csr s;
  s.indptr.push_back(0);
  for (const auto& row : rows) {
    s.indices.insert(s.indices.end(), row.begin(), row.end());
    s.indptr.push_back(static_cast<int64_t>(s.indices.size()));
  }
  return s;
}

// `g` without the given edges (every copy of each).
graph::Csr without_edges(const graph::Csr& g, const GlobalEdges& removed) {
  graph::Csr out;
  out.indptr.push_back(0);
  for (int64_t v = 0; v < g.num_rows(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      if (!removed.count({g.indices[e], v})) out.indices.push_back(g.indices[e]);
    }
    out.indptr.push_back(static_cast<int64_t>(out.indices.size()));
  }
  return out;
}

// The directed edges `mode` excludes for `pairs`, as global ids.
GlobalEdges excluded_global(const std::vector<int64_t>& seeds, const std::vector<SeedPair>& pairs,
                            Exclude mode) {
  GlobalEdges out;
  for (const SeedPair& p : pairs) {
    if (mode == Exclude::kNone) continue;
    out.insert({seeds[p.src], seeds[p.dst]});
    if (mode == Exclude::kReverse) out.insert({seeds[p.dst], seeds[p.src]});
  }
  return out;
}

// The brute-force filter: every row of every block scanned, edges compared by global ids.
SampledBatch reference_exclusion(SampledBatch batch, const GlobalEdges& excluded) {
  for (Block& b : batch.blocks) {
    Block kept = b;
    kept.indices.clear();
    kept.etypes.clear();
    kept.indptr.assign(1, 0);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      for (int64_t j = b.indptr[i]; j < b.indptr[i + 1]; ++j) {
        if (excluded.count({b.src_nodes[b.indices[j]], b.src_nodes[i]})) continue;
        kept.indices.push_back(b.indices[j]);
        if (!b.etypes.empty()) kept.etypes.push_back(b.etypes[j]);
      }
      kept.indptr.push_back(static_cast<int64_t>(kept.indices.size()));
    }
    b = std::move(kept);
  }
  return batch;
}

std::vector<int64_t> in_degrees(const graph::Csr& g, const std::vector<int64_t>& nodes) {
  std::vector<int64_t> d;
  for (int64_t v : nodes) d.push_back(g.degree(v));
  return d;
}

BlockOptions options(std::vector<int64_t> fanouts) {
  BlockOptions o;
  o.fanouts = std::move(fanouts);
  o.key = {/*seed=*/3, /*epoch=*/0, /*batch=*/1};
  return o;
}

// A link batch of `num_pairs` edges of `g` (plus a few nodes that are no endpoint), its
// seeds in a shuffled order and the pairs as seed positions. One pair is given twice and
// one pair with its reverse, so duplicates reach the exclusion.
struct LinkBatch {
  std::vector<int64_t> seeds;
  std::vector<SeedPair> pairs;
};

// Seed positions -> [m, 2] global ids, as exclude_edges takes them.
std::vector<int64_t> global_pairs(const std::vector<int64_t>& seeds,
                                  const std::vector<SeedPair>& pairs) {
  std::vector<int64_t> out;
  for (const SeedPair& p : pairs) {
    out.push_back(seeds[static_cast<size_t>(p.src)]);
    out.push_back(seeds[static_cast<size_t>(p.dst)]);
  }
  return out;
}

LinkBatch link_batch(const graph::Csr& g, int64_t num_pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<int64_t, int64_t>> edges;  // (src, dst)
  while (static_cast<int64_t>(edges.size()) < num_pairs) {
    const int64_t v = static_cast<int64_t>(rng() % g.num_rows());
    if (g.degree(v) == 0) continue;
    edges.emplace_back(g.indices[g.indptr[v] + static_cast<int64_t>(rng() % g.degree(v))], v);
  }
  edges.push_back(edges[0]);
  edges.emplace_back(edges[1].second, edges[1].first);
  std::set<int64_t> nodes;
  for (auto [s, d] : edges) nodes.insert(s), nodes.insert(d);
  for (int extra = 0; extra < 5; ++extra) nodes.insert(static_cast<int64_t>(rng() % g.num_rows()));
  LinkBatch batch;
  batch.seeds.assign(nodes.begin(), nodes.end());
  std::shuffle(batch.seeds.begin(), batch.seeds.end(), rng);
  auto position = [&](int64_t v) {
    return std::find(batch.seeds.begin(), batch.seeds.end(), v) - batch.seeds.begin();
  };
  for (auto [s, d] : edges) batch.pairs.push_back({position(s), position(d)});
  return batch;
}

TEST(EdgeExclusion, FullNeighborhoodEqualsSamplingTheGraphWithoutTheEdges) {
  const graph::Csr g = symmetric(random_graph(300, 4, 3, 40, 21));
  for (uint64_t trial = 0; trial < 6; ++trial) {
    const LinkBatch lb = link_batch(g, 12, trial);
    for (Exclude mode : {Exclude::kSelf, Exclude::kReverse, Exclude::kNone}) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << ", mode " << static_cast<int>(mode));
      const GlobalEdges excluded = excluded_global(lb.seeds, lb.pairs, mode);
      const graph::Csr pruned = without_edges(g, excluded);
      LocalSampler full(csc_view_of(g), {});
      LocalSampler reduced(csc_view_of(pruned), {});
      SampledBatch batch = sample_blocks(lb.seeds, options({-1, -1}), full);
      const int64_t sampled = batch.num_sampled_edges();
      std::vector<int64_t> degrees = in_degrees(g, batch.input_nodes);

      const int64_t removed =
          exclude_edges(batch, global_pairs(lb.seeds, lb.pairs), mode, &degrees);
      const SampledBatch expected = sample_blocks(lb.seeds, options({-1, -1}), reduced);
      expect_same_batch(batch, expected);
      EXPECT_EQ(removed, sampled - expected.num_sampled_edges());
      // Both hops hold every excluded edge: the seeds are dst nodes of both blocks.
      EXPECT_EQ(removed, 2 * static_cast<int64_t>(excluded.size()));
      // Degrees: those of the graph without the edges, each distinct edge counted once.
      EXPECT_EQ(degrees, in_degrees(pruned, batch.input_nodes));
    }
  }
}

TEST(EdgeExclusion, SelfKeepsTheReverseEdges) {
  const graph::Csr g = symmetric(random_graph(100, 3, 0, 0, 5));
  const LinkBatch lb = link_batch(g, 6, 9);
  LocalSampler sampler(csc_view_of(g), {});
  SampledBatch self = sample_blocks(lb.seeds, options({-1}), sampler);
  SampledBatch reverse = self;
  const int64_t removed_self =
      exclude_edges(self, global_pairs(lb.seeds, lb.pairs), Exclude::kSelf);
  const int64_t removed_reverse =
      exclude_edges(reverse, global_pairs(lb.seeds, lb.pairs), Exclude::kReverse);
  EXPECT_GT(removed_reverse, removed_self);
  const Block& b = self.blocks[0];
  for (const SeedPair& p : lb.pairs) {
    const auto row = b.indices.begin() + b.indptr[p.src];
    const auto row_end = b.indices.begin() + b.indptr[p.src + 1];
    const bool reverse_is_a_pair = std::any_of(lb.pairs.begin(), lb.pairs.end(), [&](SeedPair q) {
      return q.src == p.dst && q.dst == p.src;
    });
    if (reverse_is_a_pair) continue;
    EXPECT_NE(std::find(row, row_end, p.dst), row_end) << "reverse of a pair lost under kSelf";
  }
}

// Sampling with replacement repeats edges; every copy goes.
TEST(EdgeExclusion, RemovesEveryCopySampledWithReplacement) {
  const graph::Csr g = symmetric(random_graph(80, 2, 0, 0, 8));
  LocalSampler sampler(csc_view_of(g), {Replacement::kWith, Weighting::kUniform, 1, 2048});
  for (uint64_t trial = 0; trial < 4; ++trial) {
    const LinkBatch lb = link_batch(g, 8, 30 + trial);
    SampledBatch batch = sample_blocks(lb.seeds, options({25, 10}), sampler);
    const GlobalEdges excluded = excluded_global(lb.seeds, lb.pairs, Exclude::kReverse);
    const SampledBatch expected = reference_exclusion(batch, excluded);
    const int64_t sampled = batch.num_sampled_edges();
    std::vector<int64_t> degrees(batch.input_nodes.size(), 1);
    const int64_t removed =
        exclude_edges(batch, global_pairs(lb.seeds, lb.pairs), Exclude::kReverse, &degrees);
    expect_same_batch(batch, expected);
    EXPECT_EQ(removed, sampled - expected.num_sampled_edges());
    // 25 draws from rows of a few neighbors: far more copies than distinct edges.
    EXPECT_GT(removed, 2 * static_cast<int64_t>(excluded.size()));
    // Degree 1 drops to 0 at every seed that is the dst of an excluded edge (however many
    // copies were sampled or edges go into it), and stays 1 elsewhere.
    std::vector<int64_t> expected_degrees(batch.input_nodes.size(), 1);
    for (int64_t i = 0; i < static_cast<int64_t>(lb.seeds.size()); ++i) {
      for (const auto& [src, dst] : excluded) {
        if (dst == lb.seeds[i]) expected_degrees[i] = 0;
      }
    }
    EXPECT_EQ(degrees, expected_degrees);
  }
}

// A multigraph: an edge stored twice in its row. Both copies go, the degree drops once.
TEST(EdgeExclusion, RemovesParallelEdgesAndLowersTheDegreeOnce) {
  graph::Csr g;  // row 0: 1, 1, 2; row 1: 0, 2; row 2: 0
  g.indptr = {0, 3, 5, 6};
  g.indices = {1, 1, 2, 0, 2, 0};
  LocalSampler sampler(csc_view_of(g), {});
  SampledBatch batch = sample_blocks(std::vector<int64_t>{0, 1}, options({-1}), sampler);
  std::vector<int64_t> degrees = in_degrees(g, batch.input_nodes);  // 3, 2, 1
  const std::vector<int64_t> pairs = {/*src=*/1, /*dst=*/0};
  EXPECT_EQ(exclude_edges(batch, pairs, Exclude::kSelf, &degrees), 2);
  const Block& b = batch.blocks[0];
  EXPECT_EQ(b.indptr, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(b.indices, (std::vector<int64_t>{2, 0, 2}));  // node 2 is local 2
  EXPECT_EQ(b.src_nodes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(degrees, (std::vector<int64_t>{2, 2, 1}));
}

// Degrees given lower than the excluded edges into a node (a caller's mistake, or a
// degree already lowered) stop at 0.
TEST(EdgeExclusion, DegreesNeverGoBelowZero) {
  graph::Csr g;  // a triangle, both directions
  g.indptr = {0, 2, 4, 6};
  g.indices = {1, 2, 0, 2, 0, 1};
  LocalSampler sampler(csc_view_of(g), {});
  SampledBatch batch = sample_blocks(std::vector<int64_t>{0, 1, 2}, options({-1}), sampler);
  std::vector<int64_t> degrees = {1, 0, 5};
  const std::vector<int64_t> pairs = {1, 0, 2, 0};  // kReverse: 1->0, 0->1, 2->0, 0->2
  EXPECT_EQ(exclude_edges(batch, pairs, Exclude::kReverse, &degrees), 4);
  EXPECT_EQ(degrees, (std::vector<int64_t>{0, 0, 4}));
  EXPECT_EQ(batch.blocks[0].indices, (std::vector<int64_t>{2, 1}));  // 1->2 and 2->1 stay
}

TEST(EdgeExclusion, KeepsRelationsAlignedOnTypedGraphs) {
  const testing::TypedGraph t = testing::random_typed_graph(120, 3, 3, 2, 20, -1, 4);
  const graph::Csr g = t.g;
  LocalSampler sampler(t.view(), {});
  const LinkBatch lb = link_batch(g, 10, 17);
  SampledBatch batch = sample_blocks(lb.seeds, options({-1, 4}), sampler);
  ASSERT_FALSE(batch.blocks[0].etypes.empty());
  const SampledBatch expected =
      reference_exclusion(batch, excluded_global(lb.seeds, lb.pairs, Exclude::kReverse));
  EXPECT_GT(exclude_edges(batch, global_pairs(lb.seeds, lb.pairs), Exclude::kReverse), 0);
  expect_same_batch(batch, expected);
}

// Edge ids (edge features are fetched by them) stay with their edges: every kept block
// edge's id is the graph slot of that (src, dst) edge, and as many ids as edges remain.
TEST(EdgeExclusion, KeepsEdgeIdsAlignedWithTheirEdges) {
  const graph::Csr g = symmetric(random_graph(200, 4, 0, 0, 9));
  LocalSamplerOptions with_ids;
  with_ids.edge_ids = true;
  LocalSampler sampler(csc_view_of(g), with_ids);
  const LinkBatch lb = link_batch(g, 12, 5);
  SampledBatch batch = sample_blocks(lb.seeds, options({-1, 5}), sampler);
  ASSERT_GT(exclude_edges(batch, global_pairs(lb.seeds, lb.pairs), Exclude::kReverse), 0);
  int64_t checked = 0;
  for (const Block& block : batch.blocks) {
    ASSERT_EQ(block.edge_ids.size(), block.indices.size());
    for (int64_t d = 0; d < block.num_dst; ++d) {
      const int64_t dst = block.src_nodes[d];
      for (int64_t j = block.indptr[d]; j < block.indptr[d + 1]; ++j, ++checked) {
        const int64_t id = block.edge_ids[j];
        ASSERT_GE(id, g.indptr[dst]);
        ASSERT_LT(id, g.indptr[dst + 1]);
        EXPECT_EQ(g.indices[id], block.src_nodes[block.indices[j]]);
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(EdgeExclusion, NoneAndNoPairsChangeNothing) {
  const graph::Csr g = symmetric(random_graph(100, 3, 0, 0, 6));
  const LinkBatch lb = link_batch(g, 5, 2);
  LocalSampler sampler(csc_view_of(g), {});
  SampledBatch batch = sample_blocks(lb.seeds, options({-1, 3}), sampler);
  const SampledBatch before = batch;
  std::vector<int64_t> degrees = in_degrees(g, batch.input_nodes);
  const std::vector<int64_t> degrees_before = degrees;
  EXPECT_EQ(exclude_edges(batch, global_pairs(lb.seeds, lb.pairs), Exclude::kNone, &degrees), 0);
  EXPECT_EQ(exclude_edges(batch, {}, Exclude::kReverse, &degrees), 0);
  expect_same_batch(batch, before);
  EXPECT_EQ(degrees, degrees_before);
}

// Pairs need not be between seeds: an excluded edge is removed from whatever row holds it,
// here the rows of the seeds' neighbours in the second block.
TEST(EdgeExclusion, RemovesEdgesBetweenNodesThatAreNoSeeds) {
  const graph::Csr g = symmetric(random_graph(200, 4, 0, 0, 12));
  LocalSampler sampler(csc_view_of(g), {});
  for (uint64_t trial = 0; trial < 4; ++trial) {
    const std::vector<int64_t> seeds = {static_cast<int64_t>(7 + trial), 50, 120};
    SampledBatch batch = sample_blocks(seeds, options({-1, -1}), sampler);
    // Every edge into a neighbour of seed 0 that is not itself a seed.
    std::vector<int64_t> pairs;
    const Block& hop0 = batch.blocks[0];
    for (int64_t j = hop0.indptr[0]; j < hop0.indptr[1]; ++j) {
      const int64_t v = hop0.src_nodes[hop0.indices[j]];
      if (std::find(seeds.begin(), seeds.end(), v) != seeds.end()) continue;
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
        pairs.push_back(g.indices[e]);
        pairs.push_back(v);
      }
    }
    ASSERT_FALSE(pairs.empty());
    GlobalEdges excluded;
    for (size_t i = 0; i < pairs.size(); i += 2) excluded.insert({pairs[i], pairs[i + 1]});
    const SampledBatch expected = reference_exclusion(batch, excluded);
    std::vector<int64_t> degrees = in_degrees(g, batch.input_nodes);
    const int64_t removed = exclude_edges(batch, pairs, Exclude::kSelf, &degrees);
    EXPECT_GT(removed, 0);
    expect_same_batch(batch, expected);
    EXPECT_EQ(degrees, in_degrees(without_edges(g, excluded), batch.input_nodes));
  }
}

TEST(EdgeExclusion, RejectsBadPairsAndMisSizedDegrees) {
  const graph::Csr g = symmetric(random_graph(50, 3, 0, 0, 7));
  LocalSampler sampler(csc_view_of(g), {});
  const std::vector<int64_t> seeds = {4, 9, 20};
  SampledBatch batch = sample_blocks(seeds, options({-1}), sampler);
  const SampledBatch before = batch;
  for (Exclude mode : {Exclude::kSelf, Exclude::kReverse, Exclude::kNone}) {
    EXPECT_THROW(exclude_edges(batch, std::vector<int64_t>{4, 9, 20}, mode), Error);  // odd
    EXPECT_THROW(exclude_edges(batch, std::vector<int64_t>{4, 9, -1, 20}, mode), Error);
  }
  std::vector<int64_t> short_degrees(batch.input_nodes.size() - 1, 1);
  EXPECT_THROW(exclude_edges(batch, std::vector<int64_t>{4, 9}, Exclude::kReverse, &short_degrees),
               Error);
  expect_same_batch(batch, before);  // nothing removed before the throw
}

}  // namespace
}  // namespace partita::sample
