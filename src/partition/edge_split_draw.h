#pragma once
// Private to partition/: the random draws of a sampled link-prediction split
// (edge_split.h, edge_split_steps.h). Every rank consumes one random stream in the same
// order, so with the same seed the same units are held out and the same negatives drawn
// whatever the rank count.
#include <cstdint>
#include <functional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "partita/core/random.h"

namespace partita::partition {

// The held-out units: Floyd's algorithm picks `valid + test` distinct indices of
// [0, units) (in the split's global unit order), then a shuffle of the sorted picks gives
// each a role. picks ascending; pick i is a validation unit when role[i] < valid, else a
// test unit. Holds units/8 bytes of membership bits and 16 bytes per pick.
struct HeldPicks {
  std::vector<int64_t> picks, role;
};
HeldPicks draw_held_units(int64_t units, int64_t valid, int64_t test, Rng& rng);

// Whether the `count` negatives among n nodes with `units` units are drawn by enumerating
// the free pairs (few of them) rather than by rejection.
bool negatives_by_enumeration(int64_t n, int64_t units, int64_t count);

// Judges candidate negatives, a batch at a time. rejected(pairs) gets candidate pairs
// (interleaved a, b) and returns 1 for each to reject: a == b, an edge either way in the
// full graph, or an unordered pair already accepted or equal to an earlier candidate of the
// batch (only the first rejection of a batch matters, so an earlier candidate that is
// itself rejected may count too). accepted(pairs, k) then says that the batch's first k
// candidates were accepted. The distributed split asks every rank about the rows and the
// accepted pairs it holds.
struct NegativeJudge {
  std::function<std::vector<uint8_t>(const std::vector<int64_t>& pairs)> rejected;
  std::function<void(const std::vector<int64_t>& pairs, int64_t accepted)> accepted;
};

// Receives the k-th accepted negative (k from 0), oriented.
using KeepNegative = std::function<void(int64_t k, int64_t a, int64_t b)>;

// `count` distinct non-edge pairs {a, b}, a != b, oriented at random, by rejection: draws
// a, b uniform, keeps unseen unconnected pairs. Candidates are judged in batches (at most
// `batch` at a time, sizes a function of the draw alone, so the same on every rank); the
// stream consumed is exactly that of judging one candidate at a time.
void draw_negatives_by_rejection(int64_t n, int64_t count, Rng& rng, const NegativeJudge& judge,
                                 const KeepNegative& keep, int64_t batch = int64_t{1} << 16);

// A hash of the unordered pair {lo, hi} (lo <= hi): AcceptedPairs' buckets, and the rank
// holding the pair in sets shared by hash (edge_split_steps.h).
inline uint64_t pair_hash(int64_t lo, int64_t hi) {
  return mix64(static_cast<uint64_t>(lo) * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(hi));
}

// The accepted unordered pairs a NegativeJudge holds: those `owns(lo, hi)` picks (all of them
// in one process, a hash share on each rank).
class AcceptedPairs {
 public:
  explicit AcceptedPairs(std::function<bool(int64_t lo, int64_t hi)> owns)
      : owns_(std::move(owns)) {}
  // Sets rejected[j] for every owned candidate j equal to an accepted pair or to an earlier
  // candidate of `pairs`.
  void flag_repeats(const std::vector<int64_t>& pairs, std::vector<uint8_t>* rejected) const;
  // Adds the owned ones among the first `count` candidates of `pairs`.
  void add(const std::vector<int64_t>& pairs, int64_t count);

 private:
  using Pair = std::pair<int64_t, int64_t>;  // (lo, hi)
  struct Hash {
    size_t operator()(const Pair& p) const { return pair_hash(p.first, p.second); }
  };
  std::function<bool(int64_t, int64_t)> owns_;
  std::unordered_set<Pair, Hash> pairs_;
};

// The same by enumeration: the free pairs (a < b, `connected(a, b)` false) in order of a,
// then b, a partial Fisher-Yates shuffle picks `count` of them, each oriented at random.
std::vector<int64_t> draw_negatives_by_enumeration(
    int64_t n, int64_t count, Rng& rng, const std::function<bool(int64_t, int64_t)>& connected);

}  // namespace partita::partition
