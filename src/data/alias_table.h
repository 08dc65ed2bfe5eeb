#pragma once
// Walker/Vose alias tables: O(n) construction, O(1) weighted draws. Private to data/.
// Construction is serial and deterministic; draws are const and thread-safe (each caller
// brings its own Rng).
#include <cstdint>
#include <vector>

#include "partita/core/random.h"

namespace partita::data {

// One slot of a table: pick `keep` with probability `prob`, else `alias`. Each item carries
// a 16-bit tag (the generator stores the node's class) so that one 16-byte load gives both.
struct AliasSlot {
  float prob = 1;
  uint32_t keep = 0;
  uint32_t alias = 0;
  uint16_t keep_tag = 0;
  uint16_t alias_tag = 0;
};
static_assert(sizeof(AliasSlot) == 16, "one slot per 16 bytes: never straddles a cache line");

// Fills slots[0, n) for items ids[0, n) with weights w[0, n) (>= 0; all zero means uniform)
// and tags[0, n) (nullptr: all 0).
inline void build_alias_slots(const double* w, const uint32_t* ids, const uint16_t* tags, int64_t n,
                              AliasSlot* slots) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += w[i];
  std::vector<double> scaled(static_cast<size_t>(n));
  std::vector<int64_t> small, large;
  for (int64_t i = 0; i < n; ++i) {
    scaled[i] = sum > 0 ? w[i] * static_cast<double>(n) / sum : 1.0;
    (scaled[i] < 1.0 ? small : large).push_back(i);
    slots[i].prob = 1;
    slots[i].keep = slots[i].alias = ids[i];
    slots[i].keep_tag = slots[i].alias_tag = tags != nullptr ? tags[i] : 0;
  }
  while (!small.empty() && !large.empty()) {
    const int64_t s = small.back(), l = large.back();
    small.pop_back();
    slots[s].prob = static_cast<float>(scaled[s]);
    slots[s].alias = ids[l];
    slots[s].alias_tag = tags != nullptr ? tags[l] : 0;
    scaled[l] += scaled[s] - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers (rounding) keep themselves with probability 1.
}

// Resolves slot `s` with a uniform `u` in [0, 1).
inline bool alias_keeps(const AliasSlot& s, float u) { return u < s.prob; }

// A draw from the n slots starting at `slots`.
inline uint32_t draw_alias(const AliasSlot* slots, uint64_t n, Rng& rng) {
  const AliasSlot& s = slots[rng.below(n)];
  return alias_keeps(s, static_cast<float>(rng.uniform())) ? s.keep : s.alias;
}

}  // namespace partita::data
