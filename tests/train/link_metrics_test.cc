#include "partita/train/link_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <vector>

#include "partita/core/error.h"

namespace partita::train {
namespace {

// The definitions of link_metrics.h, spelled out pair by pair and threshold by threshold.
double reference_auc(const std::vector<float>& pos, const std::vector<float>& neg) {
  double wins = 0;
  for (float p : pos) {
    for (float n : neg) wins += p > n ? 1.0 : p == n ? 0.5 : 0.0;
  }
  return wins / (static_cast<double>(pos.size()) * static_cast<double>(neg.size()));
}

double reference_ap(const std::vector<float>& pos, const std::vector<float>& neg) {
  std::set<float, std::greater<float>> thresholds(pos.begin(), pos.end());
  thresholds.insert(neg.begin(), neg.end());
  double ap = 0, previous_recall = 0;
  for (float t : thresholds) {
    double tp = 0, selected = 0;
    for (float p : pos) tp += p >= t, selected += p >= t;
    for (float n : neg) selected += n >= t;
    const double recall = tp / static_cast<double>(pos.size());
    ap += (recall - previous_recall) * (tp / selected);
    previous_recall = recall;
  }
  return ap;
}

double reference_mrr(const std::vector<float>& pos, const std::vector<float>& neg) {
  double sum = 0;
  for (float p : pos) {
    double above = 0, at_or_above = 0;
    for (float n : neg) above += n > p, at_or_above += n >= p;
    sum += 1.0 / ((1 + above + 1 + at_or_above) / 2);
  }
  return sum / static_cast<double>(pos.size());
}

double reference_hits(const std::vector<float>& pos, std::vector<float> neg, int64_t k) {
  if (static_cast<int64_t>(neg.size()) < k) return 1.0;
  std::sort(neg.begin(), neg.end(), std::greater<float>());
  const float t = neg[k - 1];
  double hits = 0;
  for (float p : pos) hits += p > t;
  return hits / static_cast<double>(pos.size());
}

// `count` scores; with `levels` > 0, drawn from that many values (many ties), else uniform.
std::vector<float> random_scores(std::mt19937_64& rng, int64_t count, int levels) {
  std::vector<float> s;
  for (int64_t i = 0; i < count; ++i) {
    if (levels > 0) {
      s.push_back(static_cast<float>(std::uniform_int_distribution<int>(0, levels - 1)(rng)) /
                  static_cast<float>(levels));
    } else {
      s.push_back(std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng));
    }
  }
  return s;
}

TEST(LinkMetrics, MatchesBruteForceWithAndWithoutTies) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const int levels = trial % 3 == 0 ? 0 : 2 + trial % 5;
    const int64_t num_pos = 1 + static_cast<int64_t>(rng() % 40);
    const int64_t num_neg = 1 + static_cast<int64_t>(rng() % 80);
    const std::vector<float> pos = random_scores(rng, num_pos, levels);
    const std::vector<float> neg = random_scores(rng, num_neg, levels);
    const int64_t k = 1 + static_cast<int64_t>(rng() % 100);  // sometimes > num_neg
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ", P " << num_pos << ", N " << num_neg
                                      << ", levels " << levels << ", K " << k);
    const LinkMetrics m = link_metrics(pos, neg, k);
    EXPECT_NEAR(m.auc, reference_auc(pos, neg), 1e-12);
    EXPECT_NEAR(m.ap, reference_ap(pos, neg), 1e-12);
    EXPECT_NEAR(m.mrr, reference_mrr(pos, neg), 1e-12);
    EXPECT_NEAR(m.hits, reference_hits(pos, neg, k), 1e-12);
    EXPECT_EQ(m.hits_k, k);
    EXPECT_EQ(m.positives, num_pos);
    EXPECT_EQ(m.negatives, num_neg);
  }
}

// scikit-learn's average_precision_score documentation example: y = [0, 0, 1, 1],
// scores = [0.1, 0.4, 0.35, 0.8] -> 0.8333...
TEST(LinkMetrics, AveragePrecisionOfScikitLearnExample) {
  const LinkMetrics m =
      link_metrics(std::vector<float>{0.35f, 0.8f}, std::vector<float>{0.1f, 0.4f}, /*hits_k=*/1);
  EXPECT_NEAR(m.ap, 0.5 * 1.0 + 0.5 * (2.0 / 3.0), 1e-12);
  EXPECT_NEAR(m.auc, 0.75, 1e-12);  // 0.8 beats both, 0.35 beats 0.1 only
}

// Positives {0.5, 0.5, 0.2}, negatives {0.5, 0.2, 0.1}, by hand from the definitions:
//   ap:  t = 0.5: precision 2/3, recall 2/3; t = 0.2: precision 3/5, recall 1; t = 0.1 adds
//        no recall. ap = 2/3 * 2/3 + 1/3 * 3/5 = 29/45.
//   auc: 0.5 -> 0.5 + 1 + 1 (twice), 0.2 -> 0 + 0.5 + 1: 6.5 / 9.
//   mrr: 0.5 -> ranks 1 and 2, mean 1.5; 0.2 -> ranks 2 and 3, mean 2.5:
//        (2/3 + 2/3 + 2/5) / 3 = 26/45.
//   hits: K = 1 -> t = 0.5, none above; K = 2 -> t = 0.2, two of three; K = 3 -> t = 0.1, all.
TEST(LinkMetrics, TiesByHand) {
  const std::vector<float> pos = {0.5f, 0.5f, 0.2f}, neg = {0.5f, 0.2f, 0.1f};
  const LinkMetrics m = link_metrics(pos, neg, /*hits_k=*/1);
  EXPECT_NEAR(m.ap, 29.0 / 45.0, 1e-12);
  EXPECT_NEAR(m.auc, 6.5 / 9.0, 1e-12);
  EXPECT_NEAR(m.mrr, 26.0 / 45.0, 1e-12);
  EXPECT_EQ(m.hits, 0.0);
  EXPECT_NEAR(link_metrics(pos, neg, 2).hits, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(link_metrics(pos, neg, 3).hits, 1.0);
  EXPECT_EQ(link_metrics(pos, neg, 4).hits, 1.0);  // N < K
}

TEST(LinkMetrics, IndependentOfOrder) {
  std::mt19937_64 rng(5);
  std::vector<float> pos = random_scores(rng, 50, 4), neg = random_scores(rng, 70, 4);
  const LinkMetrics expected = link_metrics(pos, neg, 10);
  for (int shuffle = 0; shuffle < 5; ++shuffle) {
    std::shuffle(pos.begin(), pos.end(), rng);
    std::shuffle(neg.begin(), neg.end(), rng);
    const LinkMetrics m = link_metrics(pos, neg, 10);
    EXPECT_EQ(m.auc, expected.auc);
    EXPECT_EQ(m.ap, expected.ap);
    EXPECT_EQ(m.mrr, expected.mrr);
    EXPECT_EQ(m.hits, expected.hits);
  }
}

TEST(LinkMetrics, PerfectAndReversedRankings) {
  const std::vector<float> high = {0.9f, 0.7f, 2.0f}, low = {0.1f, -1.0f, 0.3f, 0.5f};
  const LinkMetrics perfect = link_metrics(high, low, /*hits_k=*/3);
  EXPECT_EQ(perfect.auc, 1.0);
  EXPECT_EQ(perfect.ap, 1.0);
  EXPECT_EQ(perfect.mrr, 1.0);
  EXPECT_EQ(perfect.hits, 1.0);

  // Every positive below all 3 negatives: rank 4 each; ap = mean of i / (3 + i), i = 1..4.
  const LinkMetrics reversed = link_metrics(low, high, /*hits_k=*/3);
  EXPECT_EQ(reversed.auc, 0.0);
  EXPECT_EQ(reversed.hits, 0.0);
  EXPECT_NEAR(reversed.mrr, 0.25, 1e-12);
  EXPECT_NEAR(reversed.ap, (1.0 / 4 + 2.0 / 5 + 3.0 / 6 + 4.0 / 7) / 4, 1e-12);
}

TEST(LinkMetrics, HitsIsOneWithFewerNegativesThanK) {
  const LinkMetrics m = link_metrics(std::vector<float>{-5.0f}, std::vector<float>{1, 2}, 3);
  EXPECT_EQ(m.hits, 1.0);
  EXPECT_EQ(m.auc, 0.0);
  EXPECT_EQ(link_metrics(std::vector<float>{-5.0f}, std::vector<float>{1, 2}, 2).hits, 0.0);
}

TEST(LinkMetrics, RejectsEmptyListsNaNAndBadK) {
  const std::vector<float> some = {0.1f, 0.2f}, none;
  EXPECT_THROW(link_metrics(none, some, 1), Error);
  EXPECT_THROW(link_metrics(some, none, 1), Error);
  EXPECT_THROW(link_metrics(std::vector<float>{0.1f, NAN}, some, 1), Error);
  EXPECT_THROW(link_metrics(some, std::vector<float>{NAN}, 1), Error);
  EXPECT_THROW(link_metrics(some, some, 0), Error);
  EXPECT_THROW(link_metrics(some, some, -2), Error);
  EXPECT_NO_THROW(link_metrics(some, std::vector<float>{INFINITY, -INFINITY}, 1));
}

}  // namespace
}  // namespace partita::train
