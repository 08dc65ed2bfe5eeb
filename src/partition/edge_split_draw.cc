// The random draws of a sampled link-prediction split (edge_split_draw.h).
#include "edge_split_draw.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace partita::partition {

HeldPicks draw_held_units(int64_t units, int64_t valid, int64_t test, Rng& rng) {
  const int64_t held = valid + test;
  std::vector<uint64_t> picked(static_cast<size_t>((units + 63) / 64), 0);
  auto has = [&](int64_t i) { return (picked[static_cast<size_t>(i >> 6)] >> (i & 63)) & 1; };
  auto set = [&](int64_t i) { picked[static_cast<size_t>(i >> 6)] |= uint64_t{1} << (i & 63); };
  for (int64_t j = units - held; j < units; ++j) {
    const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j + 1)));
    set(has(t) ? j : t);
  }
  HeldPicks out;
  out.picks.reserve(static_cast<size_t>(held));
  for (size_t w = 0; w < picked.size(); ++w)
    for (uint64_t bits = picked[w]; bits != 0; bits &= bits - 1)
      out.picks.push_back(static_cast<int64_t>(w * 64) + __builtin_ctzll(bits));
  out.role.resize(out.picks.size());  // position in the shuffled order
  for (size_t i = 0; i < out.role.size(); ++i) out.role[i] = static_cast<int64_t>(i);
  for (size_t i = out.role.size(); i > 1; --i) std::swap(out.role[i - 1], out.role[rng.below(i)]);
  return out;
}

bool negatives_by_enumeration(int64_t n, int64_t units, int64_t count) {
  // Rejection while at least half of all pairs are free and the draw takes at most half of
  // them (each try then succeeds with probability >= 1/8); enumeration costs O(n^2) =
  // O(edges) exactly otherwise, so a dense graph never makes the draw spin.
  const double all_pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
  const double free_pairs = all_pairs - static_cast<double>(units);
  return free_pairs < all_pairs / 2 || free_pairs < 2 * static_cast<double>(count);
}

void AcceptedPairs::flag_repeats(const std::vector<int64_t>& pairs,
                                 std::vector<uint8_t>* rejected) const {
  std::unordered_set<Pair, Hash> batch;
  for (size_t j = 0; j < pairs.size() / 2; ++j) {
    const Pair key = std::minmax(pairs[2 * j], pairs[2 * j + 1]);  // (lo, hi)
    if (owns_(key.first, key.second) && (pairs_.count(key) || !batch.insert(key).second))
      (*rejected)[j] = 1;
  }
}

void AcceptedPairs::add(const std::vector<int64_t>& pairs, int64_t count) {
  for (size_t j = 0; j < static_cast<size_t>(count); ++j) {
    const Pair key = std::minmax(pairs[2 * j], pairs[2 * j + 1]);  // (lo, hi)
    if (owns_(key.first, key.second)) pairs_.insert(key);
  }
}

void draw_negatives_by_rejection(int64_t n, int64_t count, Rng& rng, const NegativeJudge& judge,
                                 const KeepNegative& keep, int64_t batch) {
  std::vector<int64_t> pairs;
  std::vector<Rng> after_pair;  // the stream after a candidate's two ids
  std::vector<uint8_t> swap;
  int64_t done = 0;
  // Batches double while no candidate is rejected and restart near the last run of
  // accepted ones after a rejection: a rejection wastes the rest of its batch.
  const int64_t smallest = std::min<int64_t>(1024, batch);
  int64_t size = smallest;
  while (done < count) {
    // Candidates drawn as if every one were kept (a, b, then the orientation bit); the
    // first one rejected rewinds the stream to just after its ids, as a one-by-one draw.
    const int64_t k = std::min(count - done, size);
    pairs.assign(static_cast<size_t>(2 * k), 0);
    after_pair.assign(static_cast<size_t>(k), rng);
    swap.assign(static_cast<size_t>(k), 0);
    for (int64_t j = 0; j < k; ++j) {
      pairs[2 * j] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      pairs[2 * j + 1] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      after_pair[j] = rng;
      swap[j] = static_cast<uint8_t>(rng.below(2));
    }
    const std::vector<uint8_t> rejected = judge.rejected(pairs);
    int64_t kept = 0;
    while (kept < k && !rejected[kept]) ++kept;
    judge.accepted(pairs, kept);
    for (int64_t j = 0; j < kept; ++j)  // swap[j] 1: (b, a)
      keep(done + j, pairs[2 * j + swap[j]], pairs[2 * j + 1 - swap[j]]);
    done += kept;
    if (kept < k) rng = after_pair[kept];
    size = kept == k ? std::min(2 * size, batch) : std::clamp(2 * kept, smallest, batch);
  }
}

std::vector<int64_t> draw_negatives_by_enumeration(
    int64_t n, int64_t count, Rng& rng, const std::function<bool(int64_t, int64_t)>& connected) {
  std::vector<std::pair<int64_t, int64_t>> free;
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = a + 1; b < n; ++b)
      if (!connected(a, b)) free.emplace_back(a, b);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(2 * count));
  for (int64_t i = 0; i < count; ++i) {  // partial Fisher-Yates
    const int64_t j = i + static_cast<int64_t>(rng.below(free.size() - i));
    std::swap(free[i], free[j]);
    int64_t a = free[i].first, b = free[i].second;
    if (rng.below(2) == 1) std::swap(a, b);
    out.insert(out.end(), {a, b});
  }
  return out;
}

}  // namespace partita::partition
