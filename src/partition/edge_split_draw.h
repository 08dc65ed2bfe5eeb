#pragma once
// Private to partition/: the random draws of a sampled link-prediction split
// (edge_split.h), shared by the single-process split and the distributed one
// (dist_edge_split.h). Both consume one random stream in the same order, so with the same
// seed they hold out the same units and draw the same negatives whatever the rank count.
#include <cstdint>
#include <functional>
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

// For candidate pairs (interleaved a, b; a != b), whether each is joined by an edge either
// way in the full graph (1) or not (0). The distributed split asks every rank about the
// rows it holds.
using ConnectedBatch = std::function<std::vector<uint8_t>(const std::vector<int64_t>& pairs)>;

// `count` distinct non-edge pairs {a, b}, a != b, oriented at random, interleaved, by
// rejection: draws a, b uniform, keeps unseen unconnected pairs. Candidates are asked of
// `connected` in batches (at most `batch` at a time); the stream consumed is exactly that of
// asking one candidate at a time.
std::vector<int64_t> draw_negatives_by_rejection(int64_t n, int64_t count, Rng& rng,
                                                 const ConnectedBatch& connected,
                                                 int64_t batch = int64_t{1} << 16);

// The same by enumeration: the free pairs (a < b, `connected(a, b)` false) in order of a,
// then b, a partial Fisher-Yates shuffle picks `count` of them, each oriented at random.
std::vector<int64_t> draw_negatives_by_enumeration(
    int64_t n, int64_t count, Rng& rng, const std::function<bool(int64_t, int64_t)>& connected);

}  // namespace partita::partition
