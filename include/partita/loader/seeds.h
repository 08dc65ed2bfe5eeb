#pragma once
// Seeds of an epoch: one deterministic (seed, epoch) shuffle of every training id of the
// job, cut into global batches, each split by owner (DESIGN data flow, loader/). 1 rank
// and P ranks therefore train on the same global batches, whatever the partitioning: the
// shuffle runs over the ids sorted by their original (dataset) ids, and the sampler keys
// its streams by original ids too, so each seed's sampled tree is the same wherever it is
// sampled. Pure functions and immutable objects: thread-safe.
#include <cstdint>
#include <functional>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/store/seed_id.h"

namespace partita::loader {

// A permutation of `ids` that depends only on (ids, seed, epoch): Fisher-Yates driven by
// Rng(stream_key(seed, epoch, kShuffleStream)). Distinct ids in, distinct ids out.
std::vector<int64_t> epoch_seeds(ArrayView<const int64_t> ids, uint64_t seed, uint64_t epoch);

// ceil(seeds / batch_size); 0 when there are no seeds. Throws ParameterError if batch_size < 1,
// Error if seeds < 0.
int64_t steps_per_epoch(int64_t seeds, int64_t batch_size);

// `ids` cut into consecutive batches of batch_size (the last one may be shorter). Throws
// ParameterError if batch_size < 1.
std::vector<std::vector<int64_t>> chunk(const std::vector<int64_t>& ids, int64_t batch_size);

// Replicated mode (every rank sees every id): the contiguous share of rank `rank` out of
// `world` of `ids`, sizes differing by at most one (the first n % world ranks get one more).
// Throws Error unless 0 <= rank < world.
std::vector<int64_t> even_share(ArrayView<const int64_t> ids, int rank, int world);

// One training id known to every rank (store/seed_id.h).
using SeedId = store::SeedId;

// The global batch plan of a job. Every rank builds it from the same set of ids (e.g. an
// allgather of every rank's training ids) and gets the same plan.
class GlobalBatches {
 public:
  // `ids`: every training id of the job, in any order, original ids distinct. Throws
  // ParameterError if batch_size < 1, Error if two entries share an original id.
  GlobalBatches(std::vector<SeedId> ids, int64_t batch_size);

  int64_t num_ids() const { return static_cast<int64_t>(globals_.size()); }
  // ceil(num_ids / batch_size): the same on every rank.
  int64_t steps() const { return steps_per_epoch(num_ids(), batch_size_); }
  // Seeds of global batch `step` over all ranks: batch_size, less on the last step.
  int64_t batch_size(int64_t step) const;

  // This rank's seeds of every step of `epoch` (steps() lists, some maybe empty): global
  // batch s is positions [s * batch_size, (s + 1) * batch_size) of epoch_seeds over the
  // global ids ordered by original id, and `share` picks this rank's part of it (in
  // batch order, e.g. the ids it owns).
  std::vector<std::vector<int64_t>> epoch_batches(
      uint64_t seed, uint64_t epoch,
      const std::function<std::vector<int64_t>(const std::vector<int64_t>&)>& share) const;

 private:
  std::vector<int64_t> globals_;  // global ids ordered by original id
  int64_t batch_size_;
};

}  // namespace partita::loader
