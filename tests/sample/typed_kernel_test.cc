// The kernel on typed views (neighbor_kernel.h): each relation's run sampled on its own,
// checked exactly against the reference re-derived from the contract.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "partita/core/error.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/neighbor_kernel.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

using testing::make_typed_part;
using testing::random_typed_graph;
using testing::random_weights;
using testing::reference_typed_sample;
using testing::TypedFanouts;
using testing::TypedGraph;
using testing::TypedPart;

const Replacement kModesR[] = {Replacement::kWithout, Replacement::kWith};
const Weighting kModesW[] = {Weighting::kUniform, Weighting::kEdgeWeight};

// Node i's picks as (neighbor, relation) pairs.
std::vector<std::pair<int64_t, int32_t>> picks(const NeighborSample& s, int64_t i) {
  int64_t b = 0;
  for (int64_t j = 0; j < i; ++j) b += s.counts[j];
  std::vector<std::pair<int64_t, int32_t>> out;
  for (int64_t e = b; e < b + s.counts[i]; ++e) out.emplace_back(s.neighbors[e], s.relations[e]);
  return out;
}

std::vector<int64_t> all_nodes(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

KernelOptions kernel(const TypedFanouts& f, Replacement r, Weighting w, int threads = 1,
                     int64_t chunk = 2048) {
  KernelOptions o;
  o.fanout = f.fanout;
  o.relation_fanouts = ArrayView<const int64_t>(f.per_relation);
  o.replacement = r;
  o.weighting = w;
  o.threads = threads;
  o.chunk = chunk;
  return o;
}

// Every node of `nodes` sampled by the kernel equals the reference.
void expect_reference(const TypedGraph& t, const std::vector<float>& w, const CscView& view,
                      const std::vector<int64_t>& nodes, uint64_t hop, const TypedFanouts& f,
                      Replacement r, Weighting wt, const std::vector<int64_t>& stream_ids = {}) {
  NeighborSample s;
  sample_neighbors(view, nodes, hop, kernel(f, r, wt), &s);
  ASSERT_EQ(s.counts.size(), nodes.size());
  ASSERT_EQ(s.relations.size(), s.neighbors.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(picks(s, static_cast<int64_t>(i)),
              reference_typed_sample(t, w, nodes[i], hop, f, r, wt, stream_ids))
        << "node " << nodes[i];
  }
}

// Uniform fanouts (Floyd's three set sizes, hub rows of relation 0 have degree 300) and
// per-relation ones, with 0 and -1 among them. Relation 3 has no edges at all.
const TypedFanouts kFanoutCases[] = {
    {-1, {}},
    {0, {}},
    {1, {}},
    {5, {}},
    {16, {}},
    {17, {}},
    {129, {}},
    {1000, {}},
    {7, {0, 5, -1, 2}},
    {7, {129, 0, 3, 0}},
    {7, {2, 40, 17, 1}},
    {7, {-1, -1, 0, 6}},
};

TEST(TypedKernel, MatchesReferenceForEveryModeAndFanout) {
  for (uint64_t seed : {1, 2}) {
    TypedGraph t = random_typed_graph(400, 4, 6, 5, 300, /*empty_relation=*/3, seed);
    std::vector<float> w = random_weights(t.g.num_entries(), seed);
    std::vector<int64_t> nodes = all_nodes(t.g.num_rows());
    nodes.push_back(3);  // a duplicate gets the same sample
    const uint64_t hop = hop_key({seed, 4, 9}, 1);
    for (Replacement r : kModesR) {
      for (Weighting wt : kModesW) {
        for (const TypedFanouts& f : kFanoutCases) {
          SCOPED_TRACE(::testing::Message()
                       << "seed " << seed << " k " << f.fanout << " per-relation "
                       << f.per_relation.size() << " with " << (r == Replacement::kWith)
                       << " weighted " << (wt == Weighting::kEdgeWeight));
          expect_reference(t, w, t.view(w), nodes, hop, f, r, wt);
        }
      }
    }
  }
}

TEST(TypedKernel, SingleRelationGraph) {
  TypedGraph t = random_typed_graph(300, 1, 10, 3, 200, -1, 3);
  std::vector<float> w = random_weights(t.g.num_entries(), 3);
  for (Replacement r : kModesR) {
    for (Weighting wt : kModesW) {
      for (const TypedFanouts& f : {TypedFanouts{4, {}}, TypedFanouts{1, {25}}}) {
        expect_reference(t, w, t.view(w), all_nodes(300), 12, f, r, wt);
      }
    }
  }
}

TEST(TypedKernel, PicksFollowTheirRelationsAndFanouts) {
  TypedGraph t = random_typed_graph(500, 3, 8, 0, 0, -1, 4);
  std::set<std::tuple<int64_t, int64_t, int32_t>> edges;  // (dst, src, relation)
  for (int64_t v = 0; v < t.g.num_rows(); ++v) {
    for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e)
      edges.emplace(v, t.g.indices[e], t.relations[e]);
  }
  const std::vector<int64_t> per_relation{3, 0, 5};
  NeighborSample s;
  std::vector<int64_t> nodes = all_nodes(t.g.num_rows());
  sample_neighbors(t.view(), nodes, 5,
                   kernel({9, per_relation}, Replacement::kWithout, Weighting::kUniform), &s);
  int64_t sampled_by_relation[3] = {0, 0, 0};
  for (int64_t v : nodes) {
    std::vector<std::pair<int64_t, int32_t>> got = picks(s, v);
    int64_t per[3] = {0, 0, 0}, degree[3] = {0, 0, 0};
    for (int64_t e = t.g.indptr[v]; e < t.g.indptr[v + 1]; ++e) ++degree[t.relations[e]];
    for (size_t j = 0; j < got.size(); ++j) {
      ASSERT_TRUE(edges.count({v, got[j].first, got[j].second})) << "no such edge into " << v;
      if (j > 0) {
        ASSERT_LE(got[j - 1].second, got[j].second) << "not grouped by relation";
      }
      ++per[got[j].second];
    }
    for (int r = 0; r < 3; ++r) {
      ASSERT_EQ(per[r], std::min(per_relation[r], degree[r])) << v << " relation " << r;
      sampled_by_relation[r] += per[r];
    }
  }
  EXPECT_GT(sampled_by_relation[0], 0);
  EXPECT_EQ(sampled_by_relation[1], 0);  // fanout 0
  EXPECT_GT(sampled_by_relation[2], 0);
}

TEST(TypedKernel, IdenticalForAnyThreadCountAndChunkSize) {
  TypedGraph t = random_typed_graph(3000, 3, 6, 20, 300, -1, 7);
  std::vector<float> w = random_weights(t.g.num_entries(), 7);
  CscView view = t.view(w);
  std::vector<int64_t> nodes = all_nodes(t.g.num_rows());
  for (Replacement r : kModesR) {
    for (Weighting wt : kModesW) {
      for (const TypedFanouts& f :
           {TypedFanouts{-1, {}}, TypedFanouts{4, {}}, TypedFanouts{0, {100, 2, -1}}}) {
        NeighborSample one;
        sample_neighbors(view, nodes, 3, kernel(f, r, wt, 1, 2048), &one);
        for (int threads : {1, 2, 3}) {
          for (int64_t chunk : {1, 7, 1000}) {
            NeighborSample many;
            sample_neighbors(view, nodes, 3, kernel(f, r, wt, threads, chunk), &many);
            ASSERT_EQ(many.counts, one.counts) << threads << " " << chunk;
            ASSERT_EQ(many.neighbors, one.neighbors) << threads << " " << chunk;
            ASSERT_EQ(many.relations, one.relations) << threads << " " << chunk;
          }
        }
      }
    }
  }
}

TEST(TypedKernel, OwnerPartitionViewEqualsWholeGraphView) {
  TypedGraph t = random_typed_graph(800, 3, 6, 4, 120, -1, 9);
  std::vector<float> w = random_weights(t.g.num_entries(), 9);
  std::vector<int64_t> ids(static_cast<size_t>(t.g.num_rows()));  // "dataset ids": reversed
  for (int64_t v = 0; v < t.g.num_rows(); ++v) ids[v] = t.g.num_rows() - 1 - v;
  TypedPart a = make_typed_part(t, w, ids, 0, 333), b = make_typed_part(t, w, ids, 333, 800);
  validate(a.view, "part 0");
  validate(b.view, "part 1");
  CscView whole = t.view(w);
  whole.stream_ids = ArrayView<const int64_t>(ids);
  for (Replacement r : kModesR) {
    for (Weighting wt : kModesW) {
      for (const TypedFanouts& f : {TypedFanouts{3, {}}, TypedFanouts{3, {-1, 0, 40}}}) {
        expect_reference(t, w, whole, all_nodes(t.g.num_rows()), 21, f, r, wt, ids);
        for (int64_t v = 0; v < t.g.num_rows(); ++v) {
          std::vector<int64_t> one{v};
          NeighborSample from_whole, from_owner;
          sample_neighbors(whole, one, 21, kernel(f, r, wt), &from_whole);
          sample_neighbors(v < 333 ? a.view : b.view, one, 21, kernel(f, r, wt), &from_owner);
          ASSERT_EQ(from_owner.neighbors, from_whole.neighbors) << v;
          ASSERT_EQ(from_owner.relations, from_whole.relations) << v;
        }
      }
    }
  }
}

TEST(TypedKernel, RelationStreamsAreIndependentOfOtherRelations) {
  // Changing relation 1's fanout leaves relation 0's and 2's picks as they were.
  TypedGraph t = random_typed_graph(300, 3, 10, 0, 0, -1, 10);
  std::vector<int64_t> nodes = all_nodes(t.g.num_rows());
  NeighborSample a, b;
  sample_neighbors(t.view(), nodes, 8,
                   kernel({0, {4, 1, 6}}, Replacement::kWithout, Weighting::kUniform), &a);
  sample_neighbors(t.view(), nodes, 8,
                   kernel({0, {4, 9, 6}}, Replacement::kWithout, Weighting::kUniform), &b);
  for (int64_t v : nodes) {
    auto keep = [](std::vector<std::pair<int64_t, int32_t>> p) {
      p.erase(std::remove_if(p.begin(), p.end(), [](auto& x) { return x.second == 1; }), p.end());
      return p;
    };
    ASSERT_EQ(keep(picks(a, v)), keep(picks(b, v))) << v;
  }
}

TEST(TypedKernel, UntypedPathLeavesRelationsEmpty) {
  graph::Csr g = testing::random_graph(200, 5, 0, 0, 11);
  NeighborSample s;
  s.relations = {1, 2, 3};  // stale content is replaced
  std::vector<int64_t> nodes = all_nodes(200);
  KernelOptions o;
  o.fanout = 3;
  sample_neighbors(csc_view_of(g), nodes, 1, o, &s);
  EXPECT_TRUE(s.relations.empty());
  EXPECT_FALSE(s.neighbors.empty());
}

TEST(TypedKernel, RejectsBadRelationsAndFanouts) {
  TypedGraph t = random_typed_graph(50, 3, 4, 0, 0, -1, 12);
  std::vector<int64_t> nodes = all_nodes(50);
  NeighborSample s;
  const std::vector<int64_t> two{1, 1}, bad{1, -2, 1};
  // A row holding relation 2 when fanouts are given for relations 0 and 1 only.
  try {
    sample_neighbors(t.view(), nodes, 1, kernel({1, two}, kModesR[0], kModesW[0]), &s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fanouts are given for 2 relations"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(sample_neighbors(t.view(), nodes, 1, kernel({1, bad}, kModesR[0], kModesW[0]), &s),
               Error);
  TypedGraph negative = t;
  negative.relations[0] = -1;
  EXPECT_THROW(
      sample_neighbors(negative.view(), nodes, 1, kernel({1, {}}, kModesR[0], kModesW[0]), &s),
      Error);
  // Per-relation fanouts on an untyped view: an error if it has edges, nothing to do if not.
  const std::vector<int64_t> three{1, 1, 1};
  EXPECT_THROW(
      sample_neighbors(csc_view_of(t.g), nodes, 1, kernel({1, three}, kModesR[0], kModesW[0]), &s),
      Error);
  graph::Csr edgeless;
  edgeless.indptr.assign(51, 0);
  sample_neighbors(csc_view_of(edgeless), nodes, 1, kernel({1, three}, kModesR[0], kModesW[0]), &s);
  EXPECT_EQ(s.counts, std::vector<int64_t>(50, 0));
  // validate: one relation id per index.
  CscView short_relations = t.view();
  short_relations.relations = short_relations.relations.subview(0, 3);
  EXPECT_THROW(validate(short_relations, "relations"), Error);
  EXPECT_THROW(LocalSampler(short_relations, {}), Error);
}

}  // namespace
}  // namespace partita::sample
