// Weighted sampling (neighbor_kernel.h): the kernel against the reference of
// sample_test_util.h on rows that take each of the algorithms (rejection, and the exact
// fallbacks for skewed rows: Efraimidis-Spirakis without replacement, prefix sums with),
// untyped and typed, with weights that are zero, negative, NaN or infinite (never drawn).
// The distributions themselves are checked in distribution_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "partita/core/error.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/neighbor_kernel.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

using testing::random_graph;
using testing::reference_sample;

const Replacement kModesR[] = {Replacement::kWithout, Replacement::kWith};
// Rejection keeps its taken set two ways (k <= 16, larger); hub rows have degree 300.
const int64_t kFanouts[] = {-1, 0, 1, 3, 10, 16, 17, 40, 70, 250, 1000};

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

KernelOptions kernel(int64_t k, Replacement r, int threads = 1, int64_t chunk = 2048) {
  KernelOptions o;
  o.fanout = k;
  o.replacement = r;
  o.weighting = Weighting::kEdgeWeight;
  o.threads = threads;
  o.chunk = chunk;
  return o;
}

// Rows of three kinds, by row: even rows weights in (0.5, 1] (every row takes rejection),
// rows 3 mod 4 uniform in (0, 4) with a few zero, negative, NaN and infinite ones, rows
// 1 mod 4 heavy-tailed (1 / u^2: a few heavy entries, so most of them fail the rejection
// bound and take the fallbacks).
std::vector<float> mixed_weights(const graph::Csr& g, uint64_t seed) {
  Rng rng(stream_key(seed, 55));
  std::vector<float> w(static_cast<size_t>(g.num_entries()));
  for (int64_t v = 0; v < g.num_rows(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const double u = 1.0 - rng.uniform();  // (0, 1]
      if (v % 2 == 0) {
        w[e] = static_cast<float>(0.5 + 0.5 * u);
      } else if (v % 4 == 1) {
        w[e] = static_cast<float>(1.0 / (u * u));
      } else {
        const uint64_t r = rng.below(100);
        w[e] = r < 6   ? 0.0f
               : r < 7 ? -1.0f
               : r < 8 ? NAN
               : r < 9 ? std::numeric_limits<float>::infinity()
                       : static_cast<float>(4.0 * u);
      }
    }
  }
  return w;
}

// How many of the rows sampled with fanout k take rejection, and how many the fallback,
// among runs of at most kSmallRun entries (without replacement: their own rule) and
// longer ones (rows with fewer than k + 1 positive entries take neither).
struct Paths {
  int64_t small_rejection = 0, small_untaken = 0, small_fallback = 0, rejection = 0, fallback = 0;
};

Paths paths(const graph::Csr& g, const std::vector<float>& w, int64_t k, Replacement r) {
  Paths p;
  for (int64_t v = 0; v < g.num_rows(); ++v) {
    const int64_t b = g.indptr[v], d = g.degree(v);
    const testing::WeightRule rule = testing::weight_rule(w.data() + b, d);
    if (r == Replacement::kWithout) {
      if (rule.positive <= k) continue;
      if (rule.rejection_without(d, k)) {
        ++(d <= testing::kSmallRun ? p.small_rejection : p.rejection);
      } else if (d <= testing::kSmallRun) {
        rule.rejection_small() ? ++p.small_untaken : ++p.small_fallback;
      } else {
        ++p.fallback;
      }
    } else {
      if (rule.positive == 0) continue;
      rule.rejection_with(d) ? ++p.rejection : ++p.fallback;
    }
  }
  return p;
}

// Two shapes: mostly short rows (runs of <= kSmallRun entries; 12 hubs of 300), and rows
// of up to 120 entries, half of them longer than kSmallRun.
TEST(WeightedKernel, MatchesReferenceOnEveryPath) {
  for (uint64_t seed : {1, 2}) {
    for (const bool long_rows : {false, true}) {
      graph::Csr g =
          long_rows ? random_graph(300, 60, 12, 300, seed) : random_graph(600, 14, 12, 300, seed);
      std::vector<float> w = mixed_weights(g, seed);
      CscView view = csc_view_of(g, w);
      std::vector<int64_t> nodes = all_nodes(g.num_rows());
      nodes.push_back(1);  // a duplicate gets the same sample
      const uint64_t hop = hop_key({seed, 2, 5}, 1);
      for (Replacement r : kModesR) {
        for (int64_t k : kFanouts) {
          SCOPED_TRACE(::testing::Message() << "seed " << seed << " long " << long_rows << " k "
                                            << k << " with " << (r == Replacement::kWith));
          if (k >= 1 && k <= 17) {  // every algorithm is exercised
            const Paths p = paths(g, w, k, r);
            if (r == Replacement::kWith || long_rows) {
              EXPECT_GT(p.rejection, 20);
              EXPECT_GT(p.fallback, 5);
            } else {
              EXPECT_GT(p.small_fallback, 5);
              if (k >= 3) {
                EXPECT_GT(p.small_untaken, 20);
              }
              if (k <= 3) {
                EXPECT_GT(p.small_rejection, 20);
              }
            }
          }
          NeighborSample s;
          sample_neighbors(view, nodes, hop, kernel(k, r), &s);
          ASSERT_EQ(s.counts.size(), nodes.size());
          for (size_t i = 0; i < nodes.size(); ++i) {
            const std::vector<int64_t> got = slice(s, static_cast<int64_t>(i));
            ASSERT_EQ(got, reference_sample(g, w, nodes[i], hop, k, r, Weighting::kEdgeWeight))
                << nodes[i];
            // Never an entry of weight <= 0, NaN or infinite.
            const int64_t v = nodes[i];
            for (int64_t u : got) {
              bool drawable = false;
              for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
                drawable |= g.indices[e] == u && testing::positive_weight(w[e]);
              }
              ASSERT_TRUE(drawable) << "node " << v << " drew " << u;
            }
          }
        }
      }
    }
  }
}

TEST(WeightedKernel, TypedViewsMatchReference) {
  const testing::TypedGraph t = testing::random_typed_graph(400, 3, 12, 8, 200, -1, 6);
  const std::vector<float> w = mixed_weights(t.g, 6);
  const CscView view = t.view(w);
  const std::vector<int64_t> nodes = all_nodes(t.g.num_rows());
  for (Replacement r : kModesR) {
    for (int64_t k : {-1, 2, 9, 20, 500}) {
      NeighborSample s;
      sample_neighbors(view, nodes, 31, kernel(k, r), &s);
      int64_t at = 0;
      for (int64_t v : nodes) {
        const auto want =
            testing::reference_typed_sample(t, w, v, 31, {k, {}}, r, Weighting::kEdgeWeight);
        ASSERT_EQ(s.counts[v], static_cast<int64_t>(want.size())) << v << " k " << k;
        for (const auto& [u, rel] : want) {
          ASSERT_EQ(s.neighbors[at], u) << v << " k " << k;
          ASSERT_EQ(s.relations[at], rel) << v << " k " << k;
          ++at;
        }
      }
    }
  }
}

// Weight summaries (csc_view.h) change nothing but the cost: the same picks with and
// without them, on short and long rows, with and without replacement, and with edge ids.
TEST(WeightedKernel, WeightSummariesGiveTheSamePicks) {
  graph::Csr g = random_graph(300, 60, 12, 300, 8);
  std::vector<float> w = mixed_weights(g, 8);
  const CscView plain = csc_view_of(g, w);
  const std::vector<WeightSummary> summaries = weight_summaries(plain, 2);
  ASSERT_EQ(static_cast<int64_t>(summaries.size()), g.num_rows());
  CscView summarized = plain;
  summarized.weight_summaries = summaries;
  const std::vector<int64_t> ids = edge_id_range(plain);
  const std::vector<int64_t> nodes = all_nodes(g.num_rows());
  for (Replacement r : kModesR) {
    for (int64_t k : {1, 3, 10, 17, 100}) {
      for (bool with_ids : {false, true}) {
        KernelOptions o = kernel(k, r);
        o.edge_ids = with_ids;
        CscView a = plain, b = summarized;
        if (with_ids) a.edge_ids = ids, b.edge_ids = ids;
        NeighborSample one, two;
        sample_neighbors(a, nodes, 5, o, &one);
        sample_neighbors(b, nodes, 5, o, &two);
        ASSERT_EQ(one.counts, two.counts) << k;
        ASSERT_EQ(one.neighbors, two.neighbors) << k;
        ASSERT_EQ(one.edge_ids, two.edge_ids) << k;
      }
    }
  }
  CscView wrong = plain;
  wrong.weight_summaries = ArrayView<const WeightSummary>(summaries.data(), 3);
  EXPECT_THROW(validate(wrong, "test"), partita::Error);
}

// Reruns are bit-identical, and so are 1, 2 and 3 threads with any chunk.
TEST(WeightedKernel, RerunsAndThreadCountsGiveIdenticalSamples) {
  graph::Csr g = random_graph(2000, 16, 20, 300, 7);
  std::vector<float> w = mixed_weights(g, 7);
  CscView view = csc_view_of(g, w);
  std::vector<int64_t> nodes = all_nodes(g.num_rows());
  for (Replacement r : kModesR) {
    for (int64_t k : {3, 17, 100}) {
      NeighborSample one, again;
      sample_neighbors(view, nodes, 3, kernel(k, r, 1), &one);
      sample_neighbors(view, nodes, 3, kernel(k, r, 1), &again);
      ASSERT_EQ(again.counts, one.counts);
      ASSERT_EQ(again.neighbors, one.neighbors);
      for (int threads : {2, 3}) {
        for (int64_t chunk : {1, 64, 2048}) {
          NeighborSample many;
          sample_neighbors(view, nodes, 3, kernel(k, r, threads, chunk), &many);
          ASSERT_EQ(many.counts, one.counts) << threads << " " << chunk;
          ASSERT_EQ(many.neighbors, one.neighbors) << threads << " " << chunk;
        }
      }
    }
  }
}

// Runs with at most k positive entries give all of them, in stored order, on every path;
// a run without any gives nothing, with replacement too.
TEST(WeightedKernel, FewPositiveEntriesGiveThemAll) {
  graph::Csr star = testing::star_graph(12);
  const float nan = NAN, inf = std::numeric_limits<float>::infinity();
  std::vector<float> w{0, 3, nan, -1, 0, 2, inf, 0, 0, 7, -0.0f, 0};
  const CscView view = csc_view_of(star, w);
  std::vector<int64_t> center{0};
  for (int64_t k : {3, 4, 11}) {
    for (uint64_t key = 0; key < 50; ++key) {
      NeighborSample s;
      sample_neighbors(view, center, key, kernel(k, Replacement::kWithout), &s);
      ASSERT_EQ(s.neighbors, (std::vector<int64_t>{2, 6, 10})) << k;
    }
  }
  for (uint64_t key = 0; key < 50; ++key) {
    NeighborSample s;
    sample_neighbors(view, center, key, kernel(2, Replacement::kWithout), &s);
    ASSERT_EQ(s.neighbors.size(), 2u);
    for (int64_t u : s.neighbors) ASSERT_TRUE(u == 2 || u == 6 || u == 10) << u;
    sample_neighbors(view, center, key, kernel(5, Replacement::kWith), &s);
    ASSERT_EQ(s.neighbors.size(), 5u);
    for (int64_t u : s.neighbors) ASSERT_TRUE(u == 2 || u == 6 || u == 10) << u;
  }
  std::vector<float> none{0, -1, nan, inf, 0, 0, 0, 0, 0, 0, 0, 0};
  for (Replacement r : kModesR) {
    NeighborSample s;
    sample_neighbors(csc_view_of(star, none), center, 1, kernel(3, r), &s);
    EXPECT_EQ(s.counts[0], 0);
    EXPECT_TRUE(s.neighbors.empty());
  }
}

}  // namespace
}  // namespace partita::sample
