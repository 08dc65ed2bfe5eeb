#include "partita/loader/seeds.h"

#include <algorithm>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
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

int64_t steps_per_epoch(int64_t seeds, int64_t batch_size) {
  PARTITA_CHECK_PARAM(batch_size >= 1, "batch_size", "must be >= 1, got {}", batch_size);
  PARTITA_CHECK(seeds >= 0, Error, "seed count: must be >= 0, got {}", seeds);
  return (seeds + batch_size - 1) / batch_size;
}

std::vector<std::vector<int64_t>> chunk(const std::vector<int64_t>& ids, int64_t batch_size) {
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(steps_per_epoch(n, batch_size)));
  for (size_t s = 0; s < out.size(); ++s) {
    const int64_t begin = static_cast<int64_t>(s) * batch_size;
    out[s].assign(ids.begin() + begin, ids.begin() + std::min(n, begin + batch_size));
  }
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

GlobalBatches::GlobalBatches(std::vector<SeedId> ids, int64_t batch_size)
    : batch_size_(batch_size) {
  PARTITA_CHECK_PARAM(batch_size >= 1, "batch_size", "must be >= 1, got {}", batch_size);
  std::sort(ids.begin(), ids.end(),
            [](const SeedId& a, const SeedId& b) { return a.original < b.original; });
  for (size_t i = 1; i < ids.size(); ++i)
    PARTITA_CHECK(ids[i].original != ids[i - 1].original, Error,
                  "training ids: original id {} appears twice (global ids {} and {})",
                  ids[i].original, ids[i - 1].global, ids[i].global);
  globals_.reserve(ids.size());
  for (const SeedId& id : ids) globals_.push_back(id.global);
}

int64_t GlobalBatches::batch_size(int64_t step) const {
  PARTITA_CHECK(step >= 0 && step < steps(), Error, "batch step {} out of [0, {})", step, steps());
  return std::min(batch_size_, num_ids() - step * batch_size_);
}

std::vector<std::vector<int64_t>> GlobalBatches::epoch_batches(
    uint64_t seed, uint64_t epoch,
    const std::function<std::vector<int64_t>(const std::vector<int64_t>&)>& share) const {
  std::vector<std::vector<int64_t>> out = chunk(epoch_seeds(globals_, seed, epoch), batch_size_);
  for (std::vector<int64_t>& batch : out) batch = share(batch);
  return out;
}

}  // namespace partita::loader
