#include "partita/graph/csr.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/random.h"

namespace partita::graph {
namespace {

std::vector<int64_t> row(const Csr& c, int64_t v) {
  return {c.indices.begin() + c.indptr[v], c.indices.begin() + c.indptr[v + 1]};
}

TEST(BuildInEdges, DirectedDropsSelfLoopsAndDuplicates) {
  // 0->1, 2->1, 2->1 (dup), 1->1 (loop), 3->0, 1->2
  std::vector<int64_t> pairs{0, 1, 2, 1, 2, 1, 1, 1, 3, 0, 1, 2};
  InEdgeResult r = build_in_edges(4, edge_stream_of(pairs), {false, 1, "edges"});
  EXPECT_EQ(r.input_edges, 6);
  EXPECT_EQ(r.self_loops_dropped, 1);
  EXPECT_EQ(r.duplicates_dropped, 1);
  EXPECT_EQ(r.in_edges.indptr, (std::vector<int64_t>{0, 1, 3, 4, 4}));
  EXPECT_EQ(row(r.in_edges, 0), (std::vector<int64_t>{3}));
  EXPECT_EQ(row(r.in_edges, 1), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(row(r.in_edges, 2), (std::vector<int64_t>{1}));
  EXPECT_TRUE(row(r.in_edges, 3).empty());
}

TEST(BuildInEdges, UndirectedAddsReverseEdgesOnce) {
  std::vector<int64_t> pairs{0, 1, 1, 0, 1, 2};
  InEdgeResult r = build_in_edges(3, edge_stream_of(pairs), {true, 2, "edges"});
  EXPECT_EQ(row(r.in_edges, 0), (std::vector<int64_t>{1}));
  EXPECT_EQ(row(r.in_edges, 1), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(row(r.in_edges, 2), (std::vector<int64_t>{1}));
  EXPECT_EQ(r.duplicates_dropped, 2);
}

TEST(BuildInEdges, OutOfRangeIdNamesSourceAndEdge) {
  std::vector<int64_t> pairs{0, 1, 5, 0};
  try {
    build_in_edges(3, edge_stream_of(pairs), {false, 1, "x/edges.npy"});
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_STREQ(e.what(), "x/edges.npy: edge 1 (5, 0) has a node id outside [0, 3)");
  }
  std::vector<int64_t> negative{0, -1};
  EXPECT_THROW(build_in_edges(3, edge_stream_of(negative), {false, 1, "e"}), FormatError);
}

TEST(BuildInEdges, MatchesBruteForceOnRandomGraphForAnyThreadCount) {
  const int64_t n = 3000;
  Rng rng(stream_key(3));
  std::vector<int64_t> pairs;
  std::set<std::pair<int64_t, int64_t>> expected;  // (dst, src)
  for (int i = 0; i < 40000; ++i) {
    int64_t s = static_cast<int64_t>(rng.below(n)), d = static_cast<int64_t>(rng.below(n / 10));
    pairs.push_back(s);
    pairs.push_back(d);
    if (s != d) expected.insert({d, s});
  }
  Csr first;
  for (int threads : {1, 2}) {
    InEdgeResult r = build_in_edges(n, edge_stream_of(pairs), {false, threads, "e"});
    std::set<std::pair<int64_t, int64_t>> got;
    for (int64_t d = 0; d < n; ++d)
      for (int64_t s : row(r.in_edges, d)) got.insert({d, s});
    EXPECT_EQ(got, expected);
    EXPECT_EQ(r.in_edges.num_entries(), static_cast<int64_t>(expected.size()));
    if (threads == 1)
      first = r.in_edges;
    else
      EXPECT_EQ(first.indices, r.in_edges.indices);
  }
}

TEST(Symmetrize, IsUnionOfInAndOutNeighbors) {
  std::vector<int64_t> pairs{0, 1, 1, 0, 2, 1, 3, 0};
  Csr in = build_in_edges(4, edge_stream_of(pairs), {false, 1, "e"}).in_edges;
  CsrOf<int32_t> adj = symmetrize_int32(in, 1);
  EXPECT_EQ(adj.indptr, (std::vector<int32_t>{0, 2, 4, 5, 6}));
  EXPECT_EQ(adj.indices, (std::vector<int32_t>{1, 3, 0, 2, 1, 0}));
}

}  // namespace
}  // namespace partita::graph
