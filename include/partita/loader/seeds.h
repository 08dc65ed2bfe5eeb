#pragma once
// Seeds of one rank for one epoch: a deterministic shuffle, cut into batches. Every rank
// runs the same number of steps per epoch (DESIGN 7); the trainer agrees that count with a
// collective (the max of steps_per_epoch over ranks) and a rank with fewer seeds wraps
// around in batch_seeds. Pure functions: no state, thread-safe.
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"

namespace partita::loader {

// A permutation of `ids` that depends only on (ids, seed, epoch): Fisher-Yates driven by
// Rng(stream_key(seed, epoch, kShuffleStream)). Distinct ids in, distinct ids out.
std::vector<int64_t> epoch_seeds(ArrayView<const int64_t> ids, uint64_t seed, uint64_t epoch);

// ceil(local_seeds / batch_size); 0 when there are no seeds. Throws Error if batch_size < 1
// or local_seeds < 0.
int64_t steps_per_epoch(int64_t local_seeds, int64_t batch_size);

// Seeds of batch `step` (>= 0) of `shuffled`. Within steps_per_epoch(): the slice
// [step * batch_size, min(n, (step + 1) * batch_size)), so the last one may be short. Past
// it (a rank with fewer seeds than the agreed step count): min(batch_size, n) seeds taken
// cyclically from the start again, extra step j (0-based) starting at j * batch_size mod n,
// so extra steps reuse seeds in shuffled order and a batch never repeats a seed. Empty when
// `shuffled` is empty. Throws Error if batch_size < 1 or step < 0.
std::vector<int64_t> batch_seeds(const std::vector<int64_t>& shuffled, int64_t step,
                                 int64_t batch_size);

// Replicated mode (every rank sees every id): the contiguous share of rank `rank` out of
// `world` of `ids`, sizes differing by at most one (the first n % world ranks get one more).
// Throws Error unless 0 <= rank < world.
std::vector<int64_t> even_share(ArrayView<const int64_t> ids, int rank, int world);

}  // namespace partita::loader
