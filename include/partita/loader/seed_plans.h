#pragma once
// Seed plans per role (torch-free): which ids of a split every rank learns, and which seeds
// of a global batch (loader::GlobalBatches) this rank trains on.
//
// Worker mode over a partition: each rank holds the ids of the nodes it owns;
// gather_split_ids gathers every rank's (one allgather, collective) and SeedShare keeps the
// seeds of a global batch this rank owns. Replicated mode (every rank holds the whole graph)
// and the trainers of server-client mode (which own nothing): every rank already knows
// every id (no collective), and SeedShare takes an even share of each global batch among
// the ranks that train (loader::even_share). Either way every rank runs every step.
#include <cstdint>
#include <vector>

#include "partita/comm/collectives.h"
#include "partita/core/array_view.h"
#include "partita/loader/seeds.h"
#include "partita/store/dist_graph.h"

namespace partita::loader {

// Every id of a split over all ranks, as (original id, global id): `local` are this rank's
// ids of the split (global ids of nodes it holds). Collective over `coll` (one allgather)
// unless graph.replicated(), where `local` already is every id.
std::vector<SeedId> gather_split_ids(const store::DistGraph& graph, ArrayView<const int64_t> local,
                                     Collectives& coll);

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
