// Frequencies of sampled neighbors against their expected values with Pearson's
// chi-square. Every trial is a different batch key of a fixed seed, so the statistics are
// deterministic: these tests cannot flake; they fail only if the sampler is biased (or,
// with probability 0.001 per check, for an unlucky but fixed choice of seeds).
//
// Thresholds are the chi-square quantiles at p = 0.001: df 9: 27.88, df 19: 43.82,
// df 189: 254.9 (Wilson-Hilferty). Counting inclusions without replacement is not a
// multinomial sample (fixed k per trial, negatively correlated counts); its Pearson
// statistic is then stochastically smaller than chi-square, so the test stays valid and
// slightly conservative.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "partita/sample/csc_view.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/sample_key.h"
#include "sample_test_util.h"

namespace partita::sample {
namespace {

constexpr int kTrials = 20000;

double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    x += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  }
  std::printf("chi-square %.2f over %zu cells\n", x, observed.size());
  return x;
}

// Samples the star's center once per trial; calls visit(neighbors) for each.
template <class Visit>
void run_trials(const CscView& view, const KernelOptions& options, Visit visit,
                int trials = kTrials) {
  std::vector<int64_t> center{0};
  NeighborSample s;
  for (int t = 0; t < trials; ++t) {
    sample_neighbors(view, center, hop_key({/*seed=*/2024, /*epoch=*/3, /*batch=*/uint64_t(t)}, 0),
                     options, &s);
    visit(s.neighbors);
  }
}

KernelOptions options(int64_t k, Replacement r, Weighting w) {
  KernelOptions o;
  o.fanout = k;
  o.replacement = r;
  o.weighting = w;
  return o;
}

TEST(Distribution, UniformWithoutReplacementSinglesAndPairs) {
  graph::Csr star = testing::star_graph(20);
  std::vector<double> singles(20, 0.0);
  std::map<std::pair<int64_t, int64_t>, double> pairs;
  run_trials(csc_view_of(star), options(5, Replacement::kWithout, Weighting::kUniform),
             [&](const std::vector<int64_t>& got) {
               ASSERT_EQ(got.size(), 5u);
               for (size_t i = 0; i < got.size(); ++i) {
                 singles[got[i] - 1] += 1;
                 for (size_t j = i + 1; j < got.size(); ++j) pairs[{got[i], got[j]}] += 1;
               }
             });
  EXPECT_LT(chi_square(singles, std::vector<double>(20, kTrials * 5.0 / 20)), 43.82);
  std::vector<double> pair_counts;
  for (int64_t a = 1; a <= 20; ++a) {
    for (int64_t b = a + 1; b <= 20; ++b) pair_counts.push_back(pairs[{a, b}]);
  }
  EXPECT_LT(chi_square(pair_counts, std::vector<double>(190, kTrials * 10.0 / 190)), 254.9);
}

TEST(Distribution, UniformWithReplacement) {
  graph::Csr star = testing::star_graph(20);
  std::vector<double> counts(20, 0.0);
  run_trials(csc_view_of(star), options(5, Replacement::kWith, Weighting::kUniform),
             [&](const std::vector<int64_t>& got) {
               for (int64_t u : got) counts[u - 1] += 1;
             });
  EXPECT_LT(chi_square(counts, std::vector<double>(20, kTrials * 5.0 / 20)), 43.82);
}

// A star with 10 leaves, weights 1..10.
struct WeightedStar {
  graph::Csr g = testing::star_graph(10);
  std::vector<float> w{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CscView view() const { return csc_view_of(g, w); }
};

TEST(Distribution, WeightedWithReplacementFollowsWeights) {
  WeightedStar star;
  std::vector<double> counts(10, 0.0), expected(10);
  run_trials(star.view(), options(5, Replacement::kWith, Weighting::kEdgeWeight),
             [&](const std::vector<int64_t>& got) {
               for (int64_t u : got) counts[u - 1] += 1;
             });
  for (int i = 0; i < 10; ++i) expected[i] = kTrials * 5.0 * (i + 1) / 55.0;
  EXPECT_LT(chi_square(counts, expected), 27.88);
}

TEST(Distribution, WeightedWithoutReplacementOneDrawFollowsWeights) {
  WeightedStar star;
  std::vector<double> counts(10, 0.0), expected(10);
  run_trials(star.view(), options(1, Replacement::kWithout, Weighting::kEdgeWeight),
             [&](const std::vector<int64_t>& got) {
               ASSERT_EQ(got.size(), 1u);
               counts[got[0] - 1] += 1;
             });
  for (int i = 0; i < 10; ++i) expected[i] = kTrials * (i + 1) / 55.0;
  EXPECT_LT(chi_square(counts, expected), 27.88);
}

// Successive sampling proportional to weight (by rejection here: neighbor_kernel.h's
// bound holds for weights 1..10 and k = 3): inclusion probabilities of k = 3 follow from
// the 720 ordered draws.
TEST(Distribution, WeightedWithoutReplacementMatchesSuccessiveSampling) {
  WeightedStar star;
  std::vector<double> counts(10, 0.0), expected(10, 0.0);
  run_trials(star.view(), options(3, Replacement::kWithout, Weighting::kEdgeWeight),
             [&](const std::vector<int64_t>& got) {
               ASSERT_EQ(got.size(), 3u);
               for (int64_t u : got) counts[u - 1] += 1;
             });
  const double total = 55.0;
  for (int a = 1; a <= 10; ++a) {
    for (int b = 1; b <= 10; ++b) {
      for (int c = 1; c <= 10; ++c) {
        if (a == b || b == c || a == c) continue;
        double p = a / total * b / (total - a) * c / (total - a - b);
        expected[a - 1] += p * kTrials;
        expected[b - 1] += p * kTrials;
        expected[c - 1] += p * kTrials;
      }
    }
  }
  EXPECT_LT(chi_square(counts, expected), 27.88);
}

// ---- Weighted sampling against successive sampling's exact probabilities ------------
// 10^5 draws each; thresholds are the chi-square quantiles at p = 0.01 (df 5: 15.09,
// df 36: 58.62, df 39: 62.43). Each row states which of neighbor_kernel.h's algorithms it takes
// (rejection, or the exact fallback for skewed rows), checked by the rule of the
// reference (sample_test_util.h).
constexpr int kWeightedTrials = 100000;

// The star's center with weights w, sampled kWeightedTrials times with fanout k:
// chi-square of each leaf's count against kWeightedTrials * (its expected count per draw).
// summarized: the view carries weight summaries (csc_view.h).
double weighted_chi_square(const std::vector<float>& w, int64_t k, Replacement r,
                           bool summarized = false) {
  const int64_t d = static_cast<int64_t>(w.size());
  graph::Csr star = testing::star_graph(d);
  std::vector<double> counts(w.size(), 0.0), expected(w.size(), 0.0);
  CscView view = csc_view_of(star, w);
  const std::vector<WeightSummary> summaries = weight_summaries(view, 1);
  if (summarized) view.weight_summaries = summaries;
  run_trials(
      view, options(k, r, Weighting::kEdgeWeight),
      [&](const std::vector<int64_t>& got) {
        ASSERT_EQ(static_cast<int64_t>(got.size()), k);
        for (int64_t u : got) counts[u - 1] += 1;
        if (r == Replacement::kWithout) {
          for (size_t i = 1; i < got.size(); ++i) ASSERT_LT(got[i - 1], got[i]);
        }
      },
      kWeightedTrials);
  if (r == Replacement::kWithout) {
    expected = testing::inclusion_probabilities(w, k);
  } else {
    double total = 0;
    for (float x : w) total += testing::positive_weight(x) ? x : 0.0;
    for (int64_t i = 0; i < d; ++i)
      expected[i] = testing::positive_weight(w[i]) ? k * w[i] / total : 0;
  }
  // Entries that can never be drawn are not cells: they must have count 0.
  std::vector<double> o, e;
  for (int64_t i = 0; i < d; ++i) {
    if (expected[i] == 0) {
      EXPECT_EQ(counts[i], 0) << "entry " << i << " has weight " << w[i];
      continue;
    }
    o.push_back(counts[i]);
    e.push_back(expected[i] * kWeightedTrials);
  }
  return chi_square(o, e);
}

// Skewed rows of d = 6: the rejection bound holds for `mild` at k = 2 and 3, not for
// `skewed` (one heavy entry), nor for `mild` at k = 5; both then take rejection among the
// untaken entries (a short run with 8 * h >= p), which at k = 5 = d - 1 runs out of trials
// now and then and lets Efraimidis-Spirakis finish.
const std::vector<float> kMild{1, 8, 4, 0.5f, 6, 5};
const std::vector<float> kSkewed{0.1f, 0.2f, 1, 8, 0.5f, 3};

TEST(Distribution, WeightedWithoutReplacementSmallRowByRejection) {
  for (int64_t k : {2, 3}) {
    const testing::WeightRule rule = testing::weight_rule(kMild.data(), 6);
    ASSERT_TRUE(rule.rejection_without(6, k));
    EXPECT_LT(weighted_chi_square(kMild, k, Replacement::kWithout), 15.09) << k;
  }
}

TEST(Distribution, WeightedWithoutReplacementShortRowByRejectionAmongUntaken) {
  for (const auto& [w, k] : {std::pair{kSkewed, int64_t{2}}, {kSkewed, 3}, {kMild, 5}}) {
    const testing::WeightRule rule = testing::weight_rule(w.data(), 6);
    ASSERT_FALSE(rule.rejection_without(6, k));
    ASSERT_TRUE(rule.rejection_small());
    EXPECT_LT(weighted_chi_square(w, k, Replacement::kWithout), 15.09) << k;
  }
}

// One heavy entry among light ones: 8 * h < p, so a short row takes Efraimidis-Spirakis;
// and so does a long one (70 entries) that fails the rejection bound.
TEST(Distribution, WeightedWithoutReplacementSkewedRowsByExponentialKeys) {
  std::vector<float> w{8, 0.1f, 0.2f, 1, 0.5f, 3, 0.7f, 0.9f, 0.3f, 2, 1.5f, 0.6f};
  for (int64_t k : {2, 3}) {
    const testing::WeightRule rule = testing::weight_rule(w.data(), 12);
    ASSERT_FALSE(rule.rejection_without(12, k));
    ASSERT_FALSE(rule.rejection_small());
    EXPECT_LT(weighted_chi_square(w, k, Replacement::kWithout), 24.72) << k;  // df 11
  }
  std::vector<float> long_row(70);
  for (int i = 0; i < 70; ++i) long_row[i] = 0.2f + 0.01f * static_cast<float>((i * 13) % 70);
  long_row[9] = 6;
  ASSERT_GT(static_cast<int64_t>(long_row.size()), testing::kSmallRun);
  ASSERT_FALSE(testing::weight_rule(long_row.data(), 70).rejection_without(70, 3));
  EXPECT_LT(weighted_chi_square(long_row, 3, Replacement::kWithout), 99.23);  // df 69
}

// A long row (70 entries, beyond the short-run rule) by rejection, with and without weight
// summaries (csc_view.h), which give the same picks.
TEST(Distribution, WeightedWithoutReplacementLongRowByRejection) {
  std::vector<float> w(70);
  for (int i = 0; i < 70; ++i) w[i] = 0.5f + 0.05f * static_cast<float>((i * 17) % 70);
  ASSERT_TRUE(testing::weight_rule(w.data(), 70).rejection_without(70, 3));
  EXPECT_LT(weighted_chi_square(w, 3, Replacement::kWithout), 99.23);  // df 69
  EXPECT_LT(weighted_chi_square(w, 3, Replacement::kWithout, /*summarized=*/true), 99.23);
}

// A row of 40 with weights spread over (0.3, 4], a zero, a NaN and a negative weight
// (never drawn): the rejection path with a larger row.
std::vector<float> row_of_40() {
  std::vector<float> w(40);
  for (int i = 0; i < 40; ++i) w[i] = 0.3f + 0.1f * static_cast<float>((i * 17) % 38);
  w[5] = 0;
  w[21] = NAN;
  w[30] = -2;
  return w;
}

TEST(Distribution, WeightedWithoutReplacementLargeRowByRejection) {
  const std::vector<float> w = row_of_40();
  ASSERT_TRUE(testing::weight_rule(w.data(), 40).rejection_without(40, 3));
  EXPECT_LT(weighted_chi_square(w, 3, Replacement::kWithout), 58.62);  // 37 cells
}

TEST(Distribution, WeightedWithReplacementByRejectionAndPrefixSums) {
  ASSERT_TRUE(testing::weight_rule(kMild.data(), 6).rejection_with(6));
  EXPECT_LT(weighted_chi_square(kMild, 4, Replacement::kWith), 15.09);
  // One heavy entry among many light ones fails the bound: prefix sums.
  std::vector<float> skewed(40, 0.01f);
  skewed[7] = 1;
  skewed[3] = 0.4f;
  ASSERT_FALSE(testing::weight_rule(skewed.data(), 40).rejection_with(40));
  EXPECT_LT(weighted_chi_square(skewed, 4, Replacement::kWith), 62.43);
  const std::vector<float> w = row_of_40();
  ASSERT_TRUE(testing::weight_rule(w.data(), 40).rejection_with(40));
  EXPECT_LT(weighted_chi_square(w, 4, Replacement::kWith), 58.62);  // 37 cells
}

TEST(Distribution, ZeroWeightsAreNeverDrawn) {
  graph::Csr star = testing::star_graph(6);
  std::vector<float> w{0, 1, 0, 2, -1, 1};
  for (Replacement r : {Replacement::kWithout, Replacement::kWith}) {
    run_trials(csc_view_of(star, w), options(2, r, Weighting::kEdgeWeight),
               [&](const std::vector<int64_t>& got) {
                 ASSERT_EQ(got.size(), 2u);
                 for (int64_t u : got) ASSERT_TRUE(u == 2 || u == 4 || u == 6) << u;
               });
  }
  std::vector<float> none(6, 0.0f);
  NeighborSample s;
  std::vector<int64_t> center{0};
  sample_neighbors(csc_view_of(star, none), center, 1,
                   options(3, Replacement::kWith, Weighting::kEdgeWeight), &s);
  EXPECT_EQ(s.counts[0], 0);
}

}  // namespace
}  // namespace partita::sample
