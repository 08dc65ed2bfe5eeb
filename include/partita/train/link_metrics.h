#pragma once
// Ranking metrics of link prediction over scored pairs: positives (held-out edges) against
// negatives (sampled non-edges). Pure functions of the two score lists; the order of the
// scores inside each list does not matter. Torch-free.
//
// Definitions (P positives with scores p_i, N negatives with scores n_j):
//   auc   Pr(positive > negative), ties counted one half: (#{p_i > n_j} + #{p_i = n_j} / 2)
//         / (P N) over all P N pairs (the Mann-Whitney statistic; ROC AUC).
//   ap    average precision as scikit-learn's average_precision_score: the pairs sorted by
//         score, descending; at each distinct score t (a threshold, ties taken together)
//         precision(t) = positives with score >= t / pairs with score >= t and recall(t) =
//         positives with score >= t / P; ap = sum over thresholds of
//         (recall(t) - recall(previous threshold)) * precision(t), previous recall 0.
//   mrr   mean over positives of 1 / rank_i against all negatives, where rank_i is the
//         mean of the optimistic rank 1 + #{n_j > p_i} and the pessimistic rank
//         1 + #{n_j >= p_i} (as OGB's link-prediction evaluators count ties).
//   hits  Hits@K as OGB's ogbl-collab/ddi evaluator: with t = the K-th largest negative
//         score, the share of positives with p_i > t (strictly); 1 when N < K.
#include <cstdint>

#include "partita/core/array_view.h"

namespace partita::train {

struct LinkMetrics {
  double auc = 0;
  double ap = 0;
  double mrr = 0;
  double hits = 0;  // Hits@hits_k
  int64_t hits_k = 0;
  int64_t positives = 0;
  int64_t negatives = 0;
};

// Throws partita::Error if either list is empty, a score is NaN, or hits_k < 1.
// O((P + N) log(P + N)) time, O(P + N) extra memory.
LinkMetrics link_metrics(ArrayView<const float> positive_scores,
                         ArrayView<const float> negative_scores, int64_t hits_k);

}  // namespace partita::train
