#include <gtest/gtest.h>

#include <set>

#include "partita/core/error.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/neighbor_kernel.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

using testing::random_graph;
using testing::random_weights;
using testing::reference_sample;

const Replacement kModesR[] = {Replacement::kWithout, Replacement::kWith};
const Weighting kModesW[] = {Weighting::kUniform, Weighting::kEdgeWeight};
// Floyd's algorithm keeps its taken set three ways: k <= 16, k <= 128, larger (hub rows
// have degree 300).
const int64_t kFanouts[] = {-1, 0, 1, 2, 5, 15, 16, 17, 40, 128, 129, 250, 1000};

std::vector<int64_t> all_nodes(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<int64_t> slice(const NeighborSample& s, int64_t i) {
  int64_t b = 0;
  for (int64_t j = 0; j < i; ++j) b += s.counts[j];
  return {s.neighbors.begin() + b, s.neighbors.begin() + b + s.counts[i]};
}

KernelOptions kernel(int64_t k, Replacement r, Weighting w, int threads = 1, int64_t chunk = 2048) {
  KernelOptions o;
  o.fanout = k;
  o.replacement = r;
  o.weighting = w;
  o.threads = threads;
  o.chunk = chunk;
  return o;
}

TEST(NeighborKernel, MatchesReferenceForEveryModeAndFanout) {
  for (uint64_t seed : {1, 2, 3}) {
    graph::Csr g = random_graph(400, 12, 5, 300, seed);
    std::vector<float> w = random_weights(g.num_entries(), seed);
    CscView view = csc_view_of(g, w);
    std::vector<int64_t> nodes = all_nodes(g.num_rows());
    nodes.push_back(3);  // a duplicate gets the same sample
    const uint64_t hop = hop_key({seed, 4, 9}, 1);
    for (Replacement r : kModesR) {
      for (Weighting wt : kModesW) {
        for (int64_t k : kFanouts) {
          SCOPED_TRACE(::testing::Message()
                       << "seed " << seed << " k " << k << " with " << (r == Replacement::kWith)
                       << " weighted " << (wt == Weighting::kEdgeWeight));
          NeighborSample s;
          sample_neighbors(view, nodes, hop, kernel(k, r, wt), &s);
          ASSERT_EQ(s.counts.size(), nodes.size());
          int64_t total = 0;
          for (size_t i = 0; i < nodes.size(); ++i) {
            ASSERT_EQ(slice(s, i), reference_sample(g, w, nodes[i], hop, k, r, wt)) << nodes[i];
            total += s.counts[i];
          }
          EXPECT_EQ(total, static_cast<int64_t>(s.neighbors.size()));
        }
      }
    }
  }
}

// A permutation of [0, n): stand-in for dataset ids before renumbering.
std::vector<int64_t> shuffled_ids(int64_t n, uint64_t seed) {
  std::vector<int64_t> ids = all_nodes(n);
  Rng rng(stream_key(seed, 123));
  for (int64_t i = n - 1; i > 0; --i) std::swap(ids[i], ids[rng.below(i + 1)]);
  return ids;
}

TEST(NeighborKernel, StreamIdsKeyTheStreams) {
  graph::Csr g = random_graph(300, 12, 3, 100, 4);
  std::vector<float> w = random_weights(g.num_entries(), 4);
  std::vector<int64_t> ids = shuffled_ids(g.num_rows(), 4);
  CscView view = csc_view_of(g, w);
  view.stream_ids = ArrayView<const int64_t>(ids);
  std::vector<int64_t> nodes = all_nodes(g.num_rows());
  for (Replacement r : kModesR) {
    for (Weighting wt : kModesW) {
      for (int64_t k : {1, 5, 40}) {
        NeighborSample s;
        sample_neighbors(view, nodes, 77, kernel(k, r, wt), &s);
        for (int64_t v : nodes) {
          ASSERT_EQ(slice(s, v), reference_sample(g, w, v, 77, k, r, wt, ids)) << v;
        }
      }
    }
  }
  // A node keyed by id x draws what node x draws without stream ids (same row order).
  graph::Csr star = testing::star_graph(30);
  std::vector<int64_t> center{0}, key_as_5{5};
  CscView keyed = csc_view_of(star);
  std::vector<int64_t> star_ids(star.num_rows(), 0);
  star_ids[0] = 5;
  keyed.stream_ids = ArrayView<const int64_t>(star_ids);
  NeighborSample a;
  sample_neighbors(keyed, center, 9, kernel(4, kModesR[0], kModesW[0]), &a);
  EXPECT_EQ(a.neighbors, reference_sample(star, {}, 0, 9, 4, kModesR[0], kModesW[0], star_ids));
  EXPECT_NE(a.neighbors, reference_sample(star, {}, 0, 9, 4, kModesR[0], kModesW[0]));
}

TEST(NeighborKernel, WithoutReplacementGivesMinOfFanoutAndDegreeDistinctNeighbors) {
  graph::Csr g = random_graph(500, 20, 10, 200, 5);
  CscView view = csc_view_of(g);
  std::vector<int64_t> nodes = all_nodes(g.num_rows());
  for (int64_t k : {1, 3, 10, 16, 17, 33, 64, 150, 199, 500}) {
    NeighborSample s;
    sample_neighbors(view, nodes, 17, kernel(k, Replacement::kWithout, Weighting::kUniform), &s);
    for (int64_t v : nodes) {
      std::vector<int64_t> got = slice(s, v);
      ASSERT_EQ(static_cast<int64_t>(got.size()), std::min(k, g.degree(v)));
      std::set<int64_t> row(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]);
      ASSERT_TRUE(std::is_sorted(got.begin(), got.end()));  // stored order
      ASSERT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size()) << "repeat";
      for (int64_t u : got) ASSERT_TRUE(row.count(u));
    }
  }
}

TEST(NeighborKernel, WithReplacementGivesExactlyFanoutOrNothingForIsolatedNodes) {
  graph::Csr g = random_graph(300, 3, 0, 0, 6);
  CscView view = csc_view_of(g);
  std::vector<int64_t> nodes = all_nodes(g.num_rows());
  NeighborSample s;
  sample_neighbors(view, nodes, 5, kernel(7, Replacement::kWith, Weighting::kUniform), &s);
  int64_t isolated = 0;
  for (int64_t v : nodes) {
    EXPECT_EQ(s.counts[v], g.degree(v) > 0 ? 7 : 0);
    isolated += g.degree(v) == 0;
  }
  EXPECT_GT(isolated, 0);
}

TEST(NeighborKernel, IdenticalForAnyThreadCountAndChunkSize) {
  graph::Csr g = random_graph(3000, 10, 20, 300, 7);
  std::vector<float> w = random_weights(g.num_entries(), 7);
  CscView view = csc_view_of(g, w);
  std::vector<int64_t> nodes = all_nodes(g.num_rows());
  for (Replacement r : kModesR) {
    for (Weighting wt : kModesW) {
      for (int64_t k : {-1, 4, 50, 100}) {  // 100 exceeds the direct output bound
        NeighborSample one;
        sample_neighbors(view, nodes, 3, kernel(k, r, wt, 1, 2048), &one);
        for (int threads : {1, 2, 3}) {
          for (int64_t chunk : {1, 7, 1000}) {
            NeighborSample many;
            sample_neighbors(view, nodes, 3, kernel(k, r, wt, threads, chunk), &many);
            ASSERT_EQ(many.counts, one.counts) << threads << " " << chunk;
            ASSERT_EQ(many.neighbors, one.neighbors) << threads << " " << chunk;
          }
        }
      }
    }
  }
}

TEST(NeighborKernel, NodeAloneEqualsNodeInsideABiggerFrontier) {
  graph::Csr g = random_graph(1000, 15, 5, 100, 8);
  CscView view = csc_view_of(g);
  std::vector<int64_t> frontier = all_nodes(g.num_rows());
  std::reverse(frontier.begin(), frontier.end());
  NeighborSample big;
  KernelOptions o = kernel(5, Replacement::kWithout, Weighting::kUniform, 2, 64);
  sample_neighbors(view, frontier, 11, o, &big);
  for (int64_t i = 0; i < static_cast<int64_t>(frontier.size()); i += 37) {
    NeighborSample alone;
    std::vector<int64_t> one{frontier[i]};
    sample_neighbors(view, one, 11, o, &alone);
    EXPECT_EQ(alone.neighbors, slice(big, i));
  }
}

// Rows [0, m) and [m, n) as two partitions: indptr rebased to 0, indices still global.
struct Part {
  std::vector<int64_t> indptr, indices;
  std::vector<float> weights;
  std::vector<int64_t> stream_ids;
  CscView view;
};

Part make_part(const graph::Csr& g, const std::vector<float>& w, const std::vector<int64_t>& ids,
               int64_t first, int64_t end) {
  Part p;
  const int64_t b = g.indptr[first];
  for (int64_t r = first; r <= end; ++r) p.indptr.push_back(g.indptr[r] - b);
  p.indices.assign(g.indices.begin() + b, g.indices.begin() + g.indptr[end]);
  p.weights.assign(w.begin() + b, w.begin() + g.indptr[end]);
  p.view.indptr = ArrayView<const int64_t>(p.indptr);
  p.view.indices = ArrayView<const int64_t>(p.indices);
  p.view.weights = ArrayView<const float>(p.weights);
  p.stream_ids.assign(ids.begin() + first, ids.begin() + end);
  p.view.stream_ids = ArrayView<const int64_t>(p.stream_ids);
  p.view.first_row = first;
  return p;
}

TEST(NeighborKernel, OwnerPartitionViewEqualsWholeGraphView) {
  graph::Csr g = random_graph(800, 12, 4, 120, 9);
  std::vector<float> w = random_weights(g.num_entries(), 9);
  std::vector<int64_t> ids = shuffled_ids(g.num_rows(), 9);
  Part a = make_part(g, w, ids, 0, 333), b = make_part(g, w, ids, 333, 800);
  validate(a.view, "part 0");
  validate(b.view, "part 1");
  CscView whole = csc_view_of(g, w);
  whole.stream_ids = ArrayView<const int64_t>(ids);
  for (Replacement r : kModesR) {
    for (Weighting wt : kModesW) {
      for (int64_t k : {-1, 3, 40}) {
        for (int64_t v = 0; v < g.num_rows(); ++v) {
          std::vector<int64_t> one{v};
          NeighborSample from_whole, from_owner;
          sample_neighbors(whole, one, 21, kernel(k, r, wt), &from_whole);
          sample_neighbors(v < 333 ? a.view : b.view, one, 21, kernel(k, r, wt), &from_owner);
          ASSERT_EQ(from_owner.neighbors, from_whole.neighbors) << v;
        }
      }
    }
  }
  std::vector<int64_t> foreign{500};
  NeighborSample s;
  EXPECT_THROW(sample_neighbors(a.view, foreign, 1, kernel(3, kModesR[0], kModesW[0]), &s), Error);
}

TEST(NeighborKernel, RejectsBadInput) {
  graph::Csr g = random_graph(50, 4, 0, 0, 10);
  CscView view = csc_view_of(g);
  NeighborSample s;
  std::vector<int64_t> bad{3, 50};
  try {
    sample_neighbors(view, bad, 1, kernel(3, Replacement::kWithout, Weighting::kUniform), &s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "sample: node 50 is outside the rows [0, 50) of this view");
  }
  std::vector<int64_t> negative{-1};
  EXPECT_THROW(sample_neighbors(view, negative, 1, kernel(-1, kModesR[0], kModesW[0]), &s), Error);
  std::vector<int64_t> ok{1};
  EXPECT_THROW(sample_neighbors(view, ok, 1, kernel(-2, kModesR[0], kModesW[0]), &s), Error);
  EXPECT_THROW(sample_neighbors(view, ok, 1, kernel(2, kModesR[0], Weighting::kEdgeWeight), &s),
               Error);
  EXPECT_THROW(LocalSampler(view, {Replacement::kWithout, Weighting::kEdgeWeight, 1, 64}), Error);
  CscView broken = view;
  broken.indices = broken.indices.subview(0, 3);
  EXPECT_THROW(validate(broken, "broken"), Error);
  std::vector<int64_t> too_few_ids{1, 2};
  CscView bad_ids = view;
  bad_ids.stream_ids = ArrayView<const int64_t>(too_few_ids);
  EXPECT_THROW(validate(bad_ids, "ids"), Error);
}

}  // namespace
}  // namespace partita::sample
