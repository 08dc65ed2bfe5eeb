#pragma once
// The epoch plan of a loader over a split of the graph's nodes (partita.NeighborLoader, on
// either kind of partition): the C++ trainer's global plan (loader/seeds.h GlobalBatches:
// every id of the split over all ranks, a (seed, epoch) shuffle cut into global batches,
// each rank taking its share), or with shuffle off the ids in original-id order; and the
// base of those loaders, whose loop e runs the plan's epoch e.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph_binding.h"
#include "loader_base.h"
#include "partita/loader/seeds.h"
#include "partita/runtime/session.h"

namespace partita::python {

class SplitPlan {
 public:
  // Collective (Graph::all_ids). Throws ParameterError(batch_size) when batch_size < 1.
  SplitPlan(Graph& graph, runtime::Split split, int64_t batch_size, bool shuffle);

  int64_t steps() const { return plan_.steps(); }
  int64_t num_ids() const { return plan_.num_ids(); }
  // Seeds of global batch `step` over all ranks.
  int64_t batch_size(int64_t step) const { return plan_.batch_size(step); }
  // This rank's seeds of every step of `epoch` under `seed` (Graph::share_of).
  std::vector<std::vector<int64_t>> epoch_seeds(Graph& graph, uint64_t seed, uint64_t epoch) const;

 private:
  static loader::GlobalBatches build(Graph& graph, runtime::Split split, int64_t batch_size,
                                     std::vector<int64_t>& ordered);

  bool shuffle_;
  int64_t batch_size_;
  std::vector<int64_t> ordered_;  // every id of the split by original id (shuffle off)
  loader::GlobalBatches plan_;
};

// A loader over a split (loader_base.h): loop e runs epoch e of its SplitPlan.
class SplitLoader : public LoaderBase {
 public:
  int64_t steps() const { return plan_->steps(); }
  int64_t num_ids() const { return plan_->num_ids(); }

 protected:
  using LoaderBase::LoaderBase;

  // Builds the plan of `split` (train, valid or val, test: split_of) in global batches of
  // options().loader.batch_size. Collective; call it in the loader's constructor.
  void plan_split(Graph& graph, const std::string& split, bool shuffle);
  // Seeds of global batch `step` over all ranks.
  int64_t global_size(int64_t step) const { return plan_->batch_size(step); }

 private:
  Loop plan_loop(Graph& graph, int64_t epoch) final;

  std::optional<SplitPlan> plan_;
};

}  // namespace partita::python
