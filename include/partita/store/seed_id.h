#pragma once
// SeedId: one id of a split (training, validation, test) as every rank of a job knows it.
// It lives here, below runtime/ and loader/, because both hold them: runtime gathers the
// split ids of a job (runtime/split_ids.h) and loader cuts them into global batches
// (loader/seeds.h, loader::SeedId).
#include <cstdint>

namespace partita::store {

// Its original (dataset) id, which orders the shuffle, and its global id in the
// partition, which the sampler takes.
struct SeedId {
  int64_t original = 0;
  int64_t global = 0;
};

}  // namespace partita::store
