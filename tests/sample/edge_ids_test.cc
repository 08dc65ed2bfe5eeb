// Edge ids from the sampler (issue 41): with KernelOptions::edge_ids every sampled neighbor
// comes with the id of the entry it was read from (view.first_edge + its position), the
// sample itself unchanged. Brute force over multigraphs (a pair stored twice is two edges),
// typed and untyped, every mode, temporal too, and through LocalSampler and BlockBuilder.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "partita/core/error.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/local_sampler.h"
#include "temporal_test_util.h"

namespace partita::sample {
namespace {

using testing::TimedGraph;

constexpr int64_t kFirstEdge = 1000;  // not 0: ids are offsets from the view's first edge

struct Mode {
  Replacement replacement;
  Weighting weighting;
  Temporal temporal;
  bool strict;
};

std::vector<Mode> all_modes() {
  std::vector<Mode> modes;
  for (Replacement r : {Replacement::kWithout, Replacement::kWith})
    for (Weighting w : {Weighting::kUniform, Weighting::kEdgeWeight})
      modes.push_back({r, w, Temporal::kNone, false});
  for (const testing::TemporalMode& m : testing::all_temporal_modes())
    modes.push_back({m.replacement, m.weighting, m.temporal, m.strict});
  return modes;
}

std::string describe(const Mode& m, int64_t fanout, int threads) {
  return "replacement " + std::to_string(static_cast<int>(m.replacement)) + " weighting " +
         std::to_string(static_cast<int>(m.weighting)) + " temporal " +
         std::to_string(static_cast<int>(m.temporal)) + (m.strict ? " strict" : "") + " fanout " +
         std::to_string(fanout) + " threads " + std::to_string(threads);
}

// Every sampled (node, neighbor, edge id) is an entry of the node's row at that id, of the
// neighbor's relation (typed) and allowed at the node's time (temporal); without
// replacement no id repeats within a node; and the sample equals the one without ids.
void check_graph(const TimedGraph& t) {
  std::vector<int64_t> ids(static_cast<size_t>(t.g.num_entries()));
  for (size_t e = 0; e < ids.size(); ++e) ids[e] = kFirstEdge + static_cast<int64_t>(e);
  CscView view = t.view();
  view.first_edge = kFirstEdge;
  view.edge_ids = ids;
  validate(view, "test");
  std::vector<int64_t> nodes, node_times;
  testing::temporal_seeds(t.g.num_rows(), 300, testing::kTimeRange, 3, &nodes, &node_times);
  int64_t checked = 0;
  for (const Mode& m : all_modes()) {
    for (int64_t fanout : {-1, 0, 3, 40}) {
      for (int threads : {1, 3}) {
        KernelOptions o;
        o.fanout = fanout;
        o.replacement = m.replacement;
        o.weighting = m.weighting;
        o.temporal = m.temporal;
        o.strict = m.strict;
        o.threads = threads;
        o.chunk = 37;
        const ArrayView<const int64_t> times =
            m.temporal == Temporal::kNone ? ArrayView<const int64_t>() : node_times;
        NeighborSample plain, with;
        sample_neighbors(view, nodes, times, 99, o, &plain);
        o.edge_ids = true;
        sample_neighbors(view, nodes, times, 99, o, &with);
        const std::string at = describe(m, fanout, threads);
        ASSERT_TRUE(plain.edge_ids.empty()) << at;
        ASSERT_EQ(with.counts, plain.counts) << at;
        ASSERT_EQ(with.neighbors, plain.neighbors) << at;
        ASSERT_EQ(with.relations, plain.relations) << at;
        ASSERT_EQ(with.edge_ids.size(), with.neighbors.size()) << at;
        int64_t j = 0;
        for (size_t i = 0; i < nodes.size(); ++i) {
          const int64_t v = nodes[i];
          std::set<int64_t> seen;
          for (int64_t c = 0; c < with.counts[i]; ++c, ++j) {
            const int64_t e = with.edge_ids[j] - kFirstEdge;
            ASSERT_TRUE(e >= t.g.indptr[v] && e < t.g.indptr[v + 1])
                << at << ": node " << v << " got edge " << with.edge_ids[j] << " of another row";
            ASSERT_EQ(t.g.indices[e], with.neighbors[j]) << at << ": node " << v;
            if (!t.relations.empty()) {
              ASSERT_EQ(t.relations[e], with.relations[j]) << at;
            }
            if (m.temporal != Temporal::kNone) {
              ASSERT_TRUE(testing::allowed(t.times[e], node_times[i], m.strict)) << at;
            }
            if (m.weighting == Weighting::kEdgeWeight) {
              ASSERT_TRUE(testing::positive_weight(t.w[e])) << at;
            }
            if (m.replacement == Replacement::kWithout) {
              ASSERT_TRUE(seen.insert(e).second) << at << ": node " << v << " took edge twice";
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(EdgeIds, KernelReturnsTheSampledEntriesUntyped) {
  check_graph(testing::untyped_graph(/*repeats=*/true, 5));
}

TEST(EdgeIds, KernelReturnsTheSampledEntriesTyped) {
  check_graph(testing::typed_graph(/*repeats=*/true, 6));
}

TEST(EdgeIds, KernelRefusesAViewWithoutThem) {
  const TimedGraph t = testing::untyped_graph(false, 7);
  KernelOptions o;
  o.fanout = 2;
  o.edge_ids = true;
  NeighborSample out;
  const std::vector<int64_t> nodes{0, 1};
  EXPECT_THROW(sample_neighbors(t.view(), nodes, 1, o, &out), Error);
  CscView bad = t.view();
  std::vector<int64_t> ids(static_cast<size_t>(t.g.num_entries()), 0);
  bad.first_edge = 4;
  bad.edge_ids = ids;  // does not start at first_edge
  EXPECT_THROW(validate(bad, "test"), Error);
}

// LocalSampler builds the ids itself; blocks carry them aligned with their indices, and an
// edge of a block joins the entry its id names.
TEST(EdgeIds, BlocksCarryTheIdsOfTheirEdges) {
  for (bool typed : {false, true}) {
    const TimedGraph t = typed ? testing::typed_graph(true, 8) : testing::untyped_graph(true, 8);
    CscView view = t.view();
    view.first_edge = kFirstEdge;
    LocalSamplerOptions plain_options;
    LocalSamplerOptions id_options;
    id_options.edge_ids = true;
    LocalSampler plain(view, plain_options), with(view, id_options);
    BlockOptions options;
    options.fanouts.hops = {4, 3};
    options.key = {1, 2, 3};
    const std::vector<int64_t> seeds{0, 7, 9, 30, 44, 101};
    const SampledBatch a = sample_blocks(seeds, options, plain);
    const SampledBatch b = sample_blocks(seeds, options, with);
    ASSERT_EQ(a.blocks.size(), b.blocks.size());
    int64_t edges = 0;
    for (size_t l = 0; l < b.blocks.size(); ++l) {
      const Block& x = a.blocks[l];
      const Block& y = b.blocks[l];
      EXPECT_TRUE(x.edge_ids.empty());
      EXPECT_EQ(x.indptr, y.indptr);
      EXPECT_EQ(x.indices, y.indices);
      EXPECT_EQ(x.src_nodes, y.src_nodes);
      EXPECT_EQ(x.etypes, y.etypes);
      ASSERT_EQ(y.edge_ids.size(), y.indices.size());
      for (int64_t d = 0; d < y.num_dst; ++d) {
        const int64_t dst = y.src_nodes[d];
        for (int64_t k = y.indptr[d]; k < y.indptr[d + 1]; ++k, ++edges) {
          const int64_t e = y.edge_ids[k] - kFirstEdge;
          ASSERT_TRUE(e >= t.g.indptr[dst] && e < t.g.indptr[dst + 1]);
          ASSERT_EQ(t.g.indices[e], y.src_nodes[y.indices[k]]);
        }
      }
    }
    EXPECT_GT(edges, 20);
  }
}

}  // namespace
}  // namespace partita::sample
