#include "split_plan.h"

#include <algorithm>
#include <utility>

namespace partita::python {

SplitPlan::SplitPlan(Graph& graph, runtime::Split split, int64_t batch_size, bool shuffle)
    : shuffle_(shuffle),
      batch_size_(batch_size),
      plan_(build(graph, split, batch_size, ordered_)) {}

loader::GlobalBatches SplitPlan::build(Graph& graph, runtime::Split split, int64_t batch_size,
                                       std::vector<int64_t>& ordered) {
  std::vector<loader::SeedId> ids = graph.all_ids(split);
  std::sort(ids.begin(), ids.end(), [](const loader::SeedId& a, const loader::SeedId& b) {
    return a.original < b.original;
  });
  for (const loader::SeedId& id : ids) ordered.push_back(id.global);
  return loader::GlobalBatches(std::move(ids), batch_size);
}

std::vector<std::vector<int64_t>> SplitPlan::epoch_seeds(Graph& graph, uint64_t seed,
                                                         uint64_t epoch) const {
  const auto share = [&graph](const std::vector<int64_t>& b) { return graph.share_of(b); };
  if (shuffle_) return plan_.epoch_batches(seed, epoch, share);
  std::vector<std::vector<int64_t>> batches;
  for (const std::vector<int64_t>& b : loader::chunk(ordered_, batch_size_))
    batches.push_back(share(b));
  return batches;
}

void SplitLoader::plan_split(Graph& graph, const std::string& split, bool shuffle) {
  plan_.emplace(graph, split_of(split), options().loader.batch_size, shuffle);
}

LoaderBase::Loop SplitLoader::plan_loop(Graph& graph, int64_t epoch) {
  Loop loop;
  loop.key = static_cast<uint64_t>(epoch);
  loop.seeds = plan_->epoch_seeds(graph, options().seed, loop.key);
  return loop;
}

}  // namespace partita::python
