// Seeded, balanced random assignment.
#include <utility>

#include "partita/core/random.h"
#include "partita/partition/assign.h"

namespace partita::partition {
namespace {
constexpr uint64_t kRandomAssignTag = 0x7061727469746100ULL;  // "partita\0": stream of this use
}  // namespace

std::vector<int32_t> assign_random(int64_t num_nodes, int num_parts, uint64_t seed) {
  // Balanced labels: node count of part p is floor(n/P) or that + 1 (the first n mod P parts).
  std::vector<int32_t> part(static_cast<size_t>(num_nodes));
  const int64_t base = num_parts > 0 ? num_nodes / num_parts : 0;
  const int64_t extra = num_parts > 0 ? num_nodes % num_parts : 0;
  int64_t v = 0;
  for (int p = 0; p < num_parts; ++p) {
    const int64_t count = base + (p < extra ? 1 : 0);
    for (int64_t i = 0; i < count; ++i) part[v++] = p;
  }
  // Fisher-Yates: a uniformly random permutation of the labels, fixed by the seed.
  Rng rng(stream_key(seed, kRandomAssignTag));
  for (int64_t i = num_nodes - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(part[i], part[j]);
  }
  return part;
}

}  // namespace partita::partition
