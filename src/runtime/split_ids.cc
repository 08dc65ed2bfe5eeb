#include "partita/runtime/split_ids.h"

namespace partita::runtime {

const NameTable<Split>& split_names() {
  static const NameTable<Split> names{
      {"train", Split::kTrain}, {"valid", Split::kValid}, {"test", Split::kTest}};
  return names;
}

std::vector<store::SeedId> own_split_ids(const store::DistGraph& graph, Split split) {
  std::vector<store::SeedId> mine;
  if (graph.client()) return mine;
  const ArrayView<const int64_t> ids = split == Split::kTrain   ? graph.train_ids()
                                       : split == Split::kValid ? graph.valid_ids()
                                                                : graph.test_ids();
  mine.reserve(static_cast<size_t>(ids.size()));
  for (int64_t gid : ids) mine.push_back({graph.original_ids()[gid - graph.first_node()], gid});
  return mine;
}

std::vector<store::SeedId> split_ids(Session& session, Split split) {
  if (session.role() == Role::kTrainer) return session.job_ids(split);
  std::vector<store::SeedId> mine = own_split_ids(session.graph(), split);
  if (session.graph().replicated()) return mine;
  return session.collectives().allgather(mine);
}

}  // namespace partita::runtime
