#pragma once
// The link task's state inside a Trainer (trainer.h, "Link prediction"; link_task.cc).
#include <cstdint>
#include <optional>
#include <vector>

#include "partita/loader/link_batches.h"
#include "partita/train/trainer.h"

namespace partita::train {

struct Trainer::LinkData {
  // Every training pair of the job by global index ([total, 2] row-major, global ids), on
  // every rank, and its key (loader::pair_key).
  std::vector<int64_t> pairs;
  std::vector<int64_t> keys;
  int64_t first = 0, count = 0;  // the indices this rank trains on: [first, first + count)
  // Held-out pairs and their negatives ([k, 2] row-major, global ids), on every rank.
  std::vector<int64_t> valid_pos, valid_neg, test_pos, test_neg;
  std::optional<loader::NegativeSampler> negatives;
  std::vector<loader::LinkStep> steps;  // this rank's steps of the current epoch (no seeds)
};

}  // namespace partita::train
