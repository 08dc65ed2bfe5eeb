// Seed plans per role: see partita/loader/seed_plans.h.
#include "partita/loader/seed_plans.h"

namespace partita::loader {

SeedShare::SeedShare(const store::DistGraph& graph, int rank, int size)
    : graph_(&graph), rank_(rank), size_(size), even_(graph.replicated() || graph.client()) {}

std::vector<int64_t> SeedShare::operator()(const std::vector<int64_t>& global_batch) const {
  if (even_) return even_share(global_batch, rank_, size_);
  std::vector<int64_t> mine;
  for (int64_t gid : global_batch)
    if (graph_->owns(gid)) mine.push_back(gid);
  return mine;
}

}  // namespace partita::loader
