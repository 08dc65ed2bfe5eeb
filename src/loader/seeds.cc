#include "partita/loader/seeds.h"

#include <algorithm>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/random.h"

namespace partita::loader {
namespace {

// Keeps the shuffle stream apart from the sampling streams keyed by (seed, epoch, batch).
constexpr uint64_t kShuffleStream = 0x5eed5eed5eedULL;

}  // namespace

std::vector<int64_t> epoch_seeds(ArrayView<const int64_t> ids, uint64_t seed, uint64_t epoch) {
  std::vector<int64_t> out(ids.begin(), ids.end());
  Rng rng(stream_key(seed, epoch, kShuffleStream));
  for (int64_t i = static_cast<int64_t>(out.size()) - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(out[i], out[j]);
  }
  return out;
}

int64_t steps_per_epoch(int64_t local_seeds, int64_t batch_size) {
  PARTITA_CHECK(batch_size >= 1, Error, "batch size: must be >= 1, got {}", batch_size);
  PARTITA_CHECK(local_seeds >= 0, Error, "seed count: must be >= 0, got {}", local_seeds);
  return (local_seeds + batch_size - 1) / batch_size;
}

std::vector<int64_t> batch_seeds(const std::vector<int64_t>& shuffled, int64_t step,
                                 int64_t batch_size) {
  PARTITA_CHECK(step >= 0, Error, "batch step: must be >= 0, got {}", step);
  const int64_t n = static_cast<int64_t>(shuffled.size());
  const int64_t steps = steps_per_epoch(n, batch_size);
  if (n == 0) return {};
  if (step < steps) {
    const int64_t begin = step * batch_size;
    const int64_t end = std::min(n, begin + batch_size);
    return std::vector<int64_t>(shuffled.begin() + begin, shuffled.begin() + end);
  }
  const int64_t count = std::min(batch_size, n);
  const int64_t start = ((step - steps) % n) * (batch_size % n) % n;
  std::vector<int64_t> out(count);
  for (int64_t i = 0; i < count; ++i) out[i] = shuffled[(start + i) % n];
  return out;
}

std::vector<int64_t> even_share(ArrayView<const int64_t> ids, int rank, int world) {
  PARTITA_CHECK(world >= 1 && rank >= 0 && rank < world, Error,
                "even share: rank {} out of world {}", rank, world);
  const int64_t n = ids.size();
  const int64_t base = n / world;
  const int64_t extra = n % world;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  const int64_t size = base + (rank < extra ? 1 : 0);
  return std::vector<int64_t>(ids.begin() + begin, ids.begin() + begin + size);
}

}  // namespace partita::loader
