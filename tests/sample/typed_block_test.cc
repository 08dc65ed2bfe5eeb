// Blocks of typed graphs: Block::etypes, per-hop per-relation fanouts.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "partita/core/error.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

using testing::expect_same_batch;
using testing::random_typed_graph;
using testing::random_weights;
using testing::reference_blocks;
using testing::TypedGraph;

std::vector<int64_t> distinct_seeds(int64_t n, int64_t count, uint64_t seed) {
  Rng rng(stream_key(seed, 6));
  std::set<int64_t> seen;
  std::vector<int64_t> seeds;
  while (static_cast<int64_t>(seeds.size()) < count) {
    int64_t v = static_cast<int64_t>(rng.below(n));
    if (seen.insert(v).second) seeds.push_back(v);
  }
  return seeds;
}

BlockOptions typed_options(std::vector<int64_t> fanouts,
                           std::vector<std::vector<int64_t>> relation_fanouts, uint64_t batch) {
  BlockOptions o;
  o.fanouts = sample::Fanouts(std::move(fanouts), std::move(relation_fanouts));
  o.key = {/*seed=*/3, /*epoch=*/2, batch};
  return o;
}

// Relation 3 of 4 has no edges; hop lists with uniform, per-relation and mixed hops.
const BlockOptions kTypedCases[] = {
    typed_options({}, {}, 0),
    typed_options({4}, {}, 1),
    typed_options({5, 3}, {}, 2),
    typed_options({5, 3}, {{2, 0, 7, 1}, {}}, 3),
    typed_options({-1, 2}, {{}, {-1, 1, 0, 0}}, 4),
    typed_options({10, 5, 2}, {{10, 3, 0, 5}, {1, 1, 1, 1}, {}}, 5),
    typed_options({0, 3}, {}, 6),
};

TEST(TypedBlocks, MatchReferenceForEveryModeAndFanoutList) {
  TypedGraph t = random_typed_graph(600, 4, 4, 6, 120, /*empty_relation=*/3, 21);
  std::vector<float> w = random_weights(t.g.num_entries(), 21);
  std::vector<int64_t> seeds = distinct_seeds(t.g.num_rows(), 25, 1);
  BlockBuilder builder;  // reused across batches on purpose
  for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
    for (Weighting wt : {Weighting::kUniform, Weighting::kEdgeWeight}) {
      LocalSampler sampler(t.view(w), {r, wt, /*threads=*/1, /*chunk=*/2048});
      for (size_t c = 0; c < std::size(kTypedCases); ++c) {
        SCOPED_TRACE(::testing::Message() << "case " << c);
        const BlockOptions& o = kTypedCases[c];
        expect_same_batch(builder.build(seeds, o, sampler),
                          reference_blocks(t.g, w, seeds, o, {r, wt}, &t));
      }
    }
  }
}

TEST(TypedBlocks, EtypesAlignWithIndicesAndGroupByRelation) {
  TypedGraph t = random_typed_graph(2000, 3, 5, 10, 200, -1, 22);
  std::set<std::tuple<int64_t, int64_t, int32_t>> edges;  // (dst, src, relation)
  for (int64_t v = 0; v < t.g.num_rows(); ++v) {
    for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e)
      edges.emplace(v, t.g.indices[e], t.relations[e]);
  }
  LocalSampler sampler(t.view(), {});
  std::vector<int64_t> seeds = distinct_seeds(t.g.num_rows(), 64, 2);
  SampledBatch batch =
      sample_blocks(seeds, typed_options({15, 10, 5}, {{}, {4, 0, 9}, {}}, 7), sampler);
  ASSERT_EQ(batch.blocks.size(), 3u);
  int64_t per_relation[3][3] = {};
  for (size_t h = 0; h < batch.blocks.size(); ++h) {
    const Block& b = batch.blocks[h];
    ASSERT_EQ(b.etypes.size(), b.indices.size());
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t dst = b.src_nodes[i];
      int64_t in_row[3] = {0, 0, 0};
      for (int64_t j = b.indptr[i]; j < b.indptr[i + 1]; ++j) {
        const int32_t r = b.etypes[j];
        ASSERT_TRUE(r >= 0 && r < 3);
        ASSERT_TRUE(edges.count({dst, b.src_nodes[b.indices[j]], r})) << "no such edge";
        if (j > b.indptr[i]) {
          ASSERT_LE(b.etypes[j - 1], r) << "row " << i << " of block " << h << " not grouped";
        }
        ++in_row[r];
      }
      const int64_t cap[3][3] = {{15, 15, 15}, {4, 0, 9}, {5, 5, 5}};
      for (int r = 0; r < 3; ++r) {
        ASSERT_LE(in_row[r], cap[h][r]);
        per_relation[h][r] += in_row[r];
      }
    }
  }
  EXPECT_EQ(per_relation[1][1], 0);  // fanout 0 for relation 1 at hop 1
  EXPECT_GT(per_relation[1][0], 0);
  EXPECT_GT(per_relation[1][2], 0);
  EXPECT_GT(per_relation[0][1], 0);
}

TEST(TypedBlocks, IdenticalForAnyThreadCount) {
  TypedGraph t = random_typed_graph(5000, 3, 5, 10, 300, -1, 23);
  std::vector<int64_t> seeds = distinct_seeds(t.g.num_rows(), 100, 3);
  BlockOptions o = typed_options({10, 5, 3}, {{10, 2, 30}, {}, {1, -1, 2}}, 4);
  LocalSampler one(t.view(), {Replacement::kWithout, Weighting::kUniform, 1, 2048});
  SampledBatch expected = sample_blocks(seeds, o, one);
  for (int threads : {2, 3}) {
    LocalSampler many(t.view(), {Replacement::kWithout, Weighting::kUniform, threads, 5});
    expect_same_batch(sample_blocks(seeds, o, many), expected);
  }
}

TEST(TypedBlocks, UntypedGraphHasNoEtypes) {
  graph::Csr g = testing::random_graph(300, 6, 0, 0, 24);
  LocalSampler sampler(csc_view_of(g), {});
  std::vector<int64_t> seeds = distinct_seeds(g.num_rows(), 10, 4);
  SampledBatch batch = sample_blocks(seeds, typed_options({5, 5}, {}, 0), sampler);
  for (const Block& b : batch.blocks) {
    EXPECT_TRUE(b.etypes.empty());
    EXPECT_GT(b.num_edges(), 0);
  }
}

TEST(TypedBlocks, RejectsBadRelationFanouts) {
  TypedGraph t = random_typed_graph(100, 2, 4, 0, 0, -1, 25);
  LocalSampler sampler(t.view(), {});
  std::vector<int64_t> seeds{1, 2};
  try {
    sample_blocks(seeds, typed_options({2, 2}, {{1, 1}}, 0), sampler);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "sample: relation fanouts are given for 1 hops, fanouts for 2");
  }
  EXPECT_THROW(sample_blocks(seeds, typed_options({2}, {{1, -2}}, 0), sampler), Error);
  // Fanouts for one relation of a graph that has two (every node: some have relation 1).
  std::vector<int64_t> all(100);
  for (int64_t v = 0; v < 100; ++v) all[v] = v;
  EXPECT_THROW(sample_blocks(all, typed_options({2}, {{1}}, 0), sampler), Error);
}

}  // namespace
}  // namespace partita::sample
