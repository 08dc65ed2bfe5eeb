#include "partita/store/dist_graph.h"

#include <algorithm>

#include "partita/core/error.h"

namespace partita::store {

DistGraph DistGraph::open(const std::string& dir, int rank, int world_size) {
  PARTITA_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, Error,
                "internal: rank {} of {} ranks", rank, world_size);
  DistGraph g;
  g.dir_ = dir;
  g.meta_ = partition::read_meta(dir);
  const int parts = g.meta_.num_parts;
  PARTITA_CHECK(parts == world_size || parts == 1, UsageError,
                "{}: has {} parts but the job has {} ranks; partition into {} parts (one per "
                "rank) or 1 part (replicated mode)",
                dir, parts, world_size, world_size);
  g.replicated_ = parts == 1 && world_size > 1;
  g.rank_ = rank;
  g.world_size_ = world_size;
  const int part = parts == 1 ? 0 : rank;
  g.files_ = partition::open_part(dir, g.meta_, part);
  g.first_ = g.meta_.ranges[part];
  g.end_ = g.meta_.ranges[part + 1];
  g.node_map_ = NpyArray::open(dir + "/" + partition::kNodeMapFile);
  g.node_map_.expect(DType::kInt64, 1);
  PARTITA_CHECK(g.node_map_.dim(0) == g.meta_.num_nodes, FormatError,
                "{}/{}: holds {} ids, the partition has {} nodes", dir, partition::kNodeMapFile,
                g.node_map_.dim(0), g.meta_.num_nodes);
  return g;
}

int DistGraph::owner_rank(int64_t gid) const {
  PARTITA_CHECK(gid >= 0 && gid < meta_.num_nodes, Error, "node id {} is outside [0, {})", gid,
                meta_.num_nodes);
  if (meta_.num_parts == 1) return rank_;
  return meta_.owner(gid);
}

ArrayView<const int64_t> DistGraph::original_ids() const {
  return node_map_.view<int64_t>().subview(first_, end_ - first_);
}

}  // namespace partita::store
