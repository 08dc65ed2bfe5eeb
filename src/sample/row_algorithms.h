#pragma once
// Internal to src/sample: the per-row algorithms of the sampling kernel (the contract is
// in neighbor_kernel.h), run by the kernel's loops (neighbor_kernel.cc) on one row of an
// untyped view or one relation's run of a typed view's row (row_runs.h). Each takes the
// row or run and its stream key, and writes positions or ids to a buffer with room for its
// bound.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/neighbor_kernel.h"

namespace partita::sample::detail {
// Internal linkage: the compiler inlines them into the kernel's loops as freely as if they
// were written there.
namespace {

// Floyd's algorithm keeps its taken set three ways, by fanout (measured with fanouts
// 5..100 on rows of degree 200): up to kTinyFanout a small array scanned and rank-sorted
// without data-dependent branches (they mispredict on random draws); up to kSmallFanout a
// sorted array with insertion; above, an open-addressing set and a final sort. All three
// take the same positions for the same draws.
constexpr int64_t kTinyFanout = 16;
constexpr int64_t kSmallFanout = 128;
// Nodes ahead whose offsets are prefetched (sample_chunk: and whose row start; offsets
// then twice as far ahead).
constexpr int64_t kPrefetchDistance = 8;

// Per-chunk scratch, grown on demand and reused for every node of the chunk.
struct Scratch {
  std::vector<int64_t> set;                       // Floyd, large k
  std::vector<double> cumulative;                 // weighted, with replacement
  std::vector<std::pair<double, int64_t>> keyed;  // weighted, without replacement
};

inline bool positive(float w) { return w > 0.0f && w <= std::numeric_limits<float>::max(); }

[[noreturn]] inline void throw_outside(const CscView& view, int64_t node) {
  throw Error(fmt::format("sample: node {} is outside the rows [{}, {}) of this view", node,
                          view.first_row, view.end_row()));
}

inline int64_t copy_row(const int64_t* row, int64_t d, int64_t* out) {
  if (d > 0) std::memcpy(out, row, static_cast<size_t>(d) * sizeof(int64_t));
  return d;
}

inline int64_t copy_positive(const int64_t* row, const float* w, int64_t d, int64_t* out) {
  int64_t c = 0;
  for (int64_t i = 0; i < d; ++i) {
    if (positive(w[i])) out[c++] = row[i];
  }
  return c;
}

// Floyd's algorithm, k < d, k <= kTinyFanout: membership is an OR over every taken
// position; the result is sorted by rank (the number of smaller taken positions, all
// distinct).
inline int64_t floyd_tiny(Rng& rng, int64_t d, int64_t k, int64_t* pos) {
  int64_t taken[kTinyFanout];
  for (int64_t c = 0; c < k; ++c) {
    const int64_t j = d - k + c;
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    bool seen = false;
    for (int64_t q = 0; q < c; ++q) seen |= taken[q] == t;
    taken[c] = seen ? j : t;
  }
  for (int64_t a = 0; a < k; ++a) {
    int64_t rank = 0;
    for (int64_t b = 0; b < k; ++b) rank += taken[b] < taken[a];
    pos[rank] = taken[a];
  }
  return k;
}

// Floyd's algorithm, k < d, k <= kSmallFanout. pos[0..c) stays sorted: a draw t already
// taken means j is taken instead, and j exceeds everything taken so far.
inline int64_t floyd_small(Rng& rng, int64_t d, int64_t k, int64_t* pos) {
  int64_t c = 0;
  for (int64_t j = d - k; j < d; ++j) {
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    int64_t p = c;
    while (p > 0 && pos[p - 1] > t) --p;
    if (p > 0 && pos[p - 1] == t) {
      pos[c++] = j;
      continue;
    }
    for (int64_t q = c; q > p; --q) pos[q] = pos[q - 1];
    pos[p] = t;
    ++c;
  }
  return c;
}

// Floyd's algorithm, k < d, any k: the same draws and decisions with a hash set.
inline int64_t floyd_large(Rng& rng, int64_t d, int64_t k, int64_t* pos, Scratch& scratch) {
  uint64_t capacity = 16;
  while (capacity < 2 * static_cast<uint64_t>(k)) capacity <<= 1;
  const uint64_t mask = capacity - 1;
  scratch.set.assign(capacity, -1);
  int64_t* set = scratch.set.data();
  auto insert = [&](int64_t x) {  // false if x was present
    uint64_t h = mix64(static_cast<uint64_t>(x)) & mask;
    while (true) {
      if (set[h] == -1) {
        set[h] = x;
        return true;
      }
      if (set[h] == x) return false;
      h = (h + 1) & mask;
    }
  };
  int64_t c = 0;
  for (int64_t j = d - k; j < d; ++j) {
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    if (insert(t)) {
      pos[c++] = t;
    } else {
      insert(j);
      pos[c++] = j;
    }
  }
  std::sort(pos, pos + c);
  return c;
}

// Uniform modes split a node's work in two: draw positions now (and prefetch the lines
// they fall on), read the ids kLag nodes later, when those lines have arrived. kWholeRow:
// take every entry.
constexpr int64_t kWholeRow = -1;

struct UniformWithout {
  int64_t k;
  int64_t operator()(int64_t d, uint64_t node_key, int64_t* pos, Scratch& scratch) const {
    if (k >= d) return kWholeRow;
    Rng rng(node_key);
    if (k <= kTinyFanout) return floyd_tiny(rng, d, k, pos);
    if (k <= kSmallFanout) return floyd_small(rng, d, k, pos);
    return floyd_large(rng, d, k, pos, scratch);
  }
};

struct UniformWith {
  int64_t k;
  int64_t operator()(int64_t d, uint64_t node_key, int64_t* pos, Scratch&) const {
    if (d == 0) return 0;
    Rng rng(node_key);
    for (int64_t i = 0; i < k; ++i)
      pos[i] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(d)));
    return k;
  }
};

// ---- Weighted sampling (neighbor_kernel.h) ---------------------------------------------
// A weight's bits read as an int32: a positive finite float lies in (0, 0x7f800000) and
// orders like the floats; zero, negatives (sign bit), infinities and NaNs fall outside.
// Integer max and count reductions vectorize, so a run's statistics cost a fraction of a
// nanosecond per entry.
inline int32_t positive_bits(float w) {
  int32_t b;
  std::memcpy(&b, &w, sizeof b);
  return static_cast<uint32_t>(b) - 1u < 0x7f7fffffu ? b : 0;
}

// What decides how a weighted run is sampled: p positive entries, the largest positive
// weight m, and h, the number of positive entries with w >= m / 2 (0.5f * m).
struct WeightStats {
  int64_t positive = 0;
  int64_t heavy = 0;
  float max = 0.0f;
};

// Integer arithmetic only: the AVX2 clone (chosen at load time where the CPU has it)
// gives the same result as the baseline one, twice as wide.
__attribute__((target_clones("avx2", "default"))) WeightStats weight_stats(const float* w,
                                                                           int64_t d) {
  int32_t max_bits = 0;
  int64_t positive = 0;
  for (int64_t i = 0; i < d; ++i) {
    const int32_t b = positive_bits(w[i]);
    max_bits = std::max(max_bits, b);
    positive += b != 0;
  }
  WeightStats s;
  s.positive = positive;
  if (positive == 0) return s;
  std::memcpy(&s.max, &max_bits, sizeof s.max);
  const float half = 0.5f * s.max;
  int32_t half_bits;
  std::memcpy(&half_bits, &half, sizeof half_bits);
  half_bits = std::max(half_bits, 1);  // a subnormal max halves to 0: count positives only
  int64_t heavy = 0;
  for (int64_t i = 0; i < d; ++i) heavy += positive_bits(w[i]) >= half_bits;
  s.heavy = heavy;
  return s;
}

// A row's statistics from its summary (CscView::weight_summaries) when there is one,
// else from a pass over its weights.
inline WeightStats stats_of(const float* w, int64_t d, const WeightSummary* summary) {
  if (summary == nullptr) return weight_stats(w, d);
  WeightStats s;
  s.positive = summary->positive;
  s.heavy = summary->heavy;
  s.max = summary->max;
  return s;
}

// The rejection bound: successive sampling by rejection is used when
// kRejectionSlack * (h - k + 1) >= d. A trial accepts with probability (remaining weight)
// / (d * m), and the remaining weight before any pick is >= (h - k + 1) * m / 2, so a pick
// takes at most 2 * kRejectionSlack trials on average (about 2 with weights uniform in
// (0, 1] and d >> k). Runs outside the bound (few heavy entries among many light ones, or
// k close to d) fall back to Efraimidis-Spirakis, whose cost does not depend on skew.
constexpr int64_t kRejectionSlack = 8;

// One trial of the rejection samplers: one draw x = rng.next(); the 128-bit product x * d
// gives the position i (its high word: Lemire's rng.below(d)) and u in [0, 1) (its low
// word's top 53 bits * 2^-53, uniform given i up to d / 2^64); accepted when w[i] is
// positive and u * m < w[i].
inline bool rejection_trial(Rng& rng, const float* w, uint64_t d, double max, int64_t* i) {
  const unsigned __int128 product = static_cast<unsigned __int128>(rng.next()) * d;
  *i = static_cast<int64_t>(product >> 64);
  const double u = static_cast<double>(static_cast<uint64_t>(product) >> 11) * 0x1.0p-53;
  const float x = w[*i];
  return (u * max < static_cast<double>(x)) & (x <= std::numeric_limits<float>::max());
}

// Prefetches the weights that the first trials of a run of d > kSmallRun entries read by
// rejection (their positions come from the stream alone), at most kPrefetchedTrials of
// them; a run that takes another path loses nothing but the prefetches.
constexpr int64_t kPrefetchedTrials = 24;
inline void prefetch_trials(uint64_t node_key, const float* w, int64_t d, int64_t k) {
  Rng rng(node_key);
  const int64_t trials = std::min(2 * k, kPrefetchedTrials);
  for (int64_t t = 0; t < trials; ++t) {
    const unsigned __int128 product = static_cast<unsigned __int128>(rng.next()) * d;
    __builtin_prefetch(w + static_cast<int64_t>(product >> 64));
  }
}

// Successive sampling by rejection on a run of d <= kSmallRun entries: rejection_tiny's
// trials, the taken positions a 64-bit mask. A trial's position does not depend on the
// trials before it, so the processor overlaps them.
inline int64_t rejection_masked(Rng& rng, const float* w, int64_t d, int64_t k, double max,
                                int64_t* pos) {
  uint64_t taken = 0;
  int64_t c = 0;
  while (c < k) {
    int64_t i;
    const bool accepted = rejection_trial(rng, w, static_cast<uint64_t>(d), max, &i);
    const uint64_t bit = static_cast<uint64_t>(accepted) << i;
    c += (taken & bit) == 0 && accepted;
    taken |= bit;
  }
  int64_t n = 0;
  for (uint64_t bits = taken; bits != 0; bits &= bits - 1) pos[n++] = __builtin_ctzll(bits);
  return n;
}

// Successive sampling by rejection, k <= kTinyFanout: k distinct accepted positions into
// pos, sorted. Taken positions are an array scanned without branches, and a trial's
// outcome moves the count rather than a branch (it is a coin flip to the predictor).
inline int64_t rejection_tiny(Rng& rng, const float* w, int64_t d, int64_t k, double max,
                              int64_t* pos) {
  int64_t taken[kTinyFanout];
  int64_t c = 0;
  while (c < k) {
    int64_t i;
    const bool accepted = rejection_trial(rng, w, static_cast<uint64_t>(d), max, &i);
    bool seen = false;
    for (int64_t q = 0; q < c; ++q) seen |= taken[q] == i;
    taken[c] = i;
    c += accepted & !seen;
  }
  for (int64_t a = 0; a < k; ++a) {
    int64_t rank = 0;
    for (int64_t b = 0; b < k; ++b) rank += taken[b] < taken[a];
    pos[rank] = taken[a];
  }
  return k;
}

// The same for any k, taken positions in an open-addressing set.
inline int64_t rejection_large(Rng& rng, const float* w, int64_t d, int64_t k, double max,
                               int64_t* pos, Scratch& scratch) {
  uint64_t capacity = 16;
  while (capacity < 2 * static_cast<uint64_t>(k)) capacity <<= 1;
  const uint64_t mask = capacity - 1;
  scratch.set.assign(capacity, -1);
  int64_t* set = scratch.set.data();
  int64_t c = 0;
  while (c < k) {
    int64_t i;
    if (!rejection_trial(rng, w, static_cast<uint64_t>(d), max, &i)) continue;
    uint64_t h = mix64(static_cast<uint64_t>(i)) & mask;
    while (set[h] != -1 && set[h] != i) h = (h + 1) & mask;
    if (set[h] == i) continue;
    set[h] = i;
    pos[c++] = i;
  }
  std::sort(pos, pos + c);
  return c;
}

// Efraimidis-Spirakis: one draw per entry, the k smallest keys -log(u) / w. Needs more
// than k positive entries. Positions into pos, sorted.
inline int64_t exponential_keys(Rng& rng, const float* w, int64_t d, int64_t k, int64_t* pos,
                                Scratch& scratch) {
  auto& keyed = scratch.keyed;
  keyed.clear();
  for (int64_t i = 0; i < d; ++i) {
    const double u = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;
    if (positive(w[i])) keyed.emplace_back(-std::log(u) / w[i], i);
  }
  std::nth_element(keyed.begin(), keyed.begin() + k, keyed.end());  // (key, i) order
  for (int64_t i = 0; i < k; ++i) pos[i] = keyed[i].second;
  std::sort(pos, pos + k);
  return k;
}

// Small runs (d <= kSmallRun) keep their untaken positive positions in an array and their
// taken ones in a 64-bit mask: successive sampling by rejection among the untaken entries
// only, so a pick never waits for a taken one to be redrawn (k close to d costs about 3
// trials per pick, where rejection over the whole run would cost up to d).
constexpr int64_t kSmallRun = 64;

// Trials the small-run rejection may take before Efraimidis-Spirakis finishes the run:
// about 2 per pick with weights uniform in (0, 1], so a run falls back rarely (a few in a
// hundred when k = d - 1), and a skewed one costs at most this many trials more.
inline int64_t small_run_trials(int64_t k) { return 8 * k + 16; }

// Successive sampling on a run of d <= kSmallRun entries with p > k positive ones, m the
// largest (neighbor_kernel.h): positions into pos, sorted.
inline int64_t rejection_small(Rng& rng, const float* w, int64_t d, int64_t k, double max,
                               int64_t* pos, Scratch& scratch) {
  uint8_t left[kSmallRun];  // untaken positive positions, in no particular order
  uint64_t rest = 0;
  for (int64_t i = 0; i < d; ++i) {
    left[rest] = static_cast<uint8_t>(i);
    rest += positive_bits(w[i]) != 0;
  }
  uint64_t taken = 0;
  int64_t c = 0;
  for (int64_t t = small_run_trials(k); c < k && t > 0; --t) {
    // The outcome moves counts and masks, not a branch (a coin flip to the predictor).
    const unsigned __int128 product = static_cast<unsigned __int128>(rng.next()) * rest;
    const uint64_t j = static_cast<uint64_t>(product >> 64);
    const double u = static_cast<double>(static_cast<uint64_t>(product) >> 11) * 0x1.0p-53;
    const uint8_t i = left[j];
    const bool accepted = u * max < static_cast<double>(w[i]);
    taken |= static_cast<uint64_t>(accepted) << i;
    rest -= accepted;
    left[j] = accepted ? left[rest] : i;
    c += accepted;
  }
  if (c < k) {  // Efraimidis-Spirakis on the untaken entries, as exponential_keys
    auto& keyed = scratch.keyed;
    keyed.clear();
    for (int64_t i = 0; i < d; ++i) {
      if ((taken >> i) & 1) continue;
      const double u = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;
      if (positive(w[i])) keyed.emplace_back(-std::log(u) / w[i], i);
    }
    std::nth_element(keyed.begin(), keyed.begin() + (k - c), keyed.end());
    for (int64_t q = 0; q < k - c; ++q) taken |= uint64_t{1} << keyed[q].second;
  }
  int64_t n = 0;
  for (uint64_t bits = taken; bits != 0; bits &= bits - 1) pos[n++] = __builtin_ctzll(bits);
  return n;
}

inline int64_t positive_positions(const float* w, int64_t d, int64_t* pos) {
  int64_t c = 0;
  for (int64_t i = 0; i < d; ++i) {
    if (positive(w[i])) pos[c++] = i;
  }
  return c;
}

// The weighted algorithms of neighbor_kernel.h on a run of d entries with weights w and
// fanout k >= 1, writing positions in the run (room for min(k, d), or k with replacement).
// summary: the run's (a whole row's) WeightSummary, or null to read its weights.
struct WeightedWithout {
  int64_t k;
  int64_t operator()(int64_t d, uint64_t node_key, const float* w, int64_t* pos, Scratch& scratch,
                     const WeightSummary* summary = nullptr) const {
    if (k >= d) return positive_positions(w, d, pos);
    const WeightStats s = stats_of(w, d, summary);
    if (s.positive <= k) return positive_positions(w, d, pos);
    Rng rng(node_key);
    if (kRejectionSlack * (s.heavy - k + 1) >= d) {
      if (d <= kSmallRun) return rejection_masked(rng, w, d, k, s.max, pos);
      if (k <= kTinyFanout) return rejection_tiny(rng, w, d, k, s.max, pos);
      return rejection_large(rng, w, d, k, s.max, pos, scratch);
    }
    if (d <= kSmallRun && kRejectionSlack * s.heavy >= s.positive)
      return rejection_small(rng, w, d, k, s.max, pos, scratch);
    return exponential_keys(rng, w, d, k, pos, scratch);
  }
};

struct WeightedWith {
  int64_t k;
  int64_t operator()(int64_t d, uint64_t node_key, const float* w, int64_t* pos, Scratch& scratch,
                     const WeightSummary* summary = nullptr) const {
    const WeightStats s = stats_of(w, d, summary);
    if (s.positive == 0) return 0;
    Rng rng(node_key);
    if (kRejectionSlack * s.heavy >= d) {  // rejection, as without replacement
      for (int64_t j = 0; j < k; ++j) {
        while (!rejection_trial(rng, w, static_cast<uint64_t>(d), s.max, pos + j)) {
        }
      }
      return k;
    }
    auto& cumulative = scratch.cumulative;
    cumulative.resize(static_cast<size_t>(d));
    double total = 0.0;
    int64_t last = -1;
    for (int64_t i = 0; i < d; ++i) {
      if (positive(w[i])) {
        total += w[i];
        last = i;
      }
      cumulative[i] = total;
    }
    for (int64_t j = 0; j < k; ++j) {
      const double x = rng.uniform() * total;
      int64_t i =
          std::upper_bound(cumulative.begin(), cumulative.begin() + d, x) - cumulative.begin();
      pos[j] = std::min(i, last);
    }
    return k;
  }
};

// The same writing ids (temporal_kernel.cc, on a filtered run): out has room for the
// positions first.
template <class Weighted>
int64_t weighted_ids(const Weighted& algorithm, const int64_t* row, const float* w, int64_t d,
                     uint64_t node_key, int64_t* out, Scratch& scratch) {
  const int64_t c = algorithm(d, node_key, w, out, scratch);
  for (int64_t j = 0; j < c; ++j) out[j] = row[out[j]];
  return c;
}

struct All {
  bool weighted;
  int64_t operator()(const int64_t* row, const float* w, int64_t d, uint64_t, int64_t* out,
                     Scratch&) const {
    return weighted ? copy_positive(row, w, d, out) : copy_row(row, d, out);
  }
};

}  // namespace
}  // namespace partita::sample::detail
