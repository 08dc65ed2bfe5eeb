#pragma once
// Seed plans per role (torch-free): which ids of a split every rank learns, and which seeds
// of a global batch (loader::GlobalBatches) this rank trains on.
//
// Worker mode over a partition: each rank holds the ids of the nodes it owns; every rank
// learns every id (runtime/split_ids.h: one allgather) and SeedShare keeps the seeds of a
// global batch this rank owns. Replicated mode (every rank holds the whole graph)
// and the trainers of server-client mode (which own nothing): every rank already knows
// every id (no collective), and SeedShare takes an even share of each global batch among
// the ranks that train (loader::even_share). Either way every rank runs every step.
#include <cstdint>
#include <vector>

#include "partita/loader/seeds.h"
#include "partita/store/dist_graph.h"

namespace partita::loader {

// This rank's part of each global batch. Cheap to copy; thread-compatible (const).
class SeedShare {
 public:
  // Even shares when `graph` is replicated or a client's (server-client trainer), the
  // owned seeds otherwise. rank in [0, size).
  SeedShare(const store::DistGraph& graph, int rank, int size);

  // Seeds of `global_batch` (global ids) this rank trains on, in batch order.
  std::vector<int64_t> operator()(const std::vector<int64_t>& global_batch) const;

  bool even() const { return even_; }

 private:
  const store::DistGraph* graph_;
  int rank_, size_;
  bool even_;
};

}  // namespace partita::loader
