#include "partita/train/link_metrics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "partita/core/error.h"

namespace partita::train {
namespace {

// The scores in increasing order, after checking that there are some and none is NaN.
std::vector<float> sorted_scores(ArrayView<const float> scores, const char* which) {
  PARTITA_CHECK(!scores.empty(), Error, "link metrics: no {} scores", which);
  for (int64_t i = 0; i < scores.size(); ++i) {
    PARTITA_CHECK(!std::isnan(scores[i]), Error, "link metrics: {} score {} is NaN", which, i);
  }
  std::vector<float> sorted(scores.begin(), scores.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// How many entries of the increasing list `s` are < x, and how many are <= x.
struct Counts {
  int64_t below = 0;
  int64_t at_or_below = 0;
};

Counts count_up_to(const std::vector<float>& s, float x) {
  auto first = std::lower_bound(s.begin(), s.end(), x);
  auto last = std::upper_bound(first, s.end(), x);
  return {first - s.begin(), last - s.begin()};
}

// The Mann-Whitney statistic: each positive wins against the negatives below it and draws
// against the equal ones.
double auc_of(const std::vector<float>& pos, const std::vector<float>& neg) {
  double twice_wins = 0;  // double: P N may pass 2^31, and it stays exact up to 2^53
  for (float p : pos) {
    Counts c = count_up_to(neg, p);
    twice_wins += static_cast<double>(c.below + c.at_or_below);
  }
  return twice_wins / 2 / (static_cast<double>(pos.size()) * static_cast<double>(neg.size()));
}

// Walks the distinct scores of both lists from the top; each is one threshold.
double average_precision_of(const std::vector<float>& pos, const std::vector<float>& neg) {
  const double num_pos = static_cast<double>(pos.size());
  auto p = pos.rbegin(), n = neg.rbegin();
  int64_t true_positives = 0, selected = 0;
  double ap = 0, previous_recall = 0;
  while (p != pos.rend() || n != neg.rend()) {
    const float t = p == pos.rend() ? *n : n == neg.rend() ? *p : std::max(*p, *n);
    for (; p != pos.rend() && *p == t; ++p) ++true_positives, ++selected;
    for (; n != neg.rend() && *n == t; ++n) ++selected;
    const double recall = static_cast<double>(true_positives) / num_pos;
    ap += (recall - previous_recall) * static_cast<double>(true_positives) /
          static_cast<double>(selected);
    previous_recall = recall;
  }
  return ap;
}

// A tie counts half: the rank is the mean of 1 + (negatives above) and 1 + (negatives at
// or above).
double mean_reciprocal_rank_of(const std::vector<float>& pos, const std::vector<float>& neg) {
  const int64_t num_neg = static_cast<int64_t>(neg.size());
  double sum = 0;
  for (float p : pos) {
    Counts c = count_up_to(neg, p);
    const double optimistic = 1.0 + static_cast<double>(num_neg - c.at_or_below);
    const double pessimistic = 1.0 + static_cast<double>(num_neg - c.below);
    sum += 2.0 / (optimistic + pessimistic);
  }
  return sum / static_cast<double>(pos.size());
}

double hits_of(const std::vector<float>& pos, const std::vector<float>& neg, int64_t k) {
  const int64_t num_neg = static_cast<int64_t>(neg.size());
  if (num_neg < k) return 1.0;
  const float kth_largest = neg[num_neg - k];
  const int64_t above = pos.end() - std::upper_bound(pos.begin(), pos.end(), kth_largest);
  return static_cast<double>(above) / static_cast<double>(pos.size());
}

}  // namespace

LinkMetrics link_metrics(ArrayView<const float> positive_scores,
                         ArrayView<const float> negative_scores, int64_t hits_k) {
  PARTITA_CHECK(hits_k >= 1, Error, "link metrics: Hits@K needs K >= 1, got {}", hits_k);
  const std::vector<float> pos = sorted_scores(positive_scores, "positive");
  const std::vector<float> neg = sorted_scores(negative_scores, "negative");
  LinkMetrics m;
  m.auc = auc_of(pos, neg);
  m.ap = average_precision_of(pos, neg);
  m.mrr = mean_reciprocal_rank_of(pos, neg);
  m.hits = hits_of(pos, neg, hits_k);
  m.hits_k = hits_k;
  m.positives = positive_scores.size();
  m.negatives = negative_scores.size();
  return m;
}

}  // namespace partita::train
